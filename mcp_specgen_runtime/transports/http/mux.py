"""One legacy HTTP session as a `Transport`: POST bodies in, messages routed out.

A legacy (2025) Streamable HTTP session is one JSON-RPC conversation spread
over many HTTP requests, so it runs on one `Connection` whose transport is a
`SessionMux`:

- `feed()` hands the engine the messages of a POST body, and registers the
  POST as the stream that answers the requests among them;
- `send()` routes each outgoing message: a response goes to the POST that
  carried its request (which then stops being a destination); a notification
  or request sent while a handler serves request X goes to X's POST stream
  (so progress and server→client requests reach the client on the request's
  own SSE stream); anything else, what a handler's leftover tasks send after
  its response included, goes to the standalone GET stream when one is open,
  and is dropped (and logged) otherwise.
- Tasks (2025-11-25): a message of a task (its `_meta` names the task with
  `io.modelcontextprotocol/related-task`) whose request's POST is over goes
  to an open `tasks/result` POST of that task, else to the GET stream. A
  task's request to the client that has neither waits (is parked) until
  one opens: the specification's requestor calls `tasks/result` when it
  sees `input_required`, and the server answers on that stream. Until the
  client answers it, such a request is re-parked when the stream it went out
  on ends (the client may drop a stream unread), and dropped when the server
  cancels it (`notifications/cancelled`: the task ended, expired, or gave up
  waiting), the client never hearing of one it was never sent.

Streams are unbounded in-process channels (`channel.py`), so the engine never
waits on a slow HTTP client; a POST whose client went away stops being a destination.

A request stays in flight until its response is sent, or its cancellation
received, whether its POST is still there or not: the client going away is
not cancellation, so a new request reusing the id before then is refused
(`in_flight`), lest it get the old one's response.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import msgspec

from mcp_specgen_runtime.jsonrpc.connection import request_in_progress
from mcp_specgen_runtime.jsonrpc.envelope import error_reply
from mcp_specgen_runtime.protocol.tasks.meta import META_RELATED_TASK

from ...errors import RpcError
from .channel import Channel

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mcp_specgen_runtime.jsonrpc.connection import RequestId

__all__ = ["ResponseStream", "SessionMux"]

logger = logging.getLogger(__name__)

RELEASE = b""
"""Queued on a stream by `ResponseStream.release`: no message, the signal
to close its connection there."""
REQUEST_CANCELLED = -32800
"""The error ending the POST of a request its client cancelled (as in LSP)."""


class _Probe(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None


class _CancelledParams(msgspec.Struct):
    request_id: int | str | None = msgspec.field(default=None, name="requestId")


class _Cancelled(msgspec.Struct):
    params: _CancelledParams | None = None


_probe = msgspec.json.Decoder(_Probe)
_batch_probe = msgspec.json.Decoder(list[_Probe])
_cancelled_probe = msgspec.json.Decoder(_Cancelled)
CANCELLED = "notifications/cancelled"

TASK_RESULT = "tasks/result"


class _Related(msgspec.Struct):
    task_id: str | None = msgspec.field(default=None, name="taskId")


class _Meta(msgspec.Struct):
    related: _Related | None = msgspec.field(default=None, name=META_RELATED_TASK)


class _Params(msgspec.Struct):
    meta: _Meta | None = msgspec.field(default=None, name="_meta")
    task_id: str | None = msgspec.field(default=None, name="taskId")


class _TaskProbe(msgspec.Struct):
    method: str | None = None
    params: _Params | None = None


_task_probe = msgspec.json.Decoder(_TaskProbe)


def _related_task(message: bytes) -> str | None:
    """The task an outgoing request or notification belongs to."""
    try:
        params = _task_probe.decode(message).params
    except msgspec.DecodeError:
        return None
    if params is None or params.meta is None or params.meta.related is None:
        return None
    return params.meta.related.task_id


def _result_of_task(body: bytes) -> str | None:
    """The task a POSTed `tasks/result` request waits on."""
    if b'"tasks/result"' not in body:
        return None
    try:
        probe = _task_probe.decode(body)
    except msgspec.DecodeError:
        return None
    if probe.method != TASK_RESULT or probe.params is None:
        return None
    return probe.params.task_id


def _response_ids(body: bytes) -> list[RequestId]:
    """The ids of the responses in a POST body (the client's answers)."""
    try:
        if body.lstrip().startswith(b"["):
            probes = _batch_probe.decode(body)
        else:
            probes = [_probe.decode(body)]
    except msgspec.DecodeError:
        return []
    return [p.id for p in probes if p.method is None and p.id is not None]


class ResponseStream:
    """The messages bound for one HTTP response (a POST's, or the GET stream)."""

    def __init__(self, request_ids: frozenset[RequestId] = frozenset()) -> None:
        self.request_ids = request_ids
        """The requests this stream answers (empty for the GET stream)."""
        self._unanswered = set(request_ids)
        self.principal: object = None
        self.http_request: object = None
        """The POST whose response this is (its `HttpRequest`)."""
        self.resumable = False
        """Whether the app stores this stream's events and primes it, so
        its connection may be released (`release`)."""
        self.stored = False
        """Whether a task of its own stores it to its end (and forgets it
        then), whatever becomes of the response that started it."""
        self.messages: Channel[bytes] = Channel()
        """Read with `receive` (the app), written by `put`."""

    def put(self, message: bytes) -> None:
        """Queue a message; ignored once the stream is closed."""
        try:
            self.messages.send_nowait(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("a message for a closed response stream was dropped")

    def release(self) -> bool:
        """Ask for the stream's HTTP connection to be closed once what is
        queued is sent, the stream going on (the client resumes it with
        `Last-Event-ID`). Only a `resumable` stream can; whether it was."""
        if not self.resumable:
            return False
        self.put(RELEASE)
        return True

    def close(self) -> None:
        """No more messages will be put (those queued can still be read)."""
        self.messages.close_sending()

    def end(self) -> None:
        """The HTTP response is over: close both ends, dropping what is left."""
        self.messages.close_sending()
        self.messages.close()

    @property
    def unanswered(self) -> frozenset[RequestId]:
        """The requests of the stream whose response it has not carried."""
        return frozenset(self._unanswered)

    def completed_by(self, message: bytes) -> bool:
        """Note `message`, read from the stream; whether every request the
        stream answers now has its response."""
        if message.startswith(b"["):
            ids = [reply.id for reply in _batch_probe.decode(message)]
        else:
            probe = _probe.decode(message)
            ids = [probe.id] if probe.method is None else []
        self._unanswered.difference_update(ids)
        return bool(self.request_ids) and not self._unanswered


class SessionMux:
    """The transport of one legacy HTTP session's `Connection`."""

    def __init__(self) -> None:
        self._incoming: Channel[bytes] = Channel()
        self._by_request: dict[RequestId, ResponseStream] = {}
        self._serving: set[RequestId] = set()
        self.standalone: ResponseStream | None = None
        """The open GET stream, if any."""
        self.closed = False
        self._task_streams: dict[str, ResponseStream] = {}
        # Task requests to the client by request id: waiting for a stream
        # (task id, message), and sent on one, until answered or cancelled.
        self._parked: dict[RequestId, tuple[str, bytes]] = {}
        self._asked: dict[RequestId, tuple[str, bytes, ResponseStream]] = {}

    # -- from HTTP requests --

    def feed(self, body: bytes, stream: ResponseStream | None) -> None:
        """Hand the engine one POST body; `stream` answers its requests.

        Raises:
            anyio.ClosedResourceError: the session is closed.
        """
        self._incoming.send_nowait(body)
        if self._asked:
            for answered in _response_ids(body):
                self._asked.pop(answered, None)
        if stream is not None:
            for request_id in stream.request_ids:
                self._by_request[request_id] = stream
            self._serving.update(stream.request_ids)
            task_id = _result_of_task(body)
            if task_id is not None:
                self._task_streams[task_id] = stream
                self._unpark(stream, task_id)

    def open_standalone(self, stream: ResponseStream) -> None:
        """Make `stream` the GET stream; parked task requests go out on it."""
        self.standalone = stream
        self._unpark(stream, None)

    def close_standalone(self, stream: ResponseStream) -> None:
        """The GET stream `stream` has ended."""
        if self.standalone is stream:
            self.standalone = None
        self._repark(stream)
        stream.end()

    def _unpark(self, stream: ResponseStream, task_id: str | None) -> None:
        for request_id, (parked_task, message) in list(self._parked.items()):
            if task_id is None or parked_task == task_id:
                del self._parked[request_id]
                self._ask(stream, request_id, parked_task, message)

    def _ask(
        self,
        stream: ResponseStream,
        request_id: RequestId,
        task_id: str,
        message: bytes,
    ) -> None:
        stream.put(message)
        self._asked[request_id] = (task_id, message, stream)

    def _repark(self, stream: ResponseStream) -> None:
        """Park again the unanswered task requests sent on `stream`, which
        ended, and send them on at once where a stream of theirs is open."""
        for request_id, (task_id, message, found) in list(self._asked.items()):
            if found is stream:
                del self._asked[request_id]
                self._parked[request_id] = (task_id, message)
        for request_id, (task_id, message) in list(self._parked.items()):
            destination = self._task_streams.get(task_id) or self.standalone
            if destination is not None and destination is not stream:
                del self._parked[request_id]
                self._ask(destination, request_id, task_id, message)

    def in_flight(self, request_ids: Iterable[RequestId]) -> list[RequestId]:
        """Those of `request_ids` that name requests still awaiting their
        response, their POST answered or not (a POST reusing one would get
        the other's response)."""
        return [request_id for request_id in request_ids if request_id in self._serving]

    def cancelled(self, request_id: RequestId) -> None:
        """The client cancelled a request: the engine will not answer it, so
        end its POST with a -32800 error reply (the HTTP response must end;
        clients ignore answers to what they cancelled)."""
        self._serving.discard(request_id)
        stream = self._by_request.pop(request_id, None)
        if stream is not None:
            stream.put(
                error_reply(
                    request_id, RpcError(REQUEST_CANCELLED, "Request cancelled")
                )
            )

    def forget(self, stream: ResponseStream) -> None:
        """Stop routing to `stream` (its HTTP response has ended)."""
        for request_id in stream.request_ids:
            if self._by_request.get(request_id) is stream:
                del self._by_request[request_id]
        for task_id, found in list(self._task_streams.items()):
            if found is stream:
                del self._task_streams[task_id]
        self._repark(stream)
        stream.end()

    def stream_of(self, request_id: RequestId) -> ResponseStream | None:
        """The POST stream answering a request, while it does."""
        return self._by_request.get(request_id)

    def principal_of(self, request_id: RequestId) -> object:
        """What the app's authentication hook returned for a request's POST."""
        stream = self._by_request.get(request_id)
        return None if stream is None else stream.principal

    def http_request_of(self, request_id: RequestId) -> object:
        """The `HttpRequest` of a request's POST."""
        stream = self._by_request.get(request_id)
        return None if stream is None else stream.http_request

    # -- the Transport protocol --

    async def receive(self) -> bytes:
        """The next message POSTed to the session."""
        try:
            return await self._incoming.receive()
        except anyio.EndOfStream:
            raise anyio.EndOfStream from None

    async def send(self, message: bytes) -> None:
        """Route one outgoing message (see the module docstring)."""
        if self.closed:
            raise anyio.ClosedResourceError
        if (self._parked or self._asked) and self._withdrawn(message):
            return
        stream = self._destination(message)
        task_id = _related_task(message)
        request_id = _probe.decode(message).id if task_id is not None else None
        if task_id is None or request_id is None or message.startswith(b"["):
            if stream is None:
                logger.info(
                    "no open stream for a server message; dropped: %.200r", message
                )
            else:
                stream.put(message)
        elif stream is None:
            self._parked[request_id] = (task_id, message)
        else:
            self._ask(stream, request_id, task_id, message)

    def _withdrawn(self, message: bytes) -> bool:
        """A cancellation of a task request: sent on the stream the request
        went out on, or not at all when the client was never sent it; whether
        it was one (handled)."""
        if CANCELLED.encode() not in message:
            return False
        try:
            probe = _probe.decode(message)
            params = _cancelled_probe.decode(message).params
        except msgspec.DecodeError:
            return False
        if probe.method != CANCELLED or params is None or params.request_id is None:
            return False
        asked = self._asked.pop(params.request_id, None)
        if asked is not None:
            asked[2].put(message)
            return True
        return self._parked.pop(params.request_id, None) is not None

    def _destination(self, message: bytes) -> ResponseStream | None:
        # A response is the last message of its request's stream: the request
        # stops being a destination, so what its handler's leftover tasks send
        # afterwards goes to the GET stream instead of a finished response.
        if message.startswith(b"["):
            replies = _batch_probe.decode(message)
            ids = [reply.id for reply in replies if reply.id is not None]
            self._serving.difference_update(ids)
            found = [self._by_request.pop(i, None) for i in ids]
            return next((stream for stream in found if stream is not None), None)
        probe = _probe.decode(message)
        if probe.method is None:
            if probe.id is None:
                return None
            self._serving.discard(probe.id)
            return self._by_request.pop(probe.id, None)
        context = request_in_progress()
        if context is not None:
            stream = self._by_request.get(context.request_id)
            if stream is not None:
                return stream
        if self._task_streams:
            task_id = _related_task(message)
            if task_id is not None and task_id in self._task_streams:
                return self._task_streams[task_id]
        return self.standalone

    async def aclose(self) -> None:
        """End the session: the engine sees end of stream, streams close."""
        self.closed = True
        self._incoming.close_sending()
        self._incoming.close()
        for stream in {*self._by_request.values()}:
            stream.close()
        self._by_request.clear()
        self._serving.clear()
        self._task_streams.clear()
        self._parked.clear()
        self._asked.clear()
        if self.standalone is not None:
            self.standalone.close()

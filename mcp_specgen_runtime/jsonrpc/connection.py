"""The JSON-RPC 2.0 engine: one `Connection` per peer, for servers and clients alike.

Each incoming message is decoded in one msgspec pass into an envelope whose
`params`, `result` and `error.data` stay raw JSON until the method (or the
awaited result type) is known; the handler then decodes params once, straight
into the exact type. Bad input is answered with the spec's error and the
connection keeps serving. Each request runs in a task of its own, served by
`serving.serve_request` (`ping` answered `{}` when the handler does not serve
it; a handler's `SystemExit` or other `BaseException` fails its request
alone, -32603; only cancellation passes through).

Decisions worth knowing:

- Outgoing request ids are integers counting up from 1.
- `request(..., timeout=...)` raises `RequestTimeoutError`, a `TimeoutError`
  (and an `McpError`), after sending `notifications/cancelled`.
- End of stream fails pending requests with `TransportError`, gives handlers
  still running `drain_timeout` seconds to send their replies (nothing a peer
  sent before closing is dropped unanswered), then cancels them, and `run()`
  returns; `aclose` cancels at once.
- At most `max_in_flight` of the peer's requests are served at once; one
  more is answered -32603 at once (data `{"maxInFlight": N}`), while
  notifications, `notifications/cancelled` first, are still served. When as
  many of the engine's own answers (errors, refusals) wait to be written, it
  stops reading until some are: a peer that floods without reading costs
  bounded memory.
- Input msgspec cannot read at all is answered too: no JSON (trailing
  bytes, a BOM...) is -32700 with id null; invalid UTF-8 in the envelope's
  members, or nesting too deep to decode, -32600 with the id when one can be
  found. A message the transport skipped as too large is answered by the id
  read from its first and last bytes: -32600 for a request, and a response
  fails the request of ours it answers with `MessageTooLargeError`.
- A malformed response cannot be answered with its id (that id names one of our
  own requests, not one of the peer's), so it gets -32600 with id null, and the
  request it names fails with `ProtocolError`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import typing
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec
from msgspec import Raw, UnsetType

from mcp_specgen_runtime.codec.wire import decode, encode
from mcp_specgen_runtime.errors import (
    ErrorCode,
    McpError,
    MessageTooLargeError,
    ProtocolError,
    RequestTimeoutError,
    RpcError,
    TransportError,
)

from .envelope import (
    NONE,
    UNREADABLE,
    BadMessage,
    CancelParams,
    Envelope,
    OutNotification,
    OutRequest,
    RequestId,
    decode_envelope,
    decode_item,
    encoder,
    error_reply,
    invalid,
    locate,
    message_decoder,
)
from .id_scan import scan_id
from .serving import (
    Handler,
    NotificationFit,
    Peer,
    RequestContext,
    current_request,
    request_in_progress,
    serve_notification,
    serve_request,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from types import TracebackType
    from typing import Self

    from anyio.abc import TaskGroup

    from .transport import Pushing, Transport

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "Connection",
    "Handler",
    "NotificationFit",
    "Peer",
    "RequestContext",
    "RequestId",
    "RequestTimeoutError",
    "current_request",
    "request_in_progress",
    "serve_notification",
    "serve_request",
]

T = TypeVar("T")

logger = logging.getLogger(__name__)

CANCELLED = "notifications/cancelled"
DEFAULT_DRAIN_TIMEOUT = 2.0
"""Seconds running requests get to reply after end of stream (a stdio client
waits 2 s after closing stdin before SIGTERM)."""
CANCEL_NOTICE_TIMEOUT = 5.0
"""Seconds a cancelled or timed-out request may spend telling the peer so."""
DEFAULT_MAX_IN_FLIGHT = 1000
"""Requests a peer may have in flight on one connection. Each costs a few KiB
while it runs (about 7 KiB for a call that never ends), so a peer pipelining
without bound cannot take the server's memory; clients keep far fewer in
flight (the official SDKs send one request per caller)."""


# --- the connection -----------------------------------------------------------


class _Pending:
    """An outgoing request waiting for its response."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = anyio.Event()
        self.response: Envelope | None = None
        self.failure: McpError | None = None


class _Incoming:
    """A request being served: its context, and the cancel scope its handler
    runs in (an anyio scope, so handlers' shielded cleanup stays shielded)."""

    __slots__ = ("context", "params", "scope")

    def __init__(self, context: RequestContext, params: bytes | None) -> None:
        self.context = context
        self.params = params
        self.scope = anyio.CancelScope()

    def cancel(self) -> None:
        self.scope.cancel()


class Connection:
    """A JSON-RPC 2.0 peer over a transport: sends requests and serves the other
    side's, many in flight both ways.

    Use it as an async context manager, which runs the reader in a task group
    and closes the transport on exit::

        async with Connection(transport, Dispatcher(handlers).dispatch) as conn:
            result = await conn.request("tools/list", params, ListToolsResult)

    or call `run()` yourself (it returns at end of stream).

    Args:
        transport: carries the messages; see `transports.base.Transport`.
        handler: serves incoming requests and notifications; None answers
            every request with -32601 (except `ping`).
        allow_batches: accept JSON arrays of messages (revision 2025-03-26
            only); may be changed once the revision is negotiated.
        drain_timeout: at end of stream, seconds the requests still running
            get to finish and send their replies (the peer may have closed
            only its sending side, as a stdio client closing stdin does);
            then they are cancelled.
        max_in_flight: the peer's requests served at once; more are refused
            with -32603 until some finish.
        first_request_id: the id of the first request sent, the next ones
            counting up (a session that may move between processes starts
            at a random one, so that an answer meant for another process's
            request never resolves one of this connection's).

    Raises:
        ValueError: `max_in_flight` is not positive.
    """

    def __init__(
        self,
        transport: Transport,
        handler: Handler | None = None,
        *,
        allow_batches: bool = False,
        drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        first_request_id: int = 1,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be positive: {max_in_flight}")
        self.transport = transport
        self.handler = handler
        self.allow_batches = allow_batches
        self.fit_notification: NotificationFit | None = None
        """Fits every notification `notify` sends to the peer's revision
        (None: sent as given); set once the revision is negotiated."""
        self.drain_timeout = drain_timeout
        self.max_in_flight = max_in_flight
        # A transport that authenticates its peer names who sent each request.
        self._principal_of: Callable[[RequestId], object] | None = getattr(
            transport, "principal_of", None
        )
        self._http_request_of: Callable[[RequestId], object] | None = getattr(
            transport, "http_request_of", None
        )
        # Made when end of stream waits for running requests (not once per
        # request: an event costs more than the rest of the bookkeeping).
        self._drained: anyio.Event | None = None
        self._ended = False
        self._ids = itertools.count(first_request_id)
        self._pending: dict[int, _Pending] = {}
        self._in_flight: dict[RequestId, _Incoming] = {}
        self._answering = 0  # answers of the engine's own not yet sent
        self._answered = anyio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._request_tasks: set[asyncio.Task[None]] = set()
        self._pushing: Pushing | None = None
        self._tasks: TaskGroup | None = None
        self._started = False
        self._closed = False
        self._stopped = anyio.Event()
        self._stack: AsyncExitStack | None = None

    # -- lifecycle --

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        tasks = await stack.enter_async_context(anyio.create_task_group())
        tasks.start_soon(self.run)
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._stack is not None
        stack, self._stack = self._stack, None
        with anyio.CancelScope(shield=True):
            await self.aclose()
        # The reader has stopped, so leaving the task group cannot block; and
        # leaving it without the body's error lets that propagate as itself,
        # not wrapped in an exception group.
        await stack.aclose()

    async def run(self) -> None:
        """Read and serve messages until end of stream or `aclose()`.

        On the way out, pending requests fail with `TransportError`, handlers
        still running are cancelled and the transport is closed.
        """
        if self._started:
            raise RuntimeError("the connection is already running")
        self._started = True
        self._loop = _asyncio_loop()
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                if not self._closed:
                    await self._read()
                    await self._drain()
                tasks.cancel_scope.cancel()
        finally:
            self._shut_down()
            with anyio.CancelScope(shield=True):
                if self._request_tasks:
                    await asyncio.wait(
                        self._request_tasks, timeout=CANCEL_NOTICE_TIMEOUT
                    )
                await self.transport.aclose()
            self._stopped.set()

    async def aclose(self) -> None:
        """Stop serving, fail pending requests and close the transport."""
        if self._tasks is not None:
            self._tasks.cancel_scope.cancel()
        self._shut_down()
        await self.transport.aclose()

    async def wait_closed(self) -> None:
        """Wait until `run()` has finished (the peer closed, or `aclose()`)."""
        await self._stopped.wait()

    @property
    def closed(self) -> bool:
        """Whether the connection has stopped, or its peer has ended the
        stream: no request can be sent (replies and notifications may still
        go out while running requests drain)."""
        return self._closed or self._ended

    async def _drain(self) -> None:
        """After end of stream: fail our pending requests (no response can
        come), then give running handlers `drain_timeout` to reply."""
        self._ended = True
        self._fail_pending()
        if self._in_flight:
            self._drained = anyio.Event()
            with anyio.move_on_after(self.drain_timeout):
                await self._drained.wait()

    def _fail_pending(self, reason: str = "the connection closed") -> None:
        pending = list(self._pending.values())
        self._pending.clear()
        for waiter in pending:
            waiter.failure = TransportError(reason)
            waiter.done.set()

    def fail_pending(self, reason: str) -> None:
        """Fail the requests sent and still waiting for their response
        (`TransportError(reason)`): their answers will not come here."""
        self._fail_pending(reason)

    def _shut_down(self) -> None:
        self._closed = True
        self._fail_pending()
        for incoming in self._in_flight.values():
            incoming.cancel()
        self._in_flight.clear()

    # -- sending --

    async def request(
        self,
        method: str,
        params: Any,
        result_type: type[T] | Any,
        *,
        # A parameter, not the caller's fail_after, so that the error can name
        # the request and the peer is told why it was cancelled.
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> T:
        """Send a request and wait for its result, decoded as `result_type`.

        `params` (a generated Struct, builtins, or None for no params) is
        encoded with `wire.encode`. On timeout or cancellation the peer is sent
        `notifications/cancelled`, and a late response is dropped.

        Raises:
            RpcError: the peer answered with an error response.
            RequestTimeoutError: no response within `timeout` seconds.
            ProtocolError: the result does not fit `result_type`, or the
                response was malformed.
            TransportError: the connection closed before the response arrived.
        """
        if self.closed:
            raise TransportError("the connection is closed")
        request_id = next(self._ids)
        waiter = self._pending[request_id] = _Pending(method)
        message = OutRequest(id=request_id, method=method, params=_raw(params))
        sent = False
        try:
            with anyio.fail_after(timeout):
                await self._send(encoder.encode(message))
                sent = True
                await waiter.done.wait()
        except TimeoutError:
            if not waiter.done.is_set():
                if sent:
                    await self._cancel_outgoing(request_id, "timed out")
                assert timeout is not None
                raise RequestTimeoutError(method, request_id, timeout) from None
        except anyio.get_cancelled_exc_class():
            if sent and not waiter.done.is_set():
                await self._cancel_outgoing(request_id, "cancelled by the sender")
            raise
        finally:
            self._pending.pop(request_id, None)
        return typing.cast("T", self._result(method, waiter, result_type))

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification; `params` as for `request`.

        Raises:
            TransportError: the connection is closed.
        """
        if self._closed:
            raise TransportError("the connection is closed")
        fit = self.fit_notification
        if fit is not None:
            params = fit(method, params)
        message = OutNotification(method=method, params=_raw(params))
        await self._send(encoder.encode(message))

    @staticmethod
    def _result(method: str, waiter: _Pending, result_type: Any) -> Any:
        if waiter.failure is not None:
            raise waiter.failure
        response = waiter.response
        assert response is not None
        if not isinstance(response.error, UnsetType):
            error = response.error
            data = msgspec.json.decode(error.data) if len(error.data) else None
            raise RpcError(error.code, error.message, data)
        try:
            return decode(bytes(response.result), result_type)
        except msgspec.DecodeError as exc:  # ValidationError included
            name = getattr(result_type, "__name__", repr(result_type))
            raise ProtocolError(f"the result of {method} is no {name}: {exc}") from None

    async def _cancel_outgoing(self, request_id: int, reason: str) -> None:
        params = {"requestId": request_id, "reason": reason}
        with anyio.move_on_after(CANCEL_NOTICE_TIMEOUT, shield=True):
            try:
                await self.notify(CANCELLED, params)
            except TransportError:
                logger.debug("cannot cancel request %s: connection closed", request_id)

    async def _send(self, message: bytes) -> None:
        try:
            await self.transport.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise TransportError(f"cannot send: {exc!r}") from exc

    async def _send_quietly(self, message: bytes) -> None:
        try:
            await self._send(message)
        except TransportError as exc:
            logger.debug("reply not sent: %s", exc)

    # -- receiving --

    async def _read(self) -> None:
        if self._loop is not None and await self._read_pushed():
            return
        while True:
            try:
                data = await self.transport.receive()
            except Exception as exc:
                if isinstance(exc, MessageTooLargeError):
                    self._on_too_large(exc)
                    continue
                if self._ended_by(exc):
                    return
                raise
            self._on_pushed(data)
            while self._answering >= self.max_in_flight:
                # The peer floods us faster than it reads our answers: stop
                # reading rather than queue answers without bound.
                self._answered = anyio.Event()
                await self._answered.wait()

    async def _read_pushed(self) -> bool:
        """Serve the messages a transport pushes as it reads them (on asyncio,
        where it can: see `Transport`); False when it cannot."""
        push = getattr(self.transport, "push", None)
        if push is None:
            return False
        pushing = push(self._on_pushed, self._on_too_large)
        if pushing is None:
            return False
        self._pushing = pushing
        try:
            ended = await pushing.ended
        finally:
            self._pushing = None
            pushing.stop()
        if not self._ended_by(ended):
            logger.warning("reading stopped: %r", ended)
        return True

    def _on_pushed(self, data: bytes) -> None:
        try:
            self._on_message(data)
        except Exception:
            # A bug here must not take the whole connection down.
            logger.exception("failed to process an incoming message")
        if self._pushing is not None and self._answering >= self.max_in_flight:
            self._pushing.pause()  # resumed as answers are sent

    @staticmethod
    def _ended_by(exc: BaseException) -> bool:
        """Log why reading ended; False for what does not end it."""
        if isinstance(exc, anyio.EndOfStream):
            logger.debug("end of stream")
        elif isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError):
            logger.debug("transport closed: %r", exc)
        elif isinstance(exc, TransportError | OSError):
            logger.warning("transport failed: %r", exc)
        else:
            return False
        return True

    def _on_too_large(self, exc: MessageTooLargeError) -> None:
        """The transport skipped a message: answer it by the id its ends show
        (-32600), or fail the request of ours it was the response to."""
        logger.warning("incoming message skipped: %s", exc)
        bad = invalid(str(exc))
        locate(bad, scan_id(exc.head, exc.tail))
        if isinstance(bad.response_id, int):
            waiter = self._pending.pop(bad.response_id, None)
            if waiter is not None:
                waiter.failure = MessageTooLargeError(
                    f"the response to {waiter.method} (id {bad.response_id}) "
                    f"was skipped: {exc}",
                    exc.limit,
                )
                waiter.done.set()
        self._answer_soon(self._send_quietly, bad.reply())

    def _on_message(self, data: bytes) -> None:
        """Classify one message and start whatever it needs (never awaits, so
        a cancellation always finds the request it names registered)."""
        try:
            message = decode_envelope(data, message_decoder)
            if isinstance(message, list):
                self._on_batch(message)
                return
            outcome = self._accept(message)
        except BadMessage as bad:
            outcome = self._reject(bad)
        if isinstance(outcome, bytes):
            self._answer_soon(self._send_quietly, outcome)
        elif outcome is not None:
            self._start(outcome)

    def _on_batch(self, items: list[Raw]) -> None:
        if not self.allow_batches:
            reason = "batches are not supported by the negotiated protocol revision"
            self._answer_soon(self._send_quietly, invalid(reason).reply())
            return
        if not items:
            self._answer_soon(self._send_quietly, invalid("empty batch").reply())
            return
        replies: list[bytes] = []
        jobs: list[_Incoming] = []
        for item in items:
            try:
                outcome = self._accept(decode_item(item))
            except BadMessage as bad:
                outcome = self._reject(bad)
            if isinstance(outcome, bytes):
                replies.append(outcome)
            elif outcome is not None:
                jobs.append(outcome)
        if replies or jobs:
            self._answer_soon(self._answer_batch, replies, jobs)

    def _reject(self, bad: BadMessage) -> bytes:
        if isinstance(bad.response_id, int):
            waiter = self._pending.pop(bad.response_id, None)
            if waiter is not None:
                waiter.failure = ProtocolError(f"malformed response: {bad.message}")
                waiter.done.set()
        logger.warning("bad message: %s", bad.message)
        return bad.reply()

    def _accept(self, env: Envelope) -> bytes | _Incoming | None:
        """Take a valid message: an error reply to send, a request to serve, or
        None when nothing is to be answered."""
        if isinstance(env.method, UnsetType):
            self._on_response(env)
            return None
        params = bytes(env.params) if len(env.params) else None
        if isinstance(env.id, UnsetType):
            if env.method == CANCELLED:
                self._cancel_incoming(params)
            self._spawn(self._notified, env.method, params)
            return None
        request_id = env.id
        assert request_id is not None
        if request_id in self._in_flight:
            # The id is readable, so JSON-RPC answers with it (null is for ids
            # that cannot be determined), though it names the earlier request.
            reused = invalid(f"request id {request_id!r} is already in use", request_id)
            return reused.reply()
        if len(self._in_flight) >= self.max_in_flight:
            return self._over_limit(request_id)
        context = RequestContext(self, request_id, env.method, None)
        context.token_from(params)
        if self._principal_of is not None:
            context.principal = self._principal_of(request_id)
        if self._http_request_of is not None:
            context.http_request = self._http_request_of(request_id)
        incoming = self._in_flight[request_id] = _Incoming(context, params)
        return incoming

    def _over_limit(self, request_id: RequestId) -> bytes:
        limit = self.max_in_flight
        logger.warning("refused request %r: %d requests in flight", request_id, limit)
        busy = RpcError(
            ErrorCode.INTERNAL_ERROR,
            f"Too many requests: {limit} requests in flight already, the most "
            "this connection serves at once (the server's max_in_flight); "
            "retry when some are answered",
            {"maxInFlight": limit},
        )
        return error_reply(request_id, busy)

    def _on_response(self, env: Envelope) -> None:
        waiter = None
        if isinstance(env.id, int):
            waiter = self._pending.pop(env.id, None)
        if waiter is None:
            if env.id is None and not isinstance(env.error, UnsetType):
                logger.warning(
                    "peer reported an error: %s (%s)", env.error.message, env.error.code
                )
            else:
                logger.debug("dropped a response to no pending request: %r", env.id)
            return
        waiter.response = env
        waiter.done.set()

    def _cancel_incoming(self, params: bytes | None) -> None:
        try:
            cancel = msgspec.json.decode(params or b"{}", type=CancelParams)
        except UNREADABLE:
            logger.debug("ignored a malformed cancellation")
            return
        if isinstance(cancel.request_id, UnsetType):
            return
        incoming = self._in_flight.pop(cancel.request_id, None)
        if incoming is None:
            logger.debug("ignored a cancellation of %r", cancel.request_id)
            return
        incoming.cancel()

    # -- serving --

    def _spawn(
        self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any
    ) -> None:
        assert self._tasks is not None
        self._tasks.start_soon(func, *args)

    def _answer_soon(
        self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any
    ) -> None:
        """Send an answer of the engine's own (an error, a batch) in a task,
        counted until it is sent."""
        self._answering += 1
        self._spawn(self._counted, func, *args)

    async def _counted(
        self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any
    ) -> None:
        try:
            await func(*args)
        finally:
            self._answering -= 1
            self._answered.set()
            if self._pushing is not None and self._answering < self.max_in_flight:
                self._pushing.resume()

    def _start(self, incoming: _Incoming) -> None:
        """Serve a request in a task of its own.

        On asyncio that is a plain task (spawning one through anyio's task
        group costs several times more, per request), awaited when the
        connection stops; other backends use the task group.
        """
        if self._loop is None:
            self._spawn(self._reply_with, incoming)
            return
        task = self._loop.create_task(self._reply_with(incoming))
        self._request_tasks.add(task)
        task.add_done_callback(self._request_done)

    def _request_done(self, task: asyncio.Task[None]) -> None:
        self._request_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("serving a request failed", exc_info=task.exception())

    async def _reply_with(self, incoming: _Incoming) -> None:
        reply = await self._serve(incoming)
        if reply is not None:
            await self._send_quietly(reply)

    async def _answer_batch(self, replies: list[bytes], jobs: list[_Incoming]) -> None:
        async def collect(incoming: _Incoming) -> None:
            reply = await self._serve(incoming)
            if reply is not None:
                replies.append(reply)

        async with anyio.create_task_group() as tasks:
            for incoming in jobs:
                tasks.start_soon(collect, incoming)
        if replies:
            await self._send_quietly(b"[" + b",".join(replies) + b"]")

    async def _serve(self, incoming: _Incoming) -> bytes | None:
        """Run the handler of one request; the reply, or None once cancelled."""
        context = incoming.context
        reply: bytes | None = None
        with incoming.scope:
            reply = await serve_request(self.handler, context, incoming.params)
        # A cancellation that arrived first removed the entry: stay silent.
        if self._in_flight.get(context.request_id) is not incoming:
            return None
        del self._in_flight[context.request_id]
        if not self._in_flight and self._drained is not None:
            self._drained.set()
        return reply

    async def _notified(self, method: str, params: bytes | None) -> None:
        await serve_notification(self.handler, method, params)


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or None on another backend (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _raw(params: Any) -> Raw:
    return NONE if params is None else Raw(encode(params))

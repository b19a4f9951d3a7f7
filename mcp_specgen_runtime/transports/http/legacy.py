"""Legacy sessions on this instance: `LegacySessions`, the part of
`McpHttpApp` that serves a legacy POST (opening a session on `initialize`,
answering as JSON or SSE, storing resumable streams), the standalone GET
stream, resuming with `Last-Event-ID`, and DELETE; a session held by another
instance of a cluster is handed to `ClusterMember`.

A POST: `initialize` creates a session (its id in `Mcp-Session-Id`); later
requests must carry that id (400 without, 404 for an unknown or expired one)
and a supported `MCP-Protocol-Version` (absent: the negotiated one); the id of
a request still in flight in the session cannot be reused (400, -32600 with
that id), even once its POST is gone; a malformed response still reaches the
session, failing the request of the server's it answers. Each session is one
`Connection` over a `SessionMux`; a POST of only notifications or responses
gets 202. A client that goes away ends its POST's answer but not the request
(legacy disconnection is not cancellation); a session ended while a POST waits
answers it 404. A GET opens the session's standalone SSE stream (405 with
`Allow` for a server without legacy revisions; 409 for a second one); it ends,
complete, when the session does. A DELETE ends the session.

A legacy session belongs to the principal that opened it (what `authenticate`
returned, compared with ==; None for all without the hook): to any other its
id is unknown (404, as the spec's advice to key sessions by user implies, and
telling nothing of its existence). Sessions expire after `idle_timeout_s`
unused; at most `max_sessions` live at once (503 beyond), and
`max_sessions_per_principal` per principal: at its cap, a principal's least
recently used session without a request in flight is ended to make room (503
when all are busy), so a client flooding `initialize` only evicts its own.
With `resumable` (the default), SSE events carry ids kept in the event
store, and a GET with `Last-Event-ID` replays what followed them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.meta import META_PROTOCOL_VERSION
from mcp_specgen_runtime.stores.events import (
    EventsEvictedError,
    UnknownEventError,
    parse_event_id,
)

from .answers import (
    PRIME_AFTER_S,
    PRIMING_VERSIONS,
    QUICK_ANSWER_S,
    UNREAD,
    Refused,
    Unread,
    answer_post,
    next_message_within,
    read_first,
    refuse,
    stream_events,
    write_answer,
    write_stored,
)
from .asgi import respond, start_sse
from .auth import current_request, request_principal
from .cluster import unreachable
from .forwarding import ClusterMember
from .headers import (
    LAST_EVENT_ID_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
    HttpError,
    HttpHeaders,
    protocol_version,
)
from .messages import (
    Batch,
    answer_ids,
    cancelled_ids,
    initialize_of,
    params_of,
    request_id,
)
from .mux import RELEASE, ResponseStream, SessionMux
from .relay import quietly
from .resumable import StoredStream, sse_event
from .sessions import (
    LegacySession,
    SessionLimitError,
    first_request_id,
    is_valid_session_id,
)

if TYPE_CHECKING:
    from collections.abc import (
        Coroutine,
        Mapping,
    )

    from mcp_specgen_runtime.jsonrpc.envelope import Envelope
    from mcp_specgen_runtime.stores.events import EventStore


logger = logging.getLogger(__name__)


class LegacySessions(ClusterMember):
    """The legacy session side of `McpHttpApp` (one of its bases)."""

    # The app's state these methods read besides `ClusterMember`'s (set by
    # `McpHttpApp.__init__`).
    event_store: EventStore | None
    stateless: bool
    _tasks: set[asyncio.Task[None]]

    if TYPE_CHECKING:  # defined by the app

        def _allowed(self) -> str: ...

    def _hand_over(self, headers: HttpHeaders, body: bytes, principal: object) -> None:
        """Give a malformed response to the legacy session it was POSTed to:
        its engine fails the request of the server's it answers."""
        session_id = headers.get(SESSION_HEADER)
        state = None if session_id is None else self.sessions.get(session_id, principal)
        if state is not None:
            with contextlib.suppress(anyio.ClosedResourceError):
                state.mux.feed(body, None)

    async def _post_legacy(
        self,
        headers: HttpHeaders,
        body: bytes,
        message: Envelope | Batch,
        receive: Any,
        send: Any,
        principal: object,
    ) -> None:
        initialize = initialize_of(message)
        if not self.session.legacy_versions:
            if initialize is not None:
                # Name the versions served, so a legacy client can tell why.
                offered = params_of(initialize).get("protocolVersion")
                error = self.session.unsupported(offered)
                unsupported = HttpError(400, error.message, error.code, error.data)
                reply = unsupported.body(request_id(initialize))
                await respond(send, 400, reply, "application/json")
                return
            raise refuse(
                400, f"requests must carry params._meta[{META_PROTOCOL_VERSION!r}]"
            )
        session_id = headers.get(SESSION_HEADER)
        if initialize is not None:
            if request_id(initialize) is None:
                raise refuse(400, "initialize is a request: it needs an id")
            session_id, state = await self._open_session(principal)
            if self.cluster is not None:
                await self._announce(session_id, state, principal, initialize)
        else:
            if session_id is None:
                raise refuse(400, "Bad Request: the Mcp-Session-Id header is required")
            found = await self._find(session_id, principal)
            if isinstance(found, str):
                await self._forward_post(
                    found, session_id, headers, body, message, receive, send, principal
                )
                return
            state = found
            version = protocol_version(
                headers,
                self.session.legacy_versions,
                negotiated=state.handler.protocol_version,
            )
            if isinstance(version, HttpError):
                raise Refused(version)
            if isinstance(message, Batch) and not state.connection.allow_batches:
                raise refuse(
                    400, "batches are not supported by the negotiated protocol revision"
                )
        ids = answer_ids(message)
        taken = state.mux.in_flight(ids)
        if taken:
            reused = refuse(400, f"request id {taken[0]!r} is already in flight")
            reused.reply_id = taken[0]  # readable: JSON-RPC answers with it
            raise reused
        stream = ResponseStream(ids) if ids else None
        if stream is not None:
            stream.principal = principal
            stream.http_request = current_request.get()
            stream.resumable = (
                self.event_store is not None
                and state.handler.protocol_version in PRIMING_VERSIONS
            )
        try:
            state.mux.feed(body, stream)
        except anyio.ClosedResourceError:
            raise refuse(404, "Session not found (closed)") from None
        for cancelled in cancelled_ids(message):
            state.mux.cancelled(cancelled)
        extra = {SESSION_HEADER: session_id}
        if stream is None:
            # Invalid items of a batch without requests: answered here (their
            # ids are null), as a single invalid message is.
            replies = message.replies() if isinstance(message, Batch) else []
            if replies:
                body = b"[" + b",".join(replies) + b"]"
                await respond(send, 400, body, "application/json", extra)
                return
            await respond(send, 202, b"", None, extra)
            return
        with self.sessions.use(session_id, principal):
            try:
                await self._answer_legacy(state, stream, receive, send, extra)
            finally:
                # A stored stream outlives its response, even a cancelled
                # one (a shutdown's grace over): its pump forgets it.
                if not stream.stored:
                    state.mux.forget(stream)

    async def _answer_legacy(
        self,
        state: LegacySession,
        stream: ResponseStream,
        receive: Any,
        send: Any,
        extra: Mapping[str, str],
    ) -> bool:
        """Answer a legacy POST. A client going away ends the answer, not the
        request. With resumable streams an SSE answer is stored to its end,
        whether its client is there or not, so a resumed stream gets it: its
        own task then stores it (True: `stream` was handed over to it), and
        the POST, gone, holds the session no longer."""
        store = self.event_store
        if store is None:
            await answer_post(stream, receive, send, extra, on_disconnect=stream.close)
            return False
        prime = state.handler.protocol_version in PRIMING_VERSIONS
        wait_s = PRIME_AFTER_S if prime else QUICK_ANSWER_S
        first = await next_message_within(stream, wait_s)
        if isinstance(first, Unread) and not prime:
            # No priming event to give: nothing is resumable before the
            # first message, which may still be the whole (JSON) answer.
            first = await read_first(stream, receive)
        released = first == RELEASE
        if released:
            first = UNREAD
        if first is None or (isinstance(first, bytes) and stream.completed_by(first)):
            await write_answer(stream, send, extra, None, first)
            return False
        try:
            stored = await self._stored(state, stream)
        except Exception as error:
            if self.cluster is None or not unreachable(error):
                raise
            # The answer cannot be stored: send it as it comes, unresumable.
            logger.warning("the event store is unreachable: %s", error)
            await write_answer(stream, send, extra, None, first)
            return False
        listener = stored.attach()
        head = b""
        if prime:
            head = sse_event(await stored.prime(), None, self.retry_ms)
        first_message = first if isinstance(first, bytes) else None
        if released:
            stored.release()  # the listener ends after the priming event
        pump = self._spawn(self._pump(state, stored, first_message))
        if self.cluster is not None:  # a graceful shutdown lets it finish
            self._answering.add(pump)
            pump.add_done_callback(self._answering.discard)
        await write_stored(stored, listener, receive, send, extra, head)
        return True

    async def _pump(
        self, state: LegacySession, stored: StoredStream, first: bytes | None = None
    ) -> None:
        """Store a resumable stream to its end, then stop routing to it."""
        try:
            await stored.pump(first)
        finally:
            self._live.pop(stored.id, None)
            if self.cluster is not None:
                await self._end_stream(stored)
            if state.standalone is stored:
                state.standalone = None
                state.mux.close_standalone(stored.source)
            elif stored.source.request_ids:
                state.mux.forget(stored.source)
            else:  # a replaced GET stream
                state.mux.close_standalone(stored.source)

    async def _stored(
        self, state: LegacySession, stream: ResponseStream
    ) -> StoredStream:
        """A new resumable stream of `state`'s session fed by `stream`."""
        assert self.event_store is not None
        if self.cluster is not None:
            stream_id = await self.cluster.events.create_stream(
                state.session_id,
                writer=self.cluster.instance_id,
                requests=stream.request_ids,
            )
        else:
            stream_id = await self.event_store.create_stream(state.session_id)
        return self._stored_as(state, stream, stream_id)

    def _stored_as(
        self, state: LegacySession, stream: ResponseStream, stream_id: str
    ) -> StoredStream:
        """The resumable stream `stream_id` of `state`'s session fed by `stream`."""
        assert self.event_store is not None
        stored = StoredStream(stream, self.event_store, stream_id, state.session_id)
        stream.stored = True
        self._live[stream_id] = stored
        return stored

    async def _open_session(self, principal: object) -> tuple[str, LegacySession]:
        state = self._new_session()
        try:
            session_id = self.sessions.create(state, principal)
            state.session_id = session_id
            state.handler.session_id = session_id
        except SessionLimitError:
            await state.mux.aclose()  # never used: close its channels
            raise Refused(
                HttpError(503, "Too many sessions; try again later"),
                {"retry-after": "30"},
            ) from None
        self._start_session(state)
        return session_id, state

    def _new_session(self, session_id: str = "") -> LegacySession:
        """A session's mux, handler and connection, not running yet. Its
        requests to the client are numbered from a random start: the
        session may move to another process, whose requests must not take
        the ids this one's client may still answer."""
        mux = SessionMux()
        handler = self.session.handler()
        handler.session_id = session_id or None
        connection = Connection(mux, handler, first_request_id=first_request_id())
        return LegacySession(mux, connection, handler, session_id=session_id)

    def _start_session(self, state: LegacySession) -> None:
        """Run the session's connection in a task of its own."""
        # The runner (and every handler it starts) must not inherit this
        # request's principal: `http_principal` then finds each request's own.
        context = contextvars.copy_context()
        context.run(request_principal.set, None)
        state.task = self._spawn(state.connection.run(), context)

    def _end(self, state: LegacySession, *, forget: bool = True) -> None:
        """Close a session's connection (its runner task then finishes);
        with `forget`, drop its streams (and, in a cluster, its record)."""
        state.mux.closed = True
        self._spawn(state.connection.aclose())
        self._touched.pop(state.session_id, None)
        if not forget:
            return
        if self.event_store is not None:
            self._spawn(quietly(self.event_store.drop_owner(state.session_id)))
        if self.cluster is not None:
            self._spawn(quietly(self.cluster.sessions.delete(state.session_id)))

    def _spawn(
        self,
        work: Coroutine[Any, Any, None],
        context: contextvars.Context | None = None,
    ) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- GET and DELETE --

    async def _get(
        self, headers: HttpHeaders, receive: Any, send: Any, principal: object
    ) -> None:
        version = headers.get(PROTOCOL_VERSION_HEADER)
        if (
            not self.session.legacy_versions
            or self.stateless
            or version in self.session.modern_versions
        ):
            raise Refused(
                HttpError(405, "This server offers no standalone SSE stream"),
                {"allow": self._allowed()},
            )
        session_id = headers.get(SESSION_HEADER)
        if session_id is None:
            raise refuse(400, "Bad Request: the Mcp-Session-Id header is required")
        found = await self._find(session_id, principal)
        if isinstance(found, str):
            await self._forward_get(found, session_id, headers, receive, send)
            return
        state = found
        if self.event_store is not None:
            with self.sessions.use(session_id, principal):
                last_event_id = headers.get(LAST_EVENT_ID_HEADER)
                if last_event_id:
                    await self._resume(state, last_event_id, receive, send)
                else:
                    await self._get_stored(state, receive, send)
            return
        if state.mux.standalone is not None:
            raise refuse(409, "This session already has a standalone SSE stream")
        stream = ResponseStream()
        state.mux.open_standalone(stream)
        try:
            with self.sessions.use(session_id, principal):
                await stream_events(stream, receive, send, {SESSION_HEADER: session_id})
        finally:
            state.mux.close_standalone(stream)

    async def _get_stored(self, state: LegacySession, receive: Any, send: Any) -> None:
        """Open the session's resumable GET stream; a detached one (its
        client gone without resuming) is replaced, its events kept."""
        current = state.standalone
        if current is not None and current.attached:
            raise refuse(409, "This session already has a standalone SSE stream")
        if current is not None:
            current.source.close()  # its pump stores what is queued, then ends
        stream = ResponseStream()
        state.mux.open_standalone(stream)
        stored = await self._stored(state, stream)
        state.standalone = stored
        listener = stored.attach()
        if state.handler.protocol_version in PRIMING_VERSIONS:
            head = sse_event(await stored.prime(), None, self.retry_ms)
        else:
            head = b": open\n\n"
        self._spawn(self._pump(state, stored))
        extra = {SESSION_HEADER: state.session_id}
        await write_stored(stored, listener, receive, send, extra, head)

    async def _resume(
        self, state: LegacySession, last_event_id: str, receive: Any, send: Any
    ) -> None:
        """Replay what followed `last_event_id` on its stream, then go on
        with the stream while it lives (a POST's: to its responses)."""
        assert self.event_store is not None
        parsed = parse_event_id(last_event_id)
        live = None if parsed is None else self._live.get(parsed[0])
        if live is not None and live.owner != state.session_id:
            live = None
        listener = None if live is None else live.attach()
        try:
            replay = await self.event_store.replay(last_event_id, state.session_id)
        except (UnknownEventError, EventsEvictedError) as error:
            if live is not None and listener is not None:
                live.detach(listener)
            raise refuse(400, f"Cannot resume: {error}") from None
        if live is not None and listener is not None:
            live.take_over(listener)
        if (live is None or listener is None) and self.cluster is not None:
            await self._follow_replay(
                last_event_id, replay, state.session_id, send, receive
            )
            return
        head = b"".join(sse_event(event.id, event.message) for event in replay.events)
        extra = {SESSION_HEADER: state.session_id}
        if live is None or listener is None:
            await start_sse(send, extra)
            await send({"type": "http.response.body", "body": head, "more_body": False})
            return
        skip = frozenset(event.id for event in replay.events)
        await write_stored(live, listener, receive, send, extra, head, skip)

    async def _delete(self, headers: HttpHeaders, send: Any, principal: object) -> None:
        if not self.session.legacy_versions or self.stateless:
            raise Refused(
                HttpError(405, "This server keeps no sessions"),
                {"allow": self._allowed()},
            )
        session_id = headers.get(SESSION_HEADER)
        if session_id is None or not is_valid_session_id(session_id):
            raise refuse(400, "Bad Request: the Mcp-Session-Id header is required")
        if self.cluster is not None and session_id not in self.sessions:
            await self._delete_remote(self.cluster, session_id, principal)
            await respond(send, 200, b"", None)
            return
        state = self.sessions.close(session_id, principal)
        if state is None:
            raise refuse(404, "Session not found (unknown or expired)")
        self._end(state)
        await respond(send, 200, b"", None)

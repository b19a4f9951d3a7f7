"""The Streamable HTTP server: an ASGI app serving a `ServerSession` at one path.

    app = McpHttpApp(session)                  # mount it anywhere ASGI runs
    serve_http(session, port=8000)             # or run it with uvicorn

What happens to a request, in order:

1. Guards (`security.py`): Host (DNS-rebinding allow-list when bound to
   loopback), Origin (403), Content-Type (415), Accept (406), body size (413),
   then the optional `authenticate` hook (401 with `WWW-Authenticate: Bearer`)
   or `auth` layer (its `AuthChallenge`: 401 or 403 with its own header).
   A body must arrive within the policy's `body_timeout_s` (408, connection
   closed). Its messages are read by the engine's rules (`messages.py`), so
   each error is the one stdio gives: a body that is no JSON-RPC message is
   400 with -32700 (no JSON) or -32600 (a broken envelope: a bad id, invalid
   UTF-8 in a member, nesting too deep...; with the request's id when
   usable), and never runs; params that cannot be decoded reach the handler
   (-32602). In a batch the invalid items are answered among the others.
2. POST with a 2026 request (its params carry the `_meta` protocol version):
   stateless. The standard headers must match the body (400, -32020); the
   request is served on its own response (`serve_request`), as JSON, or as an
   SSE stream once the handler sends a notification before its result; a
   client that goes away cancels it. An error answered as JSON gets the
   status the spec gives its code (`MODERN_ERROR_STATUS`: 404 for -32601, 400
   for invalid params, a missing capability or version), else 200; a
   notification gets 202.
3. POST otherwise: a legacy (2025) session. `initialize` creates one (its id
   in `Mcp-Session-Id`); later requests must carry that id (400 without, 404
   for an unknown or expired one) and a supported `MCP-Protocol-Version`
   (absent: the negotiated one); the id of a request still in flight in the
   session cannot be reused (400, -32600 with that id), even once its POST
   is gone; a malformed response still reaches the session, failing the
   request of the server's it answers. Each session is one `Connection` over
   a `SessionMux`; a POST of only notifications or responses gets 202. A
   client that goes away ends its POST's answer but not the request (legacy
   disconnection is not cancellation); a session ended while a POST waits
   answers it 404.
4. GET opens the session's standalone SSE stream (405 with `Allow` for a
   server without legacy revisions; 409 for a second one); it ends, complete,
   when the session does. DELETE ends the session.

A legacy session belongs to the principal that opened it (what `authenticate`
returned, compared with ==; None for all without the hook): to any other its
id is unknown (404, as the spec's advice to key sessions by user implies, and
telling nothing of its existence). Sessions expire after `idle_timeout_s`
unused; at most `max_sessions` live at once (503 beyond), and
`max_sessions_per_principal` per principal: at its cap, a principal's least
recently used session without a request in flight is ended to make room (503
when all are busy), so a client flooding `initialize` only evicts its own.
Resumability (`Last-Event-ID`) is not offered: streams carry no event ids,
which the specification allows.

Several instances (`cluster=Cluster(...)`, all on one Redis; see
`cluster.py` for the keys): a legacy session lives on one instance, its home
(the one that answered its `initialize`); its record in Redis names its
owner (a digest of the principal binding) and home, and logs the messages
that change its state (`initialize`, `notifications/initialized`,
`logging/setLevel`, `resources/(un)subscribe`, each alone). An instance
taking a request of a session it does not hold looks it up (404 as above
for an unknown one or another principal's) and:

- home alive: forwards it through the home's inbox and relays what the
  home stores in the shared `RedisEventStore`: a POST's answer (JSON when
  its first message completes it, else SSE with the stored event ids), or
  the home's refusal as the same HTTP answer; 202 for notifications and
  responses (cancellations, answers to the server's requests, which resolve
  at the home); a GET opens the home's standalone stream (replacing the
  previous one); a DELETE waits for the home to end the session;
- no live home (dead, or released by a graceful shutdown): claims it
  (compare-and-set) and rebuilds it by replaying its log through a fresh
  connection (answers discarded; the connection's key, owner of its
  anonymous tasks, derives from the session id), then serves it.

A GET with `Last-Event-ID` of a stream no local task is storing replays it,
then follows it live to its end. A follower never hangs: a stream whose
writer instance died before ending it is ended, once, with -32603 for each
request it still owed ("send it again"). Graceful shutdown (`aclose`)
releases the sessions, hands the inbox's unserved POSTs back (their
forwarders look again), lets requests in flight finish for up to
`CLOSE_TIMEOUT_S` (their answers stored: clients resume elsewhere) and ends
the GET streams. A SIGKILL loses the work in flight on that instance (its
requests are answered -32603 by whoever follows their streams, within a
lease and a half), the server's pending requests to clients, and
whatever session state is not in the log. A Redis that cannot be reached
makes a request that needs it 503 with a JSON-RPC error (-32603) and
`Retry-After`; sessions held locally go on serving what needs no Redis.

One switch for all of it: `http_app(..., redis=URL)` or `serve_http` (or
`$MCP_REDIS_URL`; see `redis_parts` and `protocol.redis_switch`) makes the
cluster and has the session share its keys and tasks on that Redis.

The app runs sessions in asyncio tasks, so it needs an asyncio server
(uvicorn, hypercorn's asyncio worker). It holds every such task, and
`aclose` (lifespan shutdown) waits up to `CLOSE_TIMEOUT_S` for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
from typing import TYPE_CHECKING, Any

import anyio

from mcp_codegen_runtime.jsonrpc.connection import (
    Connection,
    request_in_progress,
)
from mcp_codegen_runtime.jsonrpc.envelope import (
    BadMessage,
    Envelope,
)
from mcp_codegen_runtime.jsonrpc.serving import reset_peer_address, set_peer_address
from mcp_codegen_runtime.protocol.meta import META_PROTOCOL_VERSION
from mcp_codegen_runtime.protocol.redis_switch import (
    DEFAULT_PREFIX as REDIS_PREFIX,
    FROM_ENV,
    FromEnv,
    check_redis,
    resolve_redis_url,
    share_redis,
)
from mcp_codegen_runtime.stores.events import (
    EventsEvictedError,
    MemoryEventStore,
    UnknownEventError,
    parse_event_id,
)

from ...errors import ErrorCode, RpcError
from .answers import (
    PRIME_AFTER_S,
    PRIMING_VERSIONS,
    QUICK_ANSWER_S,
    UNREAD,
    Refused,
    Unread,
    answer_post,
    next_message,
    read_first,
    refuse,
    serve_health,
    stream_events,
    write_answer,
    write_stored,
)
from .asgi import closing, read_body, respond, serve_lifespan, start_sse
from .auth import (
    AuthChallenge,
    HttpRequest,
    authenticate_with,
    authorize_requests,
    request_principal,
)
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
    INITIALIZE,
    Batch,
    answer_ids,
    cancelled_ids,
    initialize_of,
    params_of,
    read_messages,
    refusal,
    request_id,
)
from .mux import RELEASE, ResponseStream, SessionMux
from .relay import (
    CLOSE_TIMEOUT_S,
    RETRY,
    quietly,
    resume_after,
)
from .resumable import StoredStream, sse_event
from .security import SecurityPolicy, check_request
from .sessions import (
    DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
    LegacySession,
    SessionLimitError,
    SessionRegistry,
    is_valid_session_id,
)
from .stateless import (
    envelope_version,
    post_modern,
    post_stateless,
)

if TYPE_CHECKING:
    from collections.abc import (
        Awaitable,
        Callable,
        Collection,
        Coroutine,
        Mapping,
    )

    from mcp_codegen_runtime.protocol.session import ServerSession
    from mcp_codegen_runtime.stores.events import EventStore

    from .auth import HttpAuth
    from .cluster import Cluster

__all__ = [
    "HttpRequest",
    "McpHttpApp",
    "close_sse_stream",
    "http_app",
    "http_principal",
    "redis_parts",
    "serve_http",
]

logger = logging.getLogger(__name__)

DEFAULT_RETRY_MS = 1000
DEFAULT_SHUTDOWN_TIMEOUT_S = 5.0
"""Seconds `serve_http` lets open responses run once stopping."""
CANCELLED_GRACE_S = 1.0
"""Seconds a cluster member then gives the tasks it cancelled to store the
end of their streams."""

Scope = dict[str, Any]


def close_sse_stream() -> bool:
    """Close the HTTP connection of the SSE stream answering the request
    being served, without ending the stream (SEP-1699 polling): the client
    reconnects after the stream's `retry` with GET and `Last-Event-ID`, and
    gets what was sent meanwhile, the result included. Only for a legacy
    2025-11-25 session of a resumable app (elsewhere it does nothing and
    returns False); call it from an `async` handler."""
    context = request_in_progress()
    if context is None:
        return False
    mux = getattr(context.connection, "transport", None)
    if not isinstance(mux, SessionMux):
        return False
    stream = mux.stream_of(context.request_id)
    return stream is not None and stream.release()


def http_principal() -> object:
    """What `authenticate` returned for the HTTP request being served (None
    outside HTTP or without a hook)."""
    context = request_in_progress()
    if context is not None and context.principal is not None:
        return context.principal
    return request_principal.get()


class McpHttpApp(ClusterMember):
    """The ASGI app of an MCP endpoint; see the module docstring.

    Args:
        session: what to serve.
        path: the endpoint's path.
        policy: the security guards (default: `SecurityPolicy.for_bind` of
            127.0.0.1 on any port, i.e. local clients only).
        authenticate: called with each request; return who it is (readable in
            handlers with `http_principal()`), or None to answer 401 (or
            raise `AuthChallenge` to answer its status and header).
        auth: an authorization layer (`HttpAuth`, e.g. a `ResourceServer`):
            its `authenticate` replaces the hook, and each request's scopes
            (`required_scopes`) are checked with its `authorize` before the
            request is served, so a refusal is an HTTP 403.
        required_scopes: the scopes a request needs, by method and params
            (e.g. a tool's), checked with `auth` (none without one).
        idle_timeout_s, max_sessions, max_sessions_per_principal: the
            legacy session limits (all anonymous clients are one principal).
        tool_input_schema: the `inputSchema` of a tool by name, to check the
            2026 `Mcp-Param-*` headers of `tools/call` against the arguments.
        resumable: give the SSE events of legacy sessions ids and keep them
            in `event_store`, so a client resumes a dropped stream with GET
            and `Last-Event-ID` (on by default).
        event_store: where events are kept (default: a `MemoryEventStore`
            with its default bounds).
        retry_ms: the reconnection delay the priming events tell clients
            (None: leave it to them).
        stateless: serve legacy revisions without sessions: each POST stands
            alone (see the module docstring).
        health_path: answered 200 `{"status":"ok"}` to GET or HEAD, before
            any guard or authentication (None: no health endpoint).
        cluster: serve legacy sessions with the other instances of this
            `Cluster` (same Redis): see "Several instances" in the module
            docstring. Its `events` is then the event store (always
            resumable), and `aclose` leaves the cluster and closes it.
    """

    def __init__(
        self,
        session: ServerSession,
        *,
        path: str = "/mcp",
        policy: SecurityPolicy | None = None,
        authenticate: Callable[[HttpRequest], Awaitable[object]] | None = None,
        auth: HttpAuth | None = None,
        required_scopes: (
            Callable[[str, Mapping[str, Any]], Collection[str]] | None
        ) = None,
        idle_timeout_s: float | None = 1800.0,
        max_sessions: int | None = 10_000,
        max_sessions_per_principal: int | None = DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
        tool_input_schema: Callable[[str], Mapping[str, Any] | None] | None = None,
        resumable: bool = True,
        event_store: EventStore | None = None,
        retry_ms: int | None = DEFAULT_RETRY_MS,
        stateless: bool = False,
        health_path: str | None = "/healthz",
        cluster: Cluster | None = None,
    ) -> None:
        if cluster is not None:
            if stateless:
                raise ValueError("a stateless server needs no cluster")
            if event_store is not None and event_store is not cluster.events:
                raise ValueError("a cluster's event store is its own: cluster.events")
            resumable, event_store = True, cluster.events
            if idle_timeout_s is not None:
                cluster.sessions.ttl_ms = max(1, int(idle_timeout_s * 1000))
        self.cluster = cluster
        self.session = session
        self.path = path
        self.health_path = health_path
        self.stateless = stateless
        if resumable and not stateless and event_store is None:
            event_store = MemoryEventStore()
        self.event_store = event_store if resumable and not stateless else None
        self.retry_ms = retry_ms
        # The resumable streams still being stored, by stream id.
        self._live: dict[str, StoredStream] = {}
        self.policy = policy or SecurityPolicy.for_bind("127.0.0.1", 0)
        if auth is not None and authenticate is not None:
            raise ValueError("give authenticate or auth, not both")
        self.authenticate = auth.authenticate if auth is not None else authenticate
        self.auth = auth
        self.required_scopes = required_scopes
        self.tool_input_schema = tool_input_schema
        self.sessions: SessionRegistry[LegacySession] = SessionRegistry(
            idle_timeout_s=idle_timeout_s,
            max_sessions=max_sessions,
            max_sessions_per_owner=max_sessions_per_principal,
            on_expire=lambda _id, state: self._end(state),
        )
        self._modern = session.handler() if session.modern_versions else None
        # Held so they are not garbage-collected mid-run, and awaited by aclose.
        self._tasks: set[asyncio.Task[None]] = set()
        # Cluster mode: the streams of POSTs being answered here (awaited by a
        # graceful shutdown), when each session's TTL was last renewed, and a
        # lock per session being located (so it is rebuilt once).
        self._answering: set[asyncio.Task[None]] = set()
        self._touched: dict[str, float] = {}
        self._locating: dict[str, asyncio.Lock] = {}
        self._leaving = False

    # -- ASGI --

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        client = scope.get("client")
        # The client's host keys anonymous callers' task limits.
        token = set_peer_address(str(client[0]) if client else None)
        try:
            await self._serve(scope, receive, send)
        finally:
            reset_peer_address(token)

    async def _serve(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send, self.aclose, self._start)
            return
        if scope["type"] != "http":
            return
        if self.health_path is not None and scope.get("path") == self.health_path:
            await serve_health(scope["method"], send)
            return
        if scope.get("path") != self.path:
            await respond(send, 404, b"", "text/plain")
            return
        headers = HttpHeaders.from_asgi(scope["headers"])
        method: str = scope["method"]
        try:
            refused = check_request(method, headers, self.policy)
            if refused is not None:
                raise Refused(refused)
            principal = await self._authenticate(scope, headers)
            token = request_principal.set(principal)
            try:
                await self._route(method, headers, receive, send, principal)
            finally:
                request_principal.reset(token)
        except Refused as refusal:
            error = refusal.error
            await respond(
                send,
                error.status,
                error.body(refusal.reply_id),
                "application/json",
                refusal.headers,
            )
        except AuthChallenge as challenge:
            refused = HttpError(challenge.status, challenge.message)
            await respond(
                send,
                challenge.status,
                refused.body(),
                "application/json",
                {"www-authenticate": challenge.www_authenticate},
            )
        except Exception as error:
            if self.cluster is None or not unreachable(error):
                raise
            logger.warning("the session store is unreachable: %s", error)
            refused = HttpError(
                503,
                f"the session store is unreachable: {error}",
                ErrorCode.INTERNAL_ERROR,
            )
            await respond(send, 503, refused.body(), "application/json", RETRY)

    async def _start(self) -> None:
        """Lifespan start-up, best effort: the session's start-up steps (keys
        shared through Redis) and, in a cluster, joining it. A Redis out of
        reach is logged, not fatal: both are tried again when a request
        needs them, and the requests needing no Redis are served meanwhile
        (`serve_http` refuses to start without it, before this)."""
        try:
            await self.session.start()
            if self.cluster is not None:
                await self._join(self.cluster)
        except Exception as error:
            if not unreachable(error) and not isinstance(error, RpcError):
                raise
            logger.warning("starting without Redis for now: %s", error)

    async def aclose(self) -> None:
        """End every legacy session, and wait up to `CLOSE_TIMEOUT_S` for
        their runners and closers to finish (those still running are then
        cancelled). In a cluster, sessions are handed over first (see
        `_leave`)."""
        if self.cluster is not None:
            await self._leave(self.cluster)
        for _, state in self.sessions.close_all():
            self._end(state, forget=self.cluster is None)
        await self.session.aclose()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=CLOSE_TIMEOUT_S)
            for task in pending:
                task.cancel()
            if pending:
                logger.warning("%d legacy session tasks were cancelled", len(pending))
                if self.cluster is not None:  # let them end their streams
                    await asyncio.wait(pending, timeout=CANCELLED_GRACE_S)
        if self.cluster is not None:
            await self.cluster.aclose()

    async def _authenticate(self, scope: Scope, headers: HttpHeaders) -> object:
        if self.authenticate is None:
            return None
        return await authenticate_with(self.authenticate, scope, headers)

    async def _route(
        self,
        method: str,
        headers: HttpHeaders,
        receive: Any,
        send: Any,
        principal: object,
    ) -> None:
        self.sessions.sweep()
        if method == "POST":
            body = await self._read_body(receive)
            await self._post(headers, body, receive, send, principal)
        elif method == "GET":
            await self._get(headers, receive, send, principal)
        elif method == "DELETE":
            await self._delete(headers, send, principal)
        else:
            raise Refused(
                HttpError(405, f"Method not allowed: {method}"),
                {"allow": self._allowed()},
            )

    def _allowed(self) -> str:
        if self.session.legacy_versions and not self.stateless:
            return "GET, POST, DELETE"
        return "POST"

    async def _read_body(self, receive: Any) -> bytes:
        body = await read_body(receive, self.policy)
        if isinstance(body, HttpError):
            raise Refused(body, closing(body))
        return body

    # -- POST --

    async def _post(
        self,
        headers: HttpHeaders,
        body: bytes,
        receive: Any,
        send: Any,
        principal: object,
    ) -> None:
        try:
            message = read_messages(body)
        except BadMessage as bad:
            if bad.response_id is not None:
                self._hand_over(headers, body, principal)
            raise Refused(refusal(bad), reply_id=bad.reply_id) from None
        if isinstance(message, Batch) and not message.items:
            raise refuse(400, "an empty batch")
        authorize_requests(self.auth, self.required_scopes, principal, message)
        stateless = self.stateless and bool(self.session.legacy_versions)
        if isinstance(message, Batch) and not stateless:
            await self._post_legacy(headers, body, message, receive, send, principal)
            return
        if (
            self._modern is not None
            and isinstance(message, Envelope)
            and self._is_modern(headers, message)
        ):
            await post_modern(
                self.session,
                self._modern,
                self.tool_input_schema,
                headers,
                message,
                receive,
                send,
                principal,
            )
            return
        if stateless:
            await post_stateless(
                self.session, headers, message, receive, send, principal
            )
            return
        await self._post_legacy(headers, body, message, receive, send, principal)

    def _hand_over(self, headers: HttpHeaders, body: bytes, principal: object) -> None:
        """Give a malformed response to the legacy session it was POSTed to:
        its engine fails the request of the server's it answers."""
        session_id = headers.get(SESSION_HEADER)
        state = None if session_id is None else self.sessions.get(session_id, principal)
        if state is not None:
            with contextlib.suppress(anyio.ClosedResourceError):
                state.mux.feed(body, None)

    def _is_modern(self, headers: HttpHeaders, message: Envelope) -> bool:
        """A 2026 request: its `_meta` names a version, or (the envelope
        missing) its `MCP-Protocol-Version` header names a modern one outside
        any session, so that it is refused as a bad 2026 request."""
        if envelope_version(params_of(message)) is not None:
            return True
        return (
            headers.get(PROTOCOL_VERSION_HEADER) in self.session.modern_versions
            and headers.get(SESSION_HEADER) is None
            and message.method != INITIALIZE
        )

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
            stream.resumable = (
                self.event_store is not None
                and state.handler.protocol_version in PRIMING_VERSIONS
            )
        if self.cluster is not None and initialize is None:
            await self._log_state(session_id, message)
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
        handed_over = False
        with self.sessions.use(session_id, principal):
            try:
                handed_over = await self._answer_legacy(
                    state, stream, receive, send, extra
                )
            finally:
                if not handed_over:
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
        first: bytes | Unread | None = UNREAD
        prime = state.handler.protocol_version in PRIMING_VERSIONS
        with anyio.move_on_after(PRIME_AFTER_S if prime else QUICK_ANSWER_S):
            first = await next_message(stream)
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
        self._spawn(self._pump(state, stored, first_message))
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
        self._live[stream_id] = stored
        return stored

    async def _open_session(self, principal: object) -> tuple[str, LegacySession]:
        mux = SessionMux()
        handler = self.session.handler()
        connection = Connection(mux, handler)
        state = LegacySession(mux, connection, handler)
        try:
            session_id = self.sessions.create(state, principal)
            state.session_id = session_id
        except SessionLimitError:
            await mux.aclose()  # never used: close its channels
            raise Refused(
                HttpError(503, "Too many sessions; try again later"),
                {"retry-after": "30"},
            ) from None
        # The runner (and every handler it starts) must not inherit this
        # request's principal: `http_principal` then finds each request's own.
        context = contextvars.copy_context()
        context.run(request_principal.set, None)
        state.task = self._spawn(connection.run(), context)
        return session_id, state

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
        head = b"".join(sse_event(event.id, event.message) for event in replay.events)
        extra = {SESSION_HEADER: state.session_id}
        if (live is None or listener is None) and self.cluster is not None:
            await self._relay_resumed(
                replay.stream,
                resume_after(last_event_id, replay),
                head,
                send,
                receive,
                extra,
            )
            return
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

    # -- cluster (see "Several instances" in the module docstring) --


def http_app(
    session: ServerSession,
    *,
    path: str = "/mcp",
    policy: SecurityPolicy | None = None,
    legacy_sse: bool = True,
    redis: str | FromEnv | None = FROM_ENV,
    redis_prefix: str = REDIS_PREFIX,
    **options: Any,
) -> Any:
    """The ASGI app `serve_http` runs: `McpHttpApp` at `path`, and, with
    `legacy_sse` (and legacy revisions served), the deprecated HTTP+SSE
    transport of 2024-11-05 at `/sse` and `/messages` in front of it, for old
    clients. `options` go to `McpHttpApp`; an `authenticate` hook or `auth`
    layer among them protects HTTP+SSE too (as do `required_scopes` and
    `max_sessions_per_principal`), and the layer's routes (the protected
    resource metadata) come first.

    `redis` (a URL; None: none; left out: `$MCP_REDIS_URL` when set) makes
    this one instance of several on that Redis: the session shares its keys
    and tasks (`protocol.redis_switch.share_redis`) and legacy sessions and
    their streams are served by any instance (a `Cluster`; see
    `redis_parts`); keys under `redis_prefix`."""
    url = resolve_redis_url(redis)
    if url is not None:
        options.update(redis_parts(session, url, redis_prefix, options))
    guards = policy or SecurityPolicy.for_bind("127.0.0.1", 0)
    app: Any = McpHttpApp(session, path=path, policy=guards, **options)
    auth: HttpAuth | None = options.get("auth")
    if legacy_sse and session.legacy_versions:
        from .legacy_sse import LegacySseApp

        shared = ("authenticate", "required_scopes", "max_sessions_per_principal")
        app = LegacySseApp(
            session,
            policy=guards,
            fallback=app,
            auth=auth,
            **{name: options[name] for name in shared if name in options},
        )
    return app if auth is None else auth.mount(app)


def redis_parts(
    session: ServerSession, url: str, prefix: str, options: Mapping[str, Any]
) -> dict[str, Any]:
    """What `McpHttpApp` takes to run on the Redis at `url`, besides
    `options`: the session shares keys and tasks there, and a stateful app
    joins the `Cluster` of every instance on that Redis and prefix (unless
    `options` bring one), whose event store it then uses."""
    share_redis(session, url, prefix=prefix)
    if options.get("stateless") or options.get("cluster") is not None:
        return {}
    from .cluster import Cluster

    return {"cluster": Cluster.from_url(url, prefix=prefix)}


def serve_http(
    session: ServerSession,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str = "warning",
    legacy_sse: bool = True,
    shutdown_timeout_s: float | None = DEFAULT_SHUTDOWN_TIMEOUT_S,
    redis: str | FromEnv | None = FROM_ENV,
    redis_prefix: str = REDIS_PREFIX,
    **options: Any,
) -> None:
    """Serve `session` over HTTP with uvicorn until interrupted (see `http_app`).

    Binds 127.0.0.1 unless told otherwise; the security policy follows the
    bind address (`SecurityPolicy.for_bind`). `options` go to `McpHttpApp`.
    Every revision is built before the server listens, so no client's first
    request pays for it. Once stopping, uvicorn waits at most
    `shutdown_timeout_s` (None: forever) for open responses (a standalone
    or HTTP+SSE stream never ends by itself) before it cancels them.

    With `redis` (see `http_app`), a Redis that cannot be reached stops the
    start with one line naming it (`SystemExit`), before anything listens.
    """
    import uvicorn

    url = resolve_redis_url(redis)
    if url is not None:
        check_redis(url, prefix=redis_prefix)
    session.prepare()
    options.setdefault("policy", SecurityPolicy.for_bind(host, port))
    app = http_app(
        session,
        path=path,
        legacy_sse=legacy_sse,
        redis=url,
        redis_prefix=redis_prefix,
        **options,
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=(
            None if shutdown_timeout_s is None else math.ceil(shutdown_timeout_s)
        ),
    )

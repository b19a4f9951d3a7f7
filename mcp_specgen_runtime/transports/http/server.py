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
   stateless, served on its own response (`stateless.py`).
3. POST otherwise: a legacy (2025) session (`legacy.py`), or, with
   `stateless=True`, a legacy request standing alone (`stateless.py`).
4. GET opens a legacy session's standalone SSE stream; DELETE ends the
   session (`legacy.py`).

Answers, JSON or SSE, are written by `answers.py`. With several instances
(`cluster=Cluster(...)`), a legacy session held by another instance is
served through it (`forwarding.py`, the pieces it stores in `relay.py`, the
Redis keys in `cluster.py`).

One switch for all of it: `http_app(..., redis=URL)` or `serve_http` (or
`$MCP_REDIS_URL`; see `redis_parts` and `protocol.redis_switch`) makes the
cluster and has the session share its keys and tasks on that Redis.

The app runs sessions in asyncio tasks, so it needs an asyncio server
(uvicorn, hypercorn's asyncio worker). It holds every such task, and
`aclose` (lifespan shutdown) waits up to `CLOSE_TIMEOUT_S` for them.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import TYPE_CHECKING, Any

from mcp_specgen_runtime.jsonrpc.connection import request_in_progress
from mcp_specgen_runtime.jsonrpc.envelope import (
    BadMessage,
    Envelope,
)
from mcp_specgen_runtime.jsonrpc.serving import reset_peer_address, set_peer_address
from mcp_specgen_runtime.protocol.redis_switch import (
    FROM_ENV,
    FromEnv,
    check_redis,
    resolve_redis_prefix,
    resolve_redis_url,
    share_redis,
)
from mcp_specgen_runtime.stores.events import MemoryEventStore

from ...errors import ErrorCode, RpcError
from .answers import (
    Refused,
    refuse,
    serve_health,
)
from .asgi import closing, read_body, respond, serve_lifespan
from .auth import (
    AuthChallenge,
    HttpRequest,
    authenticate_request,
    authorize_requests,
    current_request,
    request_of,
    request_principal,
)
from .cluster import pool_exhausted, unreachable
from .cors import CorsApp, cors_policy
from .extra import missing_http_extra
from .forwarding import LeaveBudget
from .headers import (
    PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
    HttpError,
    HttpHeaders,
)
from .legacy import LegacySessions
from .messages import (
    INITIALIZE,
    Batch,
    params_of,
    read_messages,
    refusal,
)
from .mux import SessionMux
from .relay import (
    CLOSE_TIMEOUT_S,
    RETRY,
)
from .security import SecurityPolicy, check_request
from .sessions import (
    DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
    LegacySession,
    SessionRegistry,
)
from .startline import (
    LOGGER as start_logger,
    Served,
    listening_urls,
    serve_announced,
    show_start_line,
)
from .stateless import (
    envelope_version,
    post_modern,
    post_stateless,
)

if TYPE_CHECKING:
    import socket
    from collections.abc import (
        Awaitable,
        Callable,
        Collection,
        Mapping,
        Sequence,
    )

    from mcp_specgen_runtime.protocol.session import ServerSession
    from mcp_specgen_runtime.stores.events import EventStore

    from .auth import HttpAuth
    from .cluster import Cluster
    from .cors import Cors
    from .resumable import StoredStream

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
"""Seconds `aclose` then gives the tasks it cancelled to unwind (a cluster
member's to store the end of their streams) before the session closes."""

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


class McpHttpApp(LegacySessions):
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
            alone (see `stateless`).
        health_path: answered 200 `{"status":"ok"}` to GET or HEAD, before
            any guard or authentication (None: no health endpoint).
        cluster: serve legacy sessions with the other instances of this
            `Cluster` (same Redis): see `forwarding`. Its `events` is then
            the event store (always resumable), and `aclose` leaves the
            cluster and closes it.
        max_relayed_streams, max_relayed_streams_per_session: with a
            cluster, the streams this instance relays at once, in all and
            per session (None: the cluster's, 1,000 and 32 by default); one
            more is refused with 503 and `Retry-After`.
        cors: answer browsers' preflights and let the pages of these
            origins read the answers (`cors.py`; off by default). Its origins
            pass the Origin guard: the default policy is widened to them, an
            explicit `policy` refusing one is a ValueError.
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
        max_relayed_streams: int | None = None,
        max_relayed_streams_per_session: int | None = None,
        cors: Cors | None = None,
    ) -> None:
        if cluster is not None:
            cluster.limit_relayed(max_relayed_streams, max_relayed_streams_per_session)
            if stateless:
                raise ValueError("a stateless server needs no cluster")
            if event_store is not None and event_store is not cluster.events:
                raise ValueError("a cluster's event store is its own: cluster.events")
            resumable, event_store = True, cluster.events
            # No idle timeout: the record lives until the session ends.
            cluster.sessions.ttl_ms = (
                0 if idle_timeout_s is None else max(1, int(idle_timeout_s * 1000))
            )
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
        if cors is not None:
            self.policy = cors_policy(cors, policy, self.policy)
        self._entry: Callable[[Scope, Any, Any], Awaitable[None]] = (
            self._serve if cors is None else CorsApp(self._serve, cors, self.policy)
        )
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
        # The tasks of the HTTP requests being served (a 2026 call runs in
        # its request's), awaited by aclose too.
        self._requests: set[asyncio.Task[Any]] = set()
        # Cluster mode: the streams of POSTs being answered here (awaited by a
        # graceful shutdown), when each session's TTL was last renewed, and a
        # lock per session being located (so it is rebuilt once).
        self._answering: set[asyncio.Task[None]] = set()
        self._touched: dict[str, float] = {}
        self._locating: dict[str, asyncio.Lock] = {}
        self._detaching: dict[str, asyncio.Event] = {}
        self._leaving = False

    # -- ASGI --

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        client = scope.get("client")
        # The client's host keys anonymous callers' task limits.
        token = set_peer_address(str(client[0]) if client else None)
        task = asyncio.current_task() if scope["type"] == "http" else None
        if task is not None:
            self._requests.add(task)
        try:
            await self._entry(scope, receive, send)
        finally:
            reset_peer_address(token)
            if task is not None:
                self._requests.discard(task)

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
            request = request_of(scope, headers)
            principal = await self._authenticate(request)
            token = request_principal.set(principal)
            served = current_request.set(request)
            try:
                await self._route(method, headers, receive, send, principal)
            finally:
                current_request.reset(served)
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
            if pool_exhausted(error):
                message = (
                    "this server instance has no free Redis connection "
                    f"(max_connections={self.cluster.max_connections}, waited "
                    f"{self.cluster.pool_timeout_s:g} s); try again"
                )
            else:
                message = f"the session store is unreachable: {error}"
            logger.warning("%s", message)
            refused = HttpError(503, message, ErrorCode.INTERNAL_ERROR)
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
        """End every legacy session, wait up to `CLOSE_TIMEOUT_S` for their
        runners and closers, and the requests being served, to finish (those
        still running are then cancelled, and given `CANCELLED_GRACE_S`),
        then close the session (its close steps: an app's lifespan exits
        after the calls). In a cluster, sessions are handed over first (see
        `_leave`); its Redis steps, leaving the cluster included, share
        `CLOSE_TIMEOUT_S` (`LeaveBudget`)."""
        budget = LeaveBudget()
        if self.cluster is not None:
            await self._leave(self.cluster, budget)
        for _, state in self.sessions.close_all():
            self._end(state, forget=self.cluster is None)
        # Requests too: the server may have cancelled them (uvicorn past its
        # graceful timeout) and gone on to this while they still unwind.
        work = self._tasks | self._requests
        if work:
            _, pending = await asyncio.wait(work, timeout=CLOSE_TIMEOUT_S)
            for task in pending:
                task.cancel()
            if pending:
                logger.warning(
                    "%d requests and legacy session tasks were cancelled",
                    len(pending),
                )
                await asyncio.wait(pending, timeout=CANCELLED_GRACE_S)
        # After them: their handlers' cleanup may still use what the
        # session's close steps release (the app's lifespan).
        await self.session.aclose()
        if self.cluster is not None:
            await self.cluster.aclose(timeout_s=budget.left)

    async def _authenticate(self, request: HttpRequest) -> object:
        if self.authenticate is None:
            return None
        return await authenticate_request(self.authenticate, request)

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
        if self._modern is not None and isinstance(message, Envelope):
            # Decoded once, for both steps; not at all when the body cannot
            # name the envelope's version (most legacy requests).
            params = params_of(message) if _may_name_version(body) else None
            if self._is_modern(headers, message, params):
                await post_modern(
                    self.session,
                    self._modern,
                    self.tool_input_schema,
                    headers,
                    message,
                    receive,
                    send,
                    principal,
                    params,
                )
                return
        if stateless:
            await post_stateless(
                self.session, headers, message, receive, send, principal
            )
            return
        await self._post_legacy(headers, body, message, receive, send, principal)

    def _is_modern(
        self, headers: HttpHeaders, message: Envelope, params: dict[str, Any] | None
    ) -> bool:
        """A 2026 request: its `_meta` names a version, or (the envelope
        missing) its `MCP-Protocol-Version` header names a modern one outside
        any session, so that it is refused as a bad 2026 request."""
        if params is not None and envelope_version(params) is not None:
            return True
        return (
            headers.get(PROTOCOL_VERSION_HEADER) in self.session.modern_versions
            and headers.get(SESSION_HEADER) is None
            and message.method != INITIALIZE
        )


def _may_name_version(body: bytes) -> bool:
    """Whether a POST body may hold a `_meta` protocol version: it names
    `protocolVersion`, or holds an escape that could spell it."""
    return b"protocolVersion" in body or b"\\" in body


def http_app(
    session: ServerSession,
    *,
    path: str = "/mcp",
    policy: SecurityPolicy | None = None,
    legacy_sse: bool | None = None,
    redis: str | FromEnv | None = FROM_ENV,
    redis_prefix: str | FromEnv = FROM_ENV,
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
    `redis_parts`); keys under `redis_prefix` (left out: `$MCP_REDIS_PREFIX`
    when set, else "mcp:").

    `legacy_sse` None (the default) mounts HTTP+SSE unless the app is one
    instance of a cluster: an HTTP+SSE session lives on the instance whose
    `/sse` stream opened it and cannot move, so its POSTs landing on another
    instance would fail. `legacy_sse=True` with a cluster is refused
    (`ValueError`).

    `cors` (a `Cors`, in `options`) wraps the whole app, the HTTP+SSE and
    authorization routes included (see `McpHttpApp` and `cors.py`)."""
    cors: Cors | None = options.pop("cors", None)
    url = resolve_redis_url(redis)
    if url is not None:
        prefix = resolve_redis_prefix(redis_prefix)
        options.update(redis_parts(session, url, prefix, options))
    clustered = options.get("cluster") is not None
    if legacy_sse and clustered:
        raise ValueError(
            "legacy_sse=True cannot serve a cluster: HTTP+SSE (2024-11-05) "
            "sessions live on one instance and cannot move between instances"
        )
    if legacy_sse is None:
        legacy_sse = not clustered
    guards = policy or SecurityPolicy.for_bind("127.0.0.1", 0)
    if cors is not None:
        guards = cors_policy(cors, policy, guards)
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
    if auth is not None:
        app = auth.mount(app)
    return app if cors is None else CorsApp(app, cors, guards)


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
    legacy_sse: bool | None = None,
    shutdown_timeout_s: float | None = DEFAULT_SHUTDOWN_TIMEOUT_S,
    redis: str | FromEnv | None = FROM_ENV,
    redis_prefix: str | FromEnv = FROM_ENV,
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

    Once listening it logs one line (`startline.py`, logger
    `mcp_specgen_runtime.http`, to stderr unless logging is configured):
    its URLs, the revisions it serves and how, auth and CORS on or off.
    """
    url = resolve_redis_url(redis)
    prefix = resolve_redis_prefix(redis_prefix)
    if url is not None:
        check_redis(url, prefix=prefix)
    session.prepare()
    if "policy" not in options:
        policy = SecurityPolicy.for_bind(host, port)
        cors: Cors | None = options.get("cors")
        options["policy"] = policy if cors is None else cors_policy(cors, None, policy)
    app = http_app(
        session,
        path=path,
        legacy_sse=legacy_sse,
        redis=url,
        redis_prefix=prefix,
        **options,
    )
    clustered = options.get("cluster") is not None or (
        url is not None and not options.get("stateless")
    )
    served = Served(
        session,
        path,
        legacy_sse=not clustered if legacy_sse is None else legacy_sse,
        stateless=bool(options.get("stateless")),
        auth=options.get("auth") is not None or options.get("authenticate") is not None,
        cors=options.get("cors") is not None,
    )
    show_start_line()
    run_uvicorn(
        app,
        host=host,
        port=port,
        log_level=log_level,
        shutdown_timeout_s=shutdown_timeout_s,
        on_listening=lambda sockets: start_logger.info(
            "%s", served.line(listening_urls(sockets, path))
        ),
    )


def run_uvicorn(
    app: Any,
    *,
    host: str,
    port: int,
    log_level: str,
    shutdown_timeout_s: float | None,
    on_listening: Callable[[Sequence[socket.socket]], None] | None = None,
    **options: Any,
) -> None:
    """Run uvicorn (with the lifespan on) as `serve_http` and `serve_workers`
    both do: once stopping, open responses get `shutdown_timeout_s` (None:
    forever). `options` go to `uvicorn.run` (`factory`, `workers`).
    `on_listening` (one process only) is called with the listening sockets
    once they are bound.

    Raises:
        ImportError: uvicorn is not installed (the `http` extra).
    """
    try:
        import uvicorn
    except ImportError as exc:
        raise missing_http_extra(exc) from exc

    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "lifespan": "on",
        "timeout_graceful_shutdown": (
            None if shutdown_timeout_s is None else math.ceil(shutdown_timeout_s)
        ),
        **options,
    }
    if on_listening is None or settings.get("workers", 1) > 1:
        uvicorn.run(app, **settings)
        return
    serve_announced(uvicorn.Config(app, **settings), on_listening)

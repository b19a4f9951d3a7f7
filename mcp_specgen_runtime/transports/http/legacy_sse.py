"""The deprecated HTTP+SSE transport of MCP 2024-11-05, server and client.

How the transport works: the client GETs the SSE endpoint. The server keeps
that response open as an event stream. Its first event, ``endpoint``, holds
the URL the client POSTs its messages to. Every message from the server is
then an event of type ``message`` on the stream, with the JSON text as its
data. One GET stream is one session, and the session ends when the stream
ends.

Server: `LegacySseApp`, an ASGI app::

    app = LegacySseApp(session)                          # /sse and /messages
    app = LegacySseApp(session, fallback=McpHttpApp(session))   # with /mcp

- GET `sse_path` opens a session: a random id (`new_session_id`) in a
  `SessionRegistry`, and one `Connection(transport, session.handler())` that
  runs for as long as the stream is open. The first event is
  ``event: endpoint`` with a relative URL, ``<message_path>?session_id=<id>``
  (a path, not an absolute URL, as both official SDKs send: it works behind
  any host name, and clients resolve it against the SSE URL). Every message
  the connection sends follows as ``event: message``. A comment line every
  `keepalive_s` seconds (15 s by default, as the Python SDK's sse-starlette
  sends) keeps proxies and dead TCP peers from holding a silent stream
  forever.
- POST `message_path?session_id=<id>` hands one JSON body to that session's
  connection and answers 202 ``Accepted``. The reply comes back on the
  stream, never in the POST's response. The status codes: missing, repeated
  or malformed ``session_id`` is 400; an unknown, closed or expired session
  is 404 (both SDKs answer so); a body that is no JSON-RPC message is 400,
  its error classified by the engine's rules, as `McpHttpApp` does (-32700
  when not JSON, else -32600 with the request's id when usable; see
  `messages.py`); the items of a batch are answered by the engine on the
  stream. Error answers are JSON-RPC error bodies, as `McpHttpApp` sends.
- Guards, as in `server.py` and both SDKs: Host and Origin
  (`SecurityPolicy`, local clients only by default) on both endpoints;
  Accept must allow ``text/event-stream`` on the GET (406); a POST needs
  ``Content-Type: application/json`` (415) and a body within
  `policy.max_body_size` (413). A POST's Accept is not checked: old clients
  send ``*/*`` or nothing.
- The session ends when the client disconnects: the connection is closed
  (its running handlers are cancelled, since no reply could reach the
  client), and the id is forgotten. Later POSTs to it get 404. It also ends
  on `aclose()` (at lifespan shutdown) and after `idle_timeout_s` seconds
  without a POST, when set. The default is None: a client may legitimately
  keep a stream open in silence while it waits for server notifications,
  and the keep-alive already finds dead peers. Ending a session from the
  server ends its stream, and the client sees end of stream.
- With an `authenticate` hook or an `auth` layer (`HttpAuth`, e.g. a
  `ResourceServer`), both endpoints authenticate every request as
  `McpHttpApp` does (a hook's None is 401 with ``WWW-Authenticate: Bearer``;
  an `AuthChallenge` is answered with its status and header); a session
  belongs to the caller that opened it (another caller's POST finds no
  session: 404); with `auth`, a POST holding a request the caller lacks the
  scopes of (`required_scopes`) is 403 before the session sees it; handlers
  see the caller of the latest POST as the request's principal.
- At most `max_sessions` streams are open at once; the next GET gets 503
  with ``Retry-After``, as `McpHttpApp` answers. At most
  `max_sessions_per_principal` per caller (all anonymous clients are one):
  a caller at its cap loses its own least recently used session (its stream
  ends), so one flooding client cannot lock the others out.
- Back-pressure: a session's outgoing messages wait in a small buffer
  (`DEFAULT_BUFFER`), so a client that reads slowly slows its own session's
  handlers instead of growing the server's memory. POSTed bodies queue the
  same way (the engine reads them at once).
- Paths are matched exactly against the ASGI ``path``, as `McpHttpApp`
  matches its own path. The endpoint event names `message_path` as given.
  Mount the app at the root, or give it the full paths.

Serving it together with the Streamable HTTP app: `fallback` is any ASGI app
that gets every request this one does not serve (other paths and methods,
and lifespan events; at lifespan shutdown the legacy sessions are closed
before the fallback's own shutdown runs). `sse_path` may even be the
Streamable HTTP path itself: a GET there that carries ``Mcp-Session-Id`` or
``MCP-Protocol-Version`` is the Streamable HTTP client's standalone stream
and goes to the fallback. A plain GET there opens a legacy session, and
POSTs go to the fallback. That is the backwards compatibility the
2025-03-26 specification describes: an old client GETs the URL it was given.
uvicorn waits for open responses before it shuts down, and a legacy stream
never ends by itself. So run uvicorn with ``timeout_graceful_shutdown``
(`serve_legacy_sse` does), or call `aclose()` first.

The app runs each session's connection inside the GET request's task, so it
needs no background tasks. It runs on any ASGI server with asyncio (the
engine's handlers are asyncio tasks).

Client: `LegacySseClientTransport`, an async context manager that is a
`Transport`, and `connect_legacy_sse`, which yields a negotiated
`ClientSession`:

- On entry it GETs the URL (``Accept: text/event-stream``) and waits, up to
  `timeout` seconds, for the ``endpoint`` event. The endpoint is resolved
  against the URL and refused when it is on another origin
  (`probe.legacy_endpoint`, as both SDKs do). Any other answer fails entry
  with `TransportError`: a status other than 200, another content type, a
  stream that ends first.
- A background task reads the stream with `SSEParser`. `receive` returns
  the data of each ``message`` event; events with empty data are skipped,
  as the Python SDK skips them. Other event types and later ``endpoint``
  events are ignored. An event over `max_event_size` bytes makes `receive`
  raise `EventTooLongError` (the engine answers it and reads on), before
  the other events that arrived in the same chunk. The end of the stream
  is `anyio.EndOfStream`; a stream that broke is `TransportError`.
- `send` POSTs one message to the endpoint. Any 2xx is success (the SDKs
  answer 202). 404 or 410 mean the session is gone, which raises
  `anyio.BrokenResourceError`, as does any send once the stream has ended.
  Other statuses and network failures raise `TransportError`. Concurrent
  sends are concurrent POSTs: each message is one whole body.
- The stream is never reopened: a new GET would be a new session, which the
  engine cannot carry on with. The SSE read has no timeout unless
  `sse_read_timeout` is set, because the TypeScript SDK's server sends no
  keep-alives. Redirects are not followed by the client made here.
- `connect_legacy_sse` offers 2024-11-05 by default, the one revision this
  transport belongs to. `versions=` overrides it, since servers of later
  revisions often still serve this transport.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import parse_qs, quote

import anyio

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.jsonrpc.envelope import BadMessage, RequestId

from ...errors import MessageTooLargeError, TransportError
from .asgi import (
    Message,
    Receive,
    Scope,
    Send,
    closing,
    read_body,
    respond,
    serve_lifespan,
    start_sse,
)
from .auth import (
    AuthChallenge,
    HttpRequest,
    authenticate_with,
    authorize_requests,
    request_of,
)
from .extra import missing_http_extra
from .headers import (
    PROTOCOL_VERSION_HEADER,
    HttpError,
    HttpHeaders,
    media_type,
)
from .messages import read_messages, refusal
from .probe import legacy_endpoint
from .security import (
    SecurityPolicy,
    check_accept,
    check_content_length,
    check_content_type,
    check_host,
    check_origin,
)
from .sessions import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
    SESSION_ID_HEADER,
    SessionLimitError,
    SessionRegistry,
    is_valid_session_id,
)
from .sse import (
    DEFAULT_MAX_EVENT_SIZE,
    EventTooLongError,
    SSEParser,
    encode_comment,
    encode_event,
)

if TYPE_CHECKING:
    from collections.abc import (
        AsyncGenerator,
        Awaitable,
        Callable,
        Collection,
        Generator,
        Mapping,
        Sequence,
    )
    from types import TracebackType
    from typing import Self

    import httpx
    from anyio.abc import TaskGroup, TaskStatus
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from mcp_specgen_runtime.jsonrpc.connection import RequestId
    from mcp_specgen_runtime.protocol.client import ClientSession
    from mcp_specgen_runtime.protocol.session import ServerSession

    from .auth import HttpAuth

__all__ = [
    "DEFAULT_BUFFER",
    "DEFAULT_KEEPALIVE_S",
    "DEFAULT_TIMEOUT_S",
    "LEGACY_SSE_VERSION",
    "SESSION_QUERY_PARAMETER",
    "AsgiApp",
    "LegacySseApp",
    "LegacySseClientTransport",
    "connect_legacy_sse",
    "serve_legacy_sse",
]

logger = logging.getLogger(__name__)

LEGACY_SSE_VERSION: Final = "2024-11-05"
"""The revision that defines the HTTP+SSE transport."""
SESSION_QUERY_PARAMETER: Final = "session_id"
"""The query parameter of the endpoint URL naming the session (the Python
SDK's name; the TypeScript SDK's server says ``sessionId``)."""
DEFAULT_KEEPALIVE_S: Final = 15.0
"""Seconds between keep-alive comments on a silent stream."""
CLOSE_TIMEOUT_S: Final = 5.0
"""Seconds `aclose` waits for the sessions' requests to finish (as
`McpHttpApp.aclose` does for its own)."""
CANCELLED_GRACE_S: Final = 1.0
"""Seconds `aclose` then gives the requests it cancelled to unwind."""
DEFAULT_BUFFER: Final = 64
"""Messages that may wait in each direction of a session before senders wait."""
DEFAULT_TIMEOUT_S: Final = 30.0
"""Seconds the client waits to connect and get the endpoint (and, with its own
HTTP client, for each POST)."""

SSE: Final = "text/event-stream"
JSON: Final = "application/json"

AsgiApp: TypeAlias = "Callable[[Scope, Receive, Send], Awaitable[None]]"
"""An ASGI 3 application (`McpHttpApp` is one)."""

_Incoming: TypeAlias = bytes | MessageTooLargeError
_Posted: TypeAlias = "tuple[bytes, HttpRequest | None]"


# --- the server ------------------------------------------------------------------


class _SessionTransport:
    """The server side of one session: POSTed bodies in, stream events out."""

    def __init__(self, buffer: int) -> None:
        out_send, out_receive = anyio.create_memory_object_stream[bytes](buffer)
        in_send, in_receive = anyio.create_memory_object_stream[_Posted](buffer)
        self._out_send: MemoryObjectSendStream[bytes] = out_send
        self.outgoing: MemoryObjectReceiveStream[bytes] = out_receive
        self._in_send: MemoryObjectSendStream[_Posted] = in_send
        self._in_receive: MemoryObjectReceiveStream[_Posted] = in_receive
        self.closed = False
        self.principal: object = None
        """The caller of the latest POST (None without authentication)."""
        # The engine reads a body's requests before it receives the next
        # body, so the POST of the body received last is theirs.
        self._received_from: HttpRequest | None = None

    async def feed(self, body: bytes, request: HttpRequest | None = None) -> None:
        """Queue one POSTed body (and the POST, `request`) for the engine.

        Raises:
            anyio.ClosedResourceError, anyio.BrokenResourceError: the session
                has ended.
        """
        await self._in_send.send((body, request))

    def end(self) -> None:
        """End the session: the engine sees end of stream, and the stream
        ends once the messages already queued are written."""
        self.closed = True
        self._in_send.close()
        self._out_send.close()

    # -- the Transport protocol --

    def principal_of(self, request_id: RequestId) -> object:
        """Who sent a request: the session's caller."""
        return self.principal

    def http_request_of(self, request_id: RequestId) -> object:
        """The POST that carried a request: that of the body received last."""
        return self._received_from

    async def send(self, message: bytes) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        await self._out_send.send(message)

    async def receive(self) -> bytes:
        body, self._received_from = await self._in_receive.receive()
        return body

    async def aclose(self) -> None:
        # The engine is done; what it queued is still written out.
        self.end()
        self._in_receive.close()

    def discard(self) -> None:
        """End the session and drop whatever is queued either way."""
        self.end()
        self._in_receive.close()
        self.outgoing.close()


@dataclass(eq=False)
class _Session:
    transport: _SessionTransport
    connection: Connection


class _Refused(Exception):
    """An HTTP error answer, raised to unwind to the request's top."""

    def __init__(
        self,
        error: HttpError,
        headers: Mapping[str, str] | None = None,
        reply_id: RequestId | None = None,
    ):
        super().__init__(error.message)
        self.error = error
        self.headers = dict(headers or {})
        self.reply_id = reply_id


class LegacySseApp:
    """The ASGI app of the HTTP+SSE transport; see the module docstring.

    Args:
        session: what to serve (its legacy revisions: the handshake decides).
        sse_path: the path of the GET stream.
        message_path: the path POSTs go to (named in the endpoint event).
        policy: the security guards (default: `SecurityPolicy.for_bind` of
            127.0.0.1 on any port, i.e. local clients only).
        idle_timeout_s: seconds without a POST before a session is ended;
            None (the default) for never: sessions end with their stream.
        max_sessions: streams open at once; None for no limit.
        max_sessions_per_principal: streams one caller may hold; None for no
            limit.
        keepalive_s: seconds between keep-alive comments; None for none.
        buffer: messages that may wait in each direction of a session.
        fallback: the ASGI app for everything else (e.g. `McpHttpApp`);
            None answers other paths 404 and other methods 405.
        authenticate: called with each request; return who it is, or None
            to answer 401 (or raise `AuthChallenge`), as in `McpHttpApp`.
        auth: an authorization layer (`HttpAuth`): its `authenticate`
            replaces the hook; None for none.
        required_scopes: the scopes a request needs, by method and params,
            checked with `auth` before a POST reaches its session.
    """

    def __init__(
        self,
        session: ServerSession,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages",
        policy: SecurityPolicy | None = None,
        idle_timeout_s: float | None = None,
        max_sessions: int | None = DEFAULT_MAX_SESSIONS,
        max_sessions_per_principal: int | None = DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
        keepalive_s: float | None = DEFAULT_KEEPALIVE_S,
        buffer: int = DEFAULT_BUFFER,
        fallback: AsgiApp | None = None,
        authenticate: Callable[[HttpRequest], Awaitable[object]] | None = None,
        auth: HttpAuth | None = None,
        required_scopes: (
            Callable[[str, Mapping[str, Any]], Collection[str]] | None
        ) = None,
    ) -> None:
        for name, path in (("sse_path", sse_path), ("message_path", message_path)):
            if not path.startswith("/") or "?" in path or "#" in path:
                raise ValueError(f"{name} must be a path starting with /: {path!r}")
        if sse_path == message_path:
            raise ValueError(f"sse_path and message_path are both {sse_path!r}")
        if keepalive_s is not None and not keepalive_s > 0:
            raise ValueError(f"keepalive_s must be positive: {keepalive_s}")
        if buffer < 0:
            raise ValueError(f"buffer must not be negative: {buffer}")
        if auth is not None and authenticate is not None:
            raise ValueError("give authenticate or auth, not both")
        self.session = session
        self.sse_path = sse_path
        self.message_path = message_path
        self.policy = policy or SecurityPolicy.for_bind("127.0.0.1", 0)
        self.keepalive_s = keepalive_s
        self.buffer = buffer
        self.fallback = fallback
        self.authenticate = auth.authenticate if auth is not None else authenticate
        self.auth = auth
        self.required_scopes = required_scopes
        self.sessions: SessionRegistry[_Session] = SessionRegistry(
            idle_timeout_s=idle_timeout_s,
            max_sessions=max_sessions,
            max_sessions_per_owner=max_sessions_per_principal,
            on_expire=lambda _id, state: state.transport.end(),
        )
        # The GET requests' tasks, running their sessions (awaited by aclose).
        self._streams: set[asyncio.Task[Any]] = set()

    def endpoint_url(self, session_id: str) -> str:
        """The URL (relative) the endpoint event names for a session."""
        return f"{quote(self.message_path)}?{SESSION_QUERY_PARAMETER}={session_id}"

    async def aclose(self) -> None:
        """End every session (their streams end once flushed), and wait up
        to `CLOSE_TIMEOUT_S` for their requests to finish, the calls they
        run included (those still running are then cancelled, and given
        `CANCELLED_GRACE_S` to unwind): at lifespan shutdown, the app's
        lifespan exits after this."""
        for _, state in self.sessions.close_all():
            state.transport.end()
        if self._streams:
            _, pending = await asyncio.wait(self._streams, timeout=CLOSE_TIMEOUT_S)
            for task in pending:
                task.cancel()
            if pending:
                logger.warning("%d HTTP+SSE streams were cancelled", len(pending))
                await asyncio.wait(pending, timeout=CANCELLED_GRACE_S)

    @contextmanager
    def _serving(self) -> Generator[None]:
        """Count the current task among the streams `aclose` waits for."""
        task = asyncio.current_task()
        if task is None:  # not asyncio: nothing to wait for
            yield
            return
        self._streams.add(task)
        try:
            yield
        finally:
            self._streams.discard(task)

    # -- ASGI --

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if kind != "http":
            if self.fallback is not None:
                await self.fallback(scope, receive, send)
            return
        path = scope.get("path")
        if self.fallback is not None and path not in (self.sse_path, self.message_path):
            # Not ours: hand over before parsing anything (the hot path of a
            # Streamable HTTP server with these endpoints in front).
            await self.fallback(scope, receive, send)
            return
        method: str = scope["method"]
        headers = HttpHeaders.from_asgi(scope["headers"])
        try:
            if path == self.sse_path and method == "GET" and self._legacy_get(headers):
                principal = await self._authenticate(scope, headers)
                with self._serving():
                    await self._get(headers, receive, send, principal)
            elif path == self.message_path and method == "POST":
                principal = await self._authenticate(scope, headers)
                await self._post(scope, headers, receive, send, principal)
            elif self.fallback is not None:
                await self.fallback(scope, receive, send)
            elif path == self.sse_path:
                raise _Refused(
                    HttpError(405, f"Method not allowed: {method}"), {"allow": "GET"}
                )
            elif path == self.message_path:
                raise _Refused(
                    HttpError(405, f"Method not allowed: {method}"), {"allow": "POST"}
                )
            else:
                raise _Refused(HttpError(404, "Not Found"))
        except _Refused as refusal:
            error = refusal.error
            body = error.body(refusal.reply_id)
            await respond(send, error.status, body, JSON, refusal.headers)
        except AuthChallenge as challenge:
            refused = HttpError(challenge.status, challenge.message)
            extra = {"www-authenticate": challenge.www_authenticate}
            await respond(send, challenge.status, refused.body(), JSON, extra)

    async def _authenticate(self, scope: Scope, headers: HttpHeaders) -> object:
        """The caller (None without `authenticate`), after the Host and Origin
        guards.

        Raises:
            AuthChallenge: `authenticate` refused the request.
        """
        if self.authenticate is None:
            return None
        refused = check_host(headers, self.policy) or check_origin(headers, self.policy)
        if refused is not None:
            raise _Refused(refused)
        return await authenticate_with(self.authenticate, scope, headers)

    def _legacy_get(self, headers: HttpHeaders) -> bool:
        """Whether a GET at `sse_path` is ours: not a Streamable HTTP client's
        standalone stream (when a fallback can take that)."""
        if self.fallback is None:
            return True
        return (
            SESSION_ID_HEADER not in headers and PROTOCOL_VERSION_HEADER not in headers
        )

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.fallback is not None:

            async def receive_closing() -> Message:
                message = await receive()
                if message["type"] == "lifespan.shutdown":
                    await self.aclose()
                return message

            await self.fallback(scope, receive_closing, send)
            return
        await serve_lifespan(receive, send, self.aclose)

    # -- GET: one session --

    async def _get(
        self,
        headers: HttpHeaders,
        receive: Receive,
        send: Send,
        principal: object = None,
    ) -> None:
        refused = (
            check_host(headers, self.policy)
            or check_origin(headers, self.policy)
            or check_accept(headers, "GET")
        )
        if refused is not None:
            raise _Refused(refused)
        transport = _SessionTransport(self.buffer)
        transport.principal = principal
        state = _Session(transport, Connection(transport, self.session.handler()))
        try:
            session_id = self.sessions.create(state, principal)
        except SessionLimitError:
            transport.discard()
            raise _Refused(
                HttpError(503, "Too many sessions; try again later"),
                {"retry-after": "30"},
            ) from None
        logger.debug("legacy SSE session %.8s... opened", session_id)
        try:
            await start_sse(send, cache_control=b"no-cache, no-transform")
            endpoint = self.endpoint_url(session_id).encode("utf-8")
            await _write(send, encode_event(endpoint, event="endpoint"))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(state.connection.run)
                tasks.start_soon(
                    self._watch_disconnect, receive, session_id, tasks, principal
                )
                await self._write_messages(transport, send)
                await send({"type": "http.response.body", "body": b""})
                tasks.cancel_scope.cancel()
        finally:
            self._forget(session_id, principal)
            transport.discard()
            with anyio.CancelScope(shield=True):
                await state.connection.aclose()

    async def _watch_disconnect(
        self, receive: Receive, session_id: str, tasks: TaskGroup, owner: object
    ) -> None:
        """Forget the session as soon as its client goes away (so the
        connection is closed after its id is gone), then stop serving it."""
        while (await receive())["type"] != "http.disconnect":
            pass
        self._forget(session_id, owner)
        tasks.cancel_scope.cancel()

    def _forget(self, session_id: str, owner: object = None) -> None:
        if self.sessions.close(session_id, owner) is not None:
            logger.debug("legacy SSE session %.8s... ended", session_id)

    async def _write_messages(self, transport: _SessionTransport, send: Send) -> None:
        """Write the session's messages as events until the session ends."""
        while True:
            message: bytes | None = None
            with anyio.move_on_after(self.keepalive_s):
                try:
                    message = await transport.outgoing.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
            if message is None:
                self.sessions.sweep()
                await _write(send, encode_comment("keepalive"))
            else:
                await _write(send, encode_event(message, event="message"))

    # -- POST: one message --

    async def _post(
        self,
        scope: Scope,
        headers: HttpHeaders,
        receive: Receive,
        send: Send,
        principal: object = None,
    ) -> None:
        refused = (
            check_host(headers, self.policy)
            or check_origin(headers, self.policy)
            or check_content_type(headers)
            or check_content_length(headers, self.policy)
        )
        if refused is not None:
            raise _Refused(refused)
        session_id = _session_id(scope)
        with self.sessions.use(session_id, principal) as state:
            if state is None:
                raise _Refused(HttpError(404, "Session not found (unknown or ended)"))
            body = await read_body(receive, self.policy)
            if isinstance(body, HttpError):
                raise _Refused(body, closing(body))
            try:
                message = read_messages(body)
            except BadMessage as bad:
                if bad.response_id is not None:
                    # The engine fails the request of the server's it answers.
                    await self._feed(state, body)
                raise _Refused(refusal(bad), reply_id=bad.reply_id) from None
            authorize_requests(self.auth, self.required_scopes, principal, message)
            state.transport.principal = principal
            await self._feed(state, body, request_of(scope, headers))
        await respond(send, 202, b"Accepted", "text/plain; charset=utf-8")

    @staticmethod
    async def _feed(
        state: _Session, body: bytes, request: HttpRequest | None = None
    ) -> None:
        try:
            await state.transport.feed(body, request)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise _Refused(HttpError(404, "Session not found (ended)")) from None


def _session_id(scope: Scope) -> str:
    """The session id of a POST's query string; 400 when absent or bad."""
    raw: bytes = scope.get("query_string", b"")
    query = parse_qs(raw.decode("latin-1"), keep_blank_values=True)
    values = query.get(SESSION_QUERY_PARAMETER, [])
    if not values:
        raise _Refused(
            HttpError(400, f"Bad Request: the {SESSION_QUERY_PARAMETER} is required")
        )
    if len(values) > 1 or not is_valid_session_id(values[0]):
        raise _Refused(
            HttpError(400, f"Bad Request: invalid {SESSION_QUERY_PARAMETER}")
        )
    return values[0]


async def _write(send: Send, chunk: bytes) -> None:
    await send({"type": "http.response.body", "body": chunk, "more_body": True})


def serve_legacy_sse(
    session: ServerSession,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    timeout_graceful_shutdown: int = 5,
    **options: Any,
) -> None:
    """Serve `session` over HTTP+SSE with uvicorn until interrupted.

    Binds 127.0.0.1 unless told otherwise; the security policy follows the
    bind address (`SecurityPolicy.for_bind`). `options` go to `LegacySseApp`
    (a `fallback` such as `McpHttpApp` included). Open streams are cut
    `timeout_graceful_shutdown` seconds after an interrupt.

    Raises:
        ImportError: uvicorn is not installed (the `http` extra).
    """
    try:
        import uvicorn
    except ImportError as exc:
        raise missing_http_extra(exc) from exc

    options.setdefault("policy", SecurityPolicy.for_bind(host, port))
    app = LegacySseApp(session, **options)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=timeout_graceful_shutdown,
    )


# --- the client ------------------------------------------------------------------


class LegacySseClientTransport:
    """The client side of the HTTP+SSE transport; see the module docstring.

    Use it as an async context manager::

        async with LegacySseClientTransport("http://127.0.0.1:8000/sse") as t:
            async with ClientSession(t, name="me", version="1") as session:
                ...

    Args:
        url: the SSE endpoint.
        http_client: the `httpx.AsyncClient` to use (left open); None makes
            one for the transport's lifetime.
        headers: sent with the GET and every POST (e.g. Authorization).
        timeout: seconds to connect and get the endpoint event (and, with
            the client made here, for each POST).
        sse_read_timeout: seconds the stream may stay silent; None for ever.
        max_event_size: bytes one event may hold (see `SSEParser`).
        buffer: messages read ahead of `receive`.

    Attributes:
        endpoint: the URL messages are POSTed to (once entered).
    """

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        sse_read_timeout: float | None = None,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        buffer: int = DEFAULT_BUFFER,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.max_event_size = max_event_size
        self.endpoint: str | None = None
        self.buffer = buffer
        self._given_client = http_client
        self._http: httpx.AsyncClient | None = None
        # Made on entry (an unentered transport holds nothing to close).
        self._in_receive: MemoryObjectReceiveStream[_Incoming] | None = None
        self._failure: BaseException | None = None
        self._ended = False
        self._closed = False
        self._entered = False
        # The reader's own scope: the task group's would cancel the code
        # running inside `async with transport` too.
        self._reader_scope = anyio.CancelScope()
        self._stack: AsyncExitStack | None = None

    # -- lifecycle --

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError("the transport was already entered")
        self._entered = True
        import httpx

        sender, receiver = anyio.create_memory_object_stream[_Incoming](self.buffer)
        self._in_receive = receiver
        stack = AsyncExitStack()
        try:
            client = self._given_client
            if client is None:
                client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
                stack.push_async_callback(_close_client, client)
            self._http = client
            tasks = await stack.enter_async_context(anyio.create_task_group())
            try:
                with anyio.fail_after(self.timeout):
                    self.endpoint = await tasks.start(self._read_stream, client, sender)
            except TimeoutError:
                raise TransportError(
                    f"no endpoint event from {self.url} within {self.timeout} s"
                ) from None
        except BaseException:
            self._closed = True
            receiver.close()
            sender.close()
            self._reader_scope.cancel()
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
        stack, self._stack = self._stack, None
        if stack is not None:
            # Not shielded: the task group's scope must be exited as it was
            # entered (the reader is cancelled already; the client's close is
            # shielded on its own).
            await stack.aclose()

    async def aclose(self) -> None:
        """Close the stream (the server ends the session). Idempotent."""
        self._closed = True
        if self._in_receive is not None:
            self._in_receive.close()
        self._reader_scope.cancel()

    # -- reading the stream --

    async def _read_stream(
        self,
        client: httpx.AsyncClient,
        queue: MemoryObjectSendStream[_Incoming],
        *,
        task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Open the stream, report the endpoint, then put messages on `queue`
        until the stream ends or `aclose`. Fails (raising) only before the
        endpoint."""
        with self._reader_scope:
            await self._read(client, queue, task_status)

    async def _read(
        self,
        client: httpx.AsyncClient,
        queue: MemoryObjectSendStream[_Incoming],
        task_status: TaskStatus[str],
    ) -> None:
        import httpx

        headers = {**self.headers, "accept": SSE, "cache-control": "no-cache"}
        timeout = httpx.Timeout(self.timeout, read=self.sse_read_timeout)
        endpoint: str | None = None
        try:
            request = client.build_request(
                "GET", self.url, headers=headers, timeout=timeout
            )
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise TransportError(f"cannot open {self.url}: {exc!r}") from exc
        try:
            _check_stream_response(response, self.url)
            parser = SSEParser(self.max_event_size)
            async for chunk in response.aiter_bytes():
                try:
                    events = parser.feed(chunk)
                except EventTooLongError as exc:
                    # Reported first: where in the chunk it was is unknown.
                    events = exc.events
                    await queue.send(exc)
                for event in events:
                    if event.event == "endpoint":
                        if endpoint is None:
                            endpoint = self._endpoint(event)
                            task_status.started(endpoint)
                        else:
                            logger.info("a second endpoint event was ignored")
                    elif event.event == "message":
                        if event.data.strip():
                            await queue.send(event.data)
                    else:
                        logger.debug("an SSE event %r was ignored", event.event)
            if endpoint is None:
                raise TransportError(
                    f"the stream of {self.url} ended before its endpoint event"
                )
            logger.debug("the SSE stream of %s ended", self.url)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # closed locally: nobody reads any more
        except Exception as exc:
            if endpoint is None:
                if isinstance(exc, httpx.HTTPError):
                    raise TransportError(f"reading {self.url}: {exc!r}") from exc
                raise
            logger.debug("the SSE stream of %s failed: %r", self.url, exc)
            self._failure = exc
        finally:
            self._ended = True
            queue.close()
            with anyio.CancelScope(shield=True):
                await response.aclose()

    def _endpoint(self, event: Any) -> str:
        try:
            found = legacy_endpoint(event, self.url)
        except ValueError as exc:
            raise TransportError(f"refused endpoint: {exc}") from None
        assert found is not None
        return found

    # -- the Transport protocol --

    async def receive(self) -> bytes:
        """The next message from the server.

        Raises:
            anyio.EndOfStream: the stream ended.
            anyio.ClosedResourceError: the transport was closed.
            EventTooLongError: an event over `max_event_size` was skipped.
            TransportError: the stream broke.
        """
        if self._in_receive is None:
            raise anyio.ClosedResourceError
        try:
            item = await self._in_receive.receive()
        except anyio.EndOfStream:
            if self._failure is not None:
                raise TransportError(
                    f"the SSE stream broke: {self._failure!r}"
                ) from self._failure
            raise
        if isinstance(item, MessageTooLargeError):
            raise item
        return item

    async def send(self, message: bytes) -> None:
        """POST one message to the endpoint.

        Raises:
            anyio.ClosedResourceError: the transport was closed (or never
                entered).
            anyio.BrokenResourceError: the session is gone (the stream
                ended, or the server answered 404 or 410).
            TransportError: any other failure.
        """
        if self._closed or self._http is None or self.endpoint is None:
            raise anyio.ClosedResourceError
        if self._ended:
            raise anyio.BrokenResourceError
        import httpx

        headers = {**self.headers, "content-type": JSON}
        try:
            response = await self._http.post(
                self.endpoint, content=message, headers=headers
            )
        except httpx.HTTPError as exc:
            raise TransportError(f"POST to {self.endpoint}: {exc!r}") from exc
        if response.status_code in (404, 410):
            raise anyio.BrokenResourceError
        if not 200 <= response.status_code < 300:
            text = response.text[:200]
            raise TransportError(
                f"POST to {self.endpoint} answered HTTP {response.status_code}: "
                f"{text!r}"
            )


async def _close_client(client: httpx.AsyncClient) -> None:
    with anyio.CancelScope(shield=True):
        await client.aclose()


def _check_stream_response(response: httpx.Response, url: str) -> None:
    if response.status_code != 200:
        raise TransportError(f"GET {url} answered HTTP {response.status_code}")
    kind = media_type(response.headers.get("content-type"))
    if kind != SSE:
        raise TransportError(f"GET {url} answered {kind}, not an event stream")


@asynccontextmanager
async def connect_legacy_sse(
    url: str,
    *,
    name: str,
    version: str,
    http_client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
    versions: Sequence[str] | None = (LEGACY_SSE_VERSION,),
    timeout: float = DEFAULT_TIMEOUT_S,  # noqa: ASYNC109 - the transport's
    **session_options: Any,
) -> AsyncGenerator[ClientSession]:
    """Open an HTTP+SSE stream, negotiate, and yield the session::

        async with connect_legacy_sse(url, name="me", version="1") as session:
            ...

    `versions` are the protocol versions offered (2024-11-05 unless told;
    None for the `ClientSession` default). `session_options` go to
    `ClientSession`; the rest to `LegacySseClientTransport`.
    """
    from mcp_specgen_runtime.protocol.client import ClientSession

    async with (
        LegacySseClientTransport(
            url, http_client=http_client, headers=headers, timeout=timeout
        ) as transport,
        ClientSession(
            transport,
            name=name,
            version=version,
            versions=versions,
            **session_options,
        ) as session,
    ):
        yield session

"""The client side of Streamable HTTP, both eras: `HttpClientTransport` and
`connect_http`.

    async with connect_http("http://127.0.0.1:8000/mcp", name="me", version="1") as s:
        tools = await v2025_11_25.Client(s).list_tools()

`HttpClientTransport` is a `Transport` for `ClientSession`: every message
`send` is given is one POST (httpx), and whatever the server answers comes
out of `receive`. The era is read off each message, not configured: a request
whose `params._meta` names a protocol version is a 2026 request; anything
else belongs to the legacy (2025) session, if any. The transport owns a
`client_sse.StreamReader` (SSE answers, resumed when they break, and the
standalone GET stream) and a `client_tools.ToolHeaders` (the 2026
`Mcp-Param-*` headers of a `tools/call`, and the retry after -32020);
`client_messages` reads the messages it carries. Decisions worth knowing:

- `send` returns once the response's status and headers are in (and, for a
  JSON answer, its body; an SSE answer is read by a background task), so an
  HTTP failure surfaces with the message that caused it. A request answered
  with an HTTP error is answered with a JSON-RPC error for its id: the body's
  own error when it holds one (whatever id the body names), else a
  synthesized one (-32600 for 4xx, -32603 otherwise, `data: {"status": ...}`).
  So a legacy server refusing the `server/discover` probe (400, 404, 405)
  fails that request with an error other than -32022, and `ClientSession`
  falls back to `initialize`, as `probe.classify_modern` reads it.
- `initialize` answered 400, 404 or 405 (without a -32022 naming a version to
  retry: `probe.client_refusal`) raises `LegacyServerError` from `send`: no
  Streamable HTTP here; `connect_http` then tries the deprecated HTTP+SSE
  transport at the same URL (`fallback`).
- Legacy session: `Mcp-Session-Id` is taken from the `initialize` response
  and sent on every later request, with `MCP-Protocol-Version` set to the
  version the `initialize` result names (read as it passes through). Once
  `notifications/initialized` is accepted, the standalone GET stream is opened
  in the background (405: the server offers none). `aclose` cancels the
  streams and sends DELETE.
- 404 to a request carrying the session id (unless its body is a -32601
  error: an unknown method): the session is gone. `send` raises
  `SessionExpiredError` (and keeps raising it, without POSTing, until a new
  `initialize` succeeds: `await session.negotiate()` starts one). With
  `reinitialize=True` the transport replays the session's `initialize` and
  `notifications/initialized` itself (the server must answer the same
  version), then sends the message again; state the server kept for the old
  session (subscriptions, log level) is not restored.
- Cancellation: `notifications/cancelled` for a 2026 request is not POSTed;
  the request's response stream is closed instead (the 2026 way to cancel).
  For a legacy request it is POSTed, and the request's stream closed. A
  legacy request whose `send` is cancelled before the answer started gets a
  `notifications/cancelled` from the transport.
- Timeouts: `timeout` bounds connecting, writing and waiting for a pool
  connection; `read_timeout` the wait for each piece of a POST's answer (a
  long tool call answered with JSON waits this long); the standalone stream
  waits for ever. Redirects are not followed.
- Authorization: `auth` (an `httpx.Auth`) goes with every HTTP request the
  transport sends (`_open`, `_get`, `_delete`); `connect_http` gives it to
  the httpx client it makes instead.
"""

from __future__ import annotations

import dataclasses
import logging
import typing
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx

from mcp_specgen_runtime.jsonrpc.envelope import error_reply

from ...errors import ErrorCode, MessageTooLargeError, RpcError, TransportError
from .client_bodies import close, read_body, read_some
from .client_messages import (
    INITIALIZE,
    INITIALIZED,
    TOOLS_LIST,
    Post,
    cancel_notice,
    describe,
    error_object,
    excerpt,
    negotiated_version,
    replies,
    reply_with,
)
from .client_sse import MAX_RECONNECTS, StreamReader
from .client_tools import ToolHeaders
from .fallback import LegacyServerError, legacy_sse_session
from .headers import HEADER_MISMATCH, PROTOCOL_VERSION_HEADER, media_type
from .probe import client_refusal
from .sessions import SESSION_ID_HEADER
from .sse import DEFAULT_MAX_EVENT_SIZE

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Iterable, Mapping
    from types import TracebackType
    from typing import Self

    from anyio.abc import TaskGroup, TaskStatus

    from mcp_specgen_runtime.jsonrpc.connection import RequestId
    from mcp_specgen_runtime.protocol.client import ClientSession

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "MAX_RECONNECTS",
    "HttpClientTransport",
    "LegacyServerError",
    "SessionExpiredError",
    "connect_http",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds to connect, write a request, or wait for a pooled connection."""
DEFAULT_READ_TIMEOUT: Final = 300.0
"""Seconds to wait for each piece of a POST's answer."""
CLOSE_TIMEOUT: Final = 5.0
"""Seconds the DELETE ending a session may take."""
ERROR_BODY_LIMIT: Final = 64 * 1024
"""Bytes of an HTTP error answer read."""

_JSON = "application/json"
_SSE = "text/event-stream"
_ACCEPT = f"{_JSON}, {_SSE}"
_LAST_EVENT_ID = "Last-Event-ID"
METHOD_NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)


class SessionExpiredError(TransportError):
    """The server answered 404 to a request carrying the legacy session id:
    the session is gone, and a new `initialize` must start another (e.g.
    `await session.negotiate()`)."""


class HttpClientTransport:
    """A `Transport` over Streamable HTTP (see the module docstring); enter it
    with ``async with`` before use.

    Args:
        url: the MCP endpoint.
        http_client: the httpx client to use (the caller closes it); by
            default the transport makes one with `timeout` and `read_timeout`.
        headers: extra headers of every HTTP request (e.g. authorization).
        auth: httpx authentication of every HTTP request.
        timeout: seconds to connect, write, or wait for a pooled connection.
        read_timeout: seconds to wait for each piece of a POST's answer (None:
            no limit).
        reinitialize: start a new session by itself when the legacy session
            expires (404), instead of raising `SessionExpiredError`.
        standalone_stream: open the legacy session's GET stream.
        max_message_size: bytes one incoming message may hold.

    Attributes:
        session_id: the legacy session's id (None: none, or no session).
        protocol_version: the legacy version `initialize` settled.
    """

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        read_timeout: float | None = DEFAULT_READ_TIMEOUT,
        reinitialize: bool = False,
        standalone_stream: bool = True,
        max_message_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        self.url = url
        self._client: httpx.AsyncClient | None = http_client
        self._timeout = httpx.Timeout(timeout, read=read_timeout)
        self.headers = dict(headers or {})
        self._auth = httpx.USE_CLIENT_DEFAULT if auth is None else auth
        self.reinitialize = reinitialize
        self.standalone_stream = standalone_stream
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.expired = False
        """The legacy session is gone (404) and no new one was started yet."""
        sender, receiver = anyio.create_memory_object_stream[bytes](float("inf"))
        self._incoming_send = sender
        self._incoming = receiver
        self._streams = StreamReader(
            open_get=self._get,
            deliver=self._deliver,
            fail=self._fail,
            queue=self._queue,
            max_message_size=max_message_size,
        )
        self._tools = ToolHeaders()
        self._initialize: bytes | None = None
        self._initialized: bytes | None = None
        self._lock: anyio.Lock | None = None
        self._tasks: TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        self._closed = False

    @property
    def max_message_size(self) -> int:
        """Bytes one incoming message may hold."""
        return self._streams.max_message_size

    @max_message_size.setter
    def max_message_size(self, value: int) -> None:
        self._streams.max_message_size = value

    # -- lifecycle --

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        if self._client is None:
            client = httpx.AsyncClient(timeout=self._timeout)
            self._client = client
            stack.push_async_callback(client.aclose)
        tasks = await stack.enter_async_context(anyio.create_task_group())
        self._lock = anyio.Lock()
        await tasks.start(self._run)
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True):
            await self.aclose()
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def _run(self, *, task_status: TaskStatus[None]) -> None:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            task_status.started()
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        """Stop the streams, end the legacy session (DELETE) and close:
        `send` and `receive` then raise `anyio.ClosedResourceError`.
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._tasks is not None:
            self._tasks.cancel_scope.cancel()
        try:
            if self.session_id is not None and not self.expired:
                await self._delete(self.session_id)
        finally:
            self._incoming_send.close()
            self._incoming.close()

    async def _delete(self, session_id: str) -> None:
        headers = self._headers({SESSION_ID_HEADER: session_id})
        if self.protocol_version is not None:
            headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
        with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
            try:
                client = self._http()
                request = client.build_request("DELETE", self.url, headers=headers)
                response = await client.send(request, auth=self._auth)
            except (httpx.HTTPError, RuntimeError) as exc:
                logger.debug("DELETE of the session failed: %r", exc)
                return
            if response.status_code not in (200, 202, 204, 404, 405):
                logger.warning(
                    "DELETE of the session answered HTTP %d", response.status_code
                )

    def _http(self) -> httpx.AsyncClient:
        if self._client is None or self._tasks is None:
            raise RuntimeError("enter the transport with `async with` first")
        return self._client

    def _headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        return {**self.headers, **extra}

    # -- the Transport protocol --

    async def receive(self) -> bytes:
        """The next message from the server.

        Raises:
            anyio.ClosedResourceError: the transport was closed.
        """
        return await self._incoming.receive()

    async def send(self, message: bytes) -> None:
        """POST one message; its answer is queued for `receive`.

        Raises:
            anyio.ClosedResourceError: the transport is closed.
            SessionExpiredError: the legacy session is gone (404).
            LegacyServerError: `initialize` was refused with 400, 404 or 405.
            TransportError: the HTTP request failed.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        self._http()
        post = describe(message)
        if post.cancels is not None:
            modern = self._streams.modern(post.cancels)
            if modern or (modern is None and self.protocol_version is None):
                # 2026: closing the response stream is the cancellation.
                self._streams.cancel(post.cancels)
                return
        if post.method == INITIALIZE:
            self._initialize = message
        elif post.method == INITIALIZED:
            self._initialized = message
        await self._post(post)
        if post.cancels is not None:
            self._streams.cancel(post.cancels)

    # -- POST --

    def _post_headers(self, post: Post) -> dict[str, str]:
        headers = {"Accept": _ACCEPT, "Content-Type": _JSON}
        if post.version is not None:
            headers.update(post.headers)
            if post.tool is not None:
                headers.update(self._tools.headers_for(post))
        elif post.method != INITIALIZE:
            if self.session_id is not None:
                headers[SESSION_ID_HEADER] = self.session_id
            if self.protocol_version is not None:
                headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
        return self._headers(headers)

    async def _open(self, post: Post, headers: dict[str, str]) -> httpx.Response:
        client = self._http()
        request = client.build_request(
            "POST", self.url, content=post.body, headers=headers
        )
        try:
            return await client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url} failed: {exc!r}") from exc

    async def _post(self, post: Post, *, retried: bool = False) -> None:
        if self.expired and post.method != INITIALIZE and post.version is None:
            if not self.reinitialize:
                raise SessionExpiredError(
                    "the HTTP session expired; initialize a new one"
                )
            await self._reinitialize()
        headers = self._post_headers(post)
        sent_session = headers.get(SESSION_ID_HEADER)
        try:
            response = await self._open(post, headers)
        except anyio.get_cancelled_exc_class():
            self._cancelled_early(post)
            raise
        try:
            if response.status_code == 404 and sent_session is not None:
                body = await read_some(response, ERROR_BODY_LIMIT)
                error = error_object(body)
                if error is not None and error.get("code") == METHOD_NOT_FOUND:
                    # The 2026 spelling of an unknown method, not an expiry.
                    for request_id in post.request_ids:
                        self._queue(reply_with(request_id, error))
                    await close(response)
                    return
                self._expire(sent_session)
                if self.reinitialize and not retried and self._initialize is not None:
                    await close(response)
                    await self._post(post, retried=True)
                    return
                raise SessionExpiredError(
                    f"the HTTP session expired (404 to {post.label}); "
                    "initialize a new one"
                )
            if post.method == INITIALIZE and response.is_success:
                self.session_id = response.headers.get(SESSION_ID_HEADER)
                self.expired = False
            streaming = await self._answer(post, response)
        except BaseException:
            await close(response)
            raise
        if not streaming:
            await close(response)
        if post.method == INITIALIZED and response.is_success:
            self._listen_soon()

    def _cancelled_early(self, post: Post) -> None:
        """Tell a legacy server a request cancelled before its answer began."""
        if (
            self._closed
            or self._tasks is None
            or self.protocol_version is None
            or post.version is not None
            or post.method in (None, INITIALIZE)
            or len(post.request_ids) != 1
        ):
            return
        (request_id,) = post.request_ids
        self._tasks.start_soon(self._post_quietly, cancel_notice(request_id))

    async def _post_quietly(self, message: bytes) -> None:
        try:
            await self._post(describe(message))
        except TransportError as exc:
            logger.debug("message not sent: %s", exc)

    async def _answer(self, post: Post, response: httpx.Response) -> bool:
        """Handle the answer to a POST; True when a background task now owns
        the response (an SSE stream)."""
        status = response.status_code
        kind = media_type(response.headers.get("content-type"))
        if not response.is_success:
            await self._refused(post, response, status, kind)
            return False
        if not post.request_ids:
            return False
        if status == 202:
            self._fail(post.request_ids, "202 Accepted answered a request", status)
        elif kind == _SSE:
            assert self._tasks is not None
            self._streams.read_soon(self._tasks, post, response)
            return True
        elif kind == _JSON:
            try:
                body = await read_body(response, self.max_message_size)
            except MessageTooLargeError as exc:
                self._fail(post.request_ids, str(exc), status)
            except httpx.HTTPError as exc:
                self._fail(post.request_ids, f"reading the answer failed: {exc!r}")
            else:
                await self._deliver_answer(post, body)
        else:
            self._fail(post.request_ids, f"unexpected Content-Type {kind!r}", status)
        return False

    async def _refused(
        self, post: Post, response: httpx.Response, status: int, kind: str | None
    ) -> None:
        """An HTTP error status: errors for the POST's requests."""
        body = await read_some(response, ERROR_BODY_LIMIT)
        refusal = client_refusal(
            status, kind, body, method=post.method, version=post.version
        )
        if refusal.legacy_sse is not None:
            raise LegacyServerError(self.url, status, refusal.legacy_sse)
        if not post.request_ids:
            logger.warning(
                "%s was refused: HTTP %d %s", post.label, status, excerpt(body)
            )
            return
        error = error_object(body) if kind == _JSON else None
        if error is not None:
            if error.get("code") == HEADER_MISMATCH and await self._retry_call(post):
                return
            for request_id in post.request_ids:
                self._queue(reply_with(request_id, error))
            return
        reason = f"HTTP {status} {response.reason_phrase}".rstrip()
        if refusal.era is not None:
            reason += f" ({refusal.era})"
        elif post.version is None and body:
            reason += f": {excerpt(body)}"
        self._fail(post.request_ids, reason, status)

    def _fail(
        self, request_ids: Iterable[RequestId], reason: str, status: int | None = None
    ) -> None:
        """Answer requests with a synthesized error."""
        code = (
            ErrorCode.INVALID_REQUEST
            if status is not None and 400 <= status < 500
            else ErrorCode.INTERNAL_ERROR
        )
        data = None if status is None else {"status": status}
        for request_id in request_ids:
            error = RpcError(code, f"{reason} (from {self.url})", data)
            self._queue(error_reply(request_id, error))

    # -- answers --

    async def _deliver_answer(self, post: Post, body: bytes) -> None:
        """A JSON answer: retry a `tools/call` refused for its headers, or pass
        it on."""
        if post.tool is not None:
            error = error_object(body)
            if (
                error is not None
                and error.get("code") == HEADER_MISMATCH
                and await self._retry_call(post)
            ):
                return
        self._deliver(post, body, None)

    def _deliver(
        self, post: Post | None, message: bytes, unanswered: set[RequestId] | None
    ) -> None:
        """Note what a message answers, then pass it on."""
        if post is not None and post.request_ids:
            found = replies(message)
            for reply in found:
                if unanswered is not None:
                    unanswered.discard(reply.id)
            if len(found) == 1 and found[0].id is None:
                message = self._own_error(post, message, unanswered)
            if post.method == INITIALIZE:
                version = negotiated_version(found)
                if version is not None:
                    self.protocol_version = version
            elif post.method == TOOLS_LIST and post.version is not None:
                message = self._tools.note_listing(message, found)
        self._queue(message)

    def _own_error(
        self, post: Post, message: bytes, unanswered: set[RequestId] | None
    ) -> bytes:
        """An error with id null on a one-request POST answers that request."""
        error = error_object(message)
        if error is None or len(post.request_ids) != 1:
            return message
        (request_id,) = post.request_ids
        if unanswered is not None:
            unanswered.discard(request_id)
        return reply_with(request_id, error)

    def _queue(self, message: bytes) -> None:
        try:
            self._incoming_send.send_nowait(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("a message arrived after close; dropped")

    # -- Mcp-Param headers refreshed --

    async def _retry_call(self, post: Post) -> bool:
        """After `HeaderMismatch`: list the tools, and POST the call again when
        its headers changed. False when nothing changed (or listing failed)."""
        try:
            changed = await self._tools.refresh(post, self._fetch)
        except (TransportError, httpx.HTTPError) as exc:
            logger.debug("tools/list after a header mismatch failed: %r", exc)
            return False
        if not changed:
            return False
        headers = self._post_headers(post)
        retry = dataclasses.replace(post, tool=None)  # retried once only
        response = await self._open(retry, headers)
        try:
            streaming = await self._answer(retry, response)
        except BaseException:
            await close(response)
            raise
        if not streaming:
            await close(response)
        return True

    async def _fetch(self, message: bytes) -> dict[str, Any] | None:
        """POST a request of the transport's own; its response."""
        post = describe(message)
        response = await self._open(post, self._post_headers(post))
        try:
            return await self._streams.read_reply(response)
        finally:
            await close(response)

    # -- the legacy session's GET stream --

    def _listen_soon(self) -> None:
        if (
            self.standalone_stream
            and self.protocol_version is not None
            and self._tasks is not None
            and not self._closed
        ):
            self._streams.listen_soon(self._tasks)

    async def _get(self, last_id: str) -> httpx.Response | None:
        """Open a GET stream (None: the server refused it)."""
        headers = {"Accept": _SSE}
        if self.session_id is not None:
            headers[SESSION_ID_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
        if last_id:
            headers[_LAST_EVENT_ID] = last_id
        client = self._http()
        timeout = client.timeout
        request = client.build_request(
            "GET",
            self.url,
            headers=self._headers(headers),
            timeout=httpx.Timeout(
                timeout.connect, read=None, write=timeout.write, pool=timeout.pool
            ),
        )
        try:
            response = await client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:
            logger.debug("GET stream failed: %r", exc)
            return None
        kind = media_type(response.headers.get("content-type"))
        if response.status_code == 200 and kind == _SSE:
            return response
        await close(response)
        if response.status_code == 404 and self.session_id is not None:
            self._expire(self.session_id)
        elif response.status_code != 405:
            logger.info("GET stream refused: HTTP %d", response.status_code)
        return None

    # -- session expiry --

    def _expire(self, session_id: str) -> None:
        if self.session_id == session_id:
            self.expired = True

    async def _reinitialize(self) -> None:
        """Start a new legacy session: replay `initialize` and
        `notifications/initialized`."""
        assert self._lock is not None
        async with self._lock:
            if not self.expired:
                return
            if self._initialize is None:
                raise SessionExpiredError("the HTTP session expired")
            version = self.protocol_version
            post = Post(self._initialize, INITIALIZE)
            response = await self._open(post, self._post_headers(post))
            try:
                reply = await self._streams.read_reply(response)
                session_id = response.headers.get(SESSION_ID_HEADER)
            finally:
                await close(response)
            result: Any = (reply or {}).get("result")
            answered: Any = (
                typing.cast("dict[str, Any]", result).get("protocolVersion")
                if isinstance(result, dict)
                else None
            )
            if answered != version:
                raise SessionExpiredError(
                    "the HTTP session expired and a new initialize answered "
                    f"{answered!r}, not {version!r}"
                )
            self.session_id = session_id
            self.expired = False
            logger.info("the HTTP session expired; a new one was initialized")
            if self._initialized is not None:
                notice = Post(self._initialized, INITIALIZED)
                response = await self._open(notice, self._post_headers(notice))
                await close(response)
            self._listen_soon()


# --- connecting -------------------------------------------------------------------


@asynccontextmanager
async def connect_http(
    url: str,
    *,
    name: str,
    version: str,
    http_client: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - an httpx setting
    read_timeout: float | None = DEFAULT_READ_TIMEOUT,
    reinitialize: bool = False,
    legacy_sse_fallback: bool = True,
    **options: Any,
) -> AsyncGenerator[ClientSession]:
    """Connect to a Streamable HTTP server, negotiate, and yield the session::

        async with connect_http(url, name="me", version="1") as session:
            ...

    `options` go to `ClientSession` (with a `cache`, `cache_key` defaults to
    `url`); `reinitialize` to `HttpClientTransport`. When `initialize` is
    refused with 400, 404 or 405 and `legacy_sse_fallback` holds, the
    deprecated HTTP+SSE transport is tried at the same URL (legacy versions
    only).

    Raises:
        LegacyServerError: no Streamable HTTP server, and no HTTP+SSE
            fallback (disabled, or `legacy_sse` not available).
        NegotiationError, TransportError: as `ClientSession`.
    """
    from mcp_specgen_runtime.protocol.client import ClientSession

    if options.get("cache") is not None:
        options.setdefault("cache_key", url)
    async with AsyncExitStack() as stack:
        client = http_client
        if client is None:
            client = await stack.enter_async_context(
                httpx.AsyncClient(
                    timeout=httpx.Timeout(timeout, read=read_timeout),
                    headers=dict(headers or {}),
                    auth=auth,
                )
            )
        transport = HttpClientTransport(
            url,
            http_client=client,
            headers=headers if http_client is not None else None,
            auth=auth if http_client is not None else None,
            reinitialize=reinitialize,
        )
        session: ClientSession | None = None
        refused: LegacyServerError | None = None
        async with AsyncExitStack() as attempt:
            try:
                await attempt.enter_async_context(transport)
                session = await attempt.enter_async_context(
                    ClientSession(transport, name=name, version=version, **options)
                )
            except LegacyServerError as exc:
                if not legacy_sse_fallback:
                    raise
                refused = exc
            else:
                stack.push_async_exit(attempt.pop_all())
        if session is None:
            assert refused is not None
            extra = dict(headers or {}) if http_client is not None else {}
            session = await legacy_sse_session(
                stack, refused, url, client, extra, name, version, options
            )
        yield session

"""The client side of Streamable HTTP, both eras: `HttpClientTransport` and
`connect_http`.

    async with connect_http("http://127.0.0.1:8000/mcp", name="me", version="1") as s:
        tools = await v2025_11_25.Client(s).list_tools()

`HttpClientTransport` is a `Transport` for `ClientSession`: every message
`send` is given is one POST (httpx), and whatever the server answers comes
out of `receive`. The era is read off each message, not configured: a request
whose `params._meta` names a protocol version is a 2026 request; anything
else belongs to the legacy (2025) session, if any. Decisions worth knowing:

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
  retry, `probe.classify_initialize`) raises `LegacyServerError` from `send`:
  no Streamable HTTP here. `connect_http` then tries the deprecated HTTP+SSE
  transport at the same URL with the same httpx client,
  `legacy_sse.LegacySseClientTransport(url, http_client=...)`, offering the
  allowed legacy versions only; without that module it re-raises the error
  saying so. The fallback transport is closed by `connect_http`'s exit
  stack, not by the session (its `aclose` cancels a task group the session
  runs inside).
- Legacy session: `Mcp-Session-Id` is taken from the `initialize` response
  and sent on every later request, with `MCP-Protocol-Version` set to the
  version the `initialize` result names (read as it passes through). Once
  `notifications/initialized` is accepted, the standalone GET stream is opened
  in the background (405: the server offers none; a stream the server ends is
  reopened, with `Last-Event-ID` when its events had ids). `aclose` cancels
  the streams and sends DELETE.
- 404 to a request carrying the session id (unless its body is a -32601
  error: an unknown method): the session is gone. `send`
  raises `SessionExpiredError` (and keeps raising it, without POSTing, until
  a new `initialize` succeeds: `await session.negotiate()` starts one). With
  `reinitialize=True` the transport does it itself: it replays the session's
  `initialize` and `notifications/initialized` (the server must answer the
  same version), then sends the message again; state the server kept for the
  old session (subscriptions, log level) is not restored.
- A legacy SSE response that ends before the response it owes is resumed
  with GET and `Last-Event-ID` when its events had ids (after the stream's
  `retry` delay, at most `MAX_RECONNECTS` times without progress); otherwise
  the request fails with -32603. Events with empty data (priming events) are
  skipped.
- 2026 requests get `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
  (`headers.request_headers`), and a `tools/call` the `Mcp-Param-*` headers of
  its tool's `x-mcp-header` parameters: the transport remembers the input
  schemas of the tools in the 2026 `tools/list` results it passes on, and
  drops from them (with a warning) any tool whose annotations are invalid, as
  the specification requires. A `tools/call` refused with -32020
  (`HeaderMismatch`) makes the transport list the tools itself (a request
  with a string id, never passed on) and send the call again once when the
  headers changed.
- Cancellation: `notifications/cancelled` for a 2026 request is not POSTed;
  the request's response stream is closed instead (the 2026 way to cancel).
  For a legacy request it is POSTed, and the request's stream closed. A
  legacy request whose `send` is cancelled before the answer started gets a
  `notifications/cancelled` from the transport.
- Timeouts: `timeout` bounds connecting, writing and waiting for a pool
  connection; `read_timeout` the wait for each piece of a POST's answer (a
  long tool call answered with JSON waits this long); the standalone stream
  waits for ever. Redirects are not followed.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import typing
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx
import msgspec

from mcp_codegen_runtime.jsonrpc.envelope import error_reply
from mcp_codegen_runtime.protocol.meta import ENVELOPE_KEYS, META_PROTOCOL_VERSION

from ...errors import ErrorCode, MessageTooLargeError, RpcError, TransportError
from .headers import (
    HEADER_MISMATCH,
    PROTOCOL_VERSION_HEADER,
    client_param_headers,
    media_type,
    param_header_problem,
    request_headers,
)
from .probe import (
    FallbackInitialize,
    FallbackLegacySse,
    classify_initialize,
    classify_modern,
)
from .sessions import SESSION_ID_HEADER
from .sse import DEFAULT_MAX_EVENT_SIZE, Event, EventTooLongError, SSEParser

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
    from types import TracebackType
    from typing import Self

    from anyio.abc import TaskGroup, TaskStatus

    from mcp_codegen_runtime.jsonrpc.connection import RequestId
    from mcp_codegen_runtime.protocol.client import ClientSession

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
MAX_RECONNECTS: Final = 2
"""Reconnections of an SSE stream in a row that bring nothing, before giving up."""
DEFAULT_RETRY_MS: Final = 1000
"""Milliseconds before reconnecting when the stream set no `retry`."""
CLOSE_TIMEOUT: Final = 5.0
"""Seconds the DELETE ending a session may take."""
ERROR_BODY_LIMIT: Final = 64 * 1024
"""Bytes of an HTTP error answer read."""
MAX_LIST_PAGES: Final = 32
"""Pages of `tools/list` the transport reads after a `HeaderMismatch`."""

INITIALIZE: Final = "initialize"
INITIALIZED: Final = "notifications/initialized"
CANCELLED: Final = "notifications/cancelled"
TOOLS_LIST: Final = "tools/list"
TOOLS_CALL: Final = "tools/call"
_JSON = "application/json"
_SSE = "text/event-stream"
_ACCEPT = f"{_JSON}, {_SSE}"
_LAST_EVENT_ID = "Last-Event-ID"
METHOD_NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)


class SessionExpiredError(TransportError):
    """The server answered 404 to a request carrying the legacy session id:
    the session is gone, and a new `initialize` must start another (e.g.
    `await session.negotiate()`)."""


class LegacyServerError(TransportError):
    """The server refused the `initialize` POST with 400, 404 or 405: it does
    not speak Streamable HTTP; it may speak the deprecated HTTP+SSE transport.

    Attributes:
        url: the URL POSTed to.
        status: the HTTP status of the answer.
    """

    def __init__(
        self, url: str, status: int, reason: str, message: str | None = None
    ) -> None:
        super().__init__(
            message
            or f"{url} is no Streamable HTTP endpoint ({reason}); it may speak "
            "the deprecated HTTP+SSE transport"
        )
        self.url = url
        self.status = status


# --- reading messages -------------------------------------------------------------


class _MetaProbe(msgspec.Struct):
    version: Any = msgspec.field(default=None, name=META_PROTOCOL_VERSION)


class _ParamsProbe(msgspec.Struct):
    meta: _MetaProbe | None = msgspec.field(default=None, name="_meta")
    name: Any = None
    uri: Any = None
    arguments: msgspec.Raw = msgspec.Raw(b"")
    request_id: Any = msgspec.field(default=None, name="requestId")


class _MessageProbe(msgspec.Struct):
    id: Any = None
    method: Any = None
    params: msgspec.Raw = msgspec.Raw(b"")


class _ReplyProbe(msgspec.Struct):
    id: Any = None
    method: Any = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: Any = None


class _InitializeProbe(msgspec.Struct):
    protocol_version: Any = msgspec.field(default=None, name="protocolVersion")


_message_probe = msgspec.json.Decoder(_MessageProbe)
_batch_probe = msgspec.json.Decoder(list[_MessageProbe])
_reply_probe = msgspec.json.Decoder(_ReplyProbe)
_replies_probe = msgspec.json.Decoder(list[_ReplyProbe])


def _is_id(value: object) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


@dataclass
class _Post:
    """One outgoing message and what the transport needs to know of it."""

    body: bytes
    method: str | None = None
    """The method of a single request or notification (None: response, batch)."""
    request_ids: frozenset[RequestId] = frozenset()
    version: str | None = None
    """The 2026 protocol version of the envelope (None: a legacy message)."""
    headers: dict[str, str] = field(default_factory=dict[str, str])
    """The 2026 standard request headers."""
    tool: str | None = None
    arguments: msgspec.Raw = field(default_factory=lambda: msgspec.Raw(b""))
    params: msgspec.Raw = field(default_factory=lambda: msgspec.Raw(b""))
    cancels: RequestId | None = None
    """The request a `notifications/cancelled` names."""

    @property
    def label(self) -> str:
        """How logs name the message."""
        return self.method or ("a batch" if self.body.startswith(b"[") else "a reply")


def _describe(message: bytes) -> _Post:
    """Read what the transport needs from an outgoing message."""
    try:
        if message.lstrip().startswith(b"["):
            items = _batch_probe.decode(message)
            ids = frozenset(
                i.id for i in items if i.method is not None and _is_id(i.id)
            )
            return _Post(message, None, ids)
        probe = _message_probe.decode(message)
    except msgspec.DecodeError:
        return _Post(message)
    if not isinstance(probe.method, str):
        return _Post(message)
    method: str = probe.method
    post = _Post(message, method)
    if _is_id(probe.id):
        post.request_ids = frozenset({probe.id})
    try:
        params = msgspec.json.decode(bytes(probe.params) or b"{}", type=_ParamsProbe)
    except msgspec.DecodeError:
        return post
    if method == CANCELLED and _is_id(params.request_id):
        post.cancels = params.request_id
    version = params.meta.version if params.meta is not None else None
    if not isinstance(version, str):
        return post
    post.version = version
    shown: dict[str, Any] = {"_meta": {META_PROTOCOL_VERSION: version}}
    for member in ("name", "uri"):
        value: Any = getattr(params, member)
        if isinstance(value, str):
            shown[member] = value
    post.headers = request_headers({"method": method, "params": shown})
    if method == TOOLS_CALL and isinstance(params.name, str):
        post.tool = params.name
        post.arguments = params.arguments
    post.params = probe.params
    return post


def _envelope_of(params: msgspec.Raw) -> dict[str, Any]:
    """The envelope keys of a 2026 request's `_meta`."""
    try:
        decoded: Any = msgspec.json.decode(params)
    except msgspec.DecodeError:
        return {}
    meta: Any = typing.cast("dict[str, Any]", decoded).get("_meta")
    if not isinstance(meta, dict):
        return {}
    members = typing.cast("dict[str, Any]", meta)
    return {k: v for k, v in members.items() if k in ENVELOPE_KEYS}


def _replies(message: bytes) -> list[_ReplyProbe]:
    """The responses in an incoming message (a batch's included)."""
    try:
        if message.lstrip().startswith(b"["):
            found = _replies_probe.decode(message)
        else:
            found = [_reply_probe.decode(message)]
    except msgspec.DecodeError:
        return []
    return [reply for reply in found if reply.method is None]


def _error_object(body: bytes) -> dict[str, Any] | None:
    """The `error` of a JSON-RPC error reply in `body`, if it is one."""
    try:
        decoded: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not isinstance(decoded, dict):
        return None
    error: Any = typing.cast("dict[str, Any]", decoded).get("error")
    if not isinstance(error, dict):
        return None
    found = typing.cast("dict[str, Any]", error)
    code = found.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    if not isinstance(found.get("message"), str):
        found = {**found, "message": ""}
    return found


def _reply_with(request_id: RequestId, error: Mapping[str, Any]) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def _excerpt(body: bytes, limit: int = 200) -> str:
    text = body[: limit * 4].decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


async def _read_body(response: httpx.Response, limit: int) -> bytes:
    """The body of `response`, at most `limit` bytes.

    Raises:
        MessageTooLargeError: the body is longer.
    """
    chunks: list[bytes] = []
    size = 0
    async with _chunks(response) as received:
        async for chunk in received:
            size += len(chunk)
            if size > limit:
                raise MessageTooLargeError(
                    f"HTTP response body over {limit} bytes", limit
                )
            chunks.append(chunk)
    return b"".join(chunks)


async def _read_some(response: httpx.Response, limit: int) -> bytes:
    """Up to `limit` bytes of the body of `response` (errors end the read)."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with _chunks(response) as received:
            async for chunk in received:
                chunks.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
    except httpx.HTTPError as exc:
        logger.debug("error body unreadable: %r", exc)
    return b"".join(chunks)[:limit]


@asynccontextmanager
async def _chunks(response: httpx.Response) -> AsyncGenerator[AsyncIterator[bytes]]:
    """The body's chunks, the iterator closed on the way out (trio warns of
    an async generator left unfinished)."""
    chunks = response.aiter_bytes()
    try:
        yield chunks
    finally:
        close: Any = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


async def _close(response: httpx.Response) -> None:
    with anyio.CancelScope(shield=True):
        try:
            await response.aclose()
        except httpx.HTTPError as exc:  # pragma: no cover - closing a broken socket
            logger.debug("closing a response failed: %r", exc)


# --- the transport ----------------------------------------------------------------


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
        self.max_message_size = max_message_size
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.expired = False
        """The legacy session is gone (404) and no new one was started yet."""
        sender, receiver = anyio.create_memory_object_stream[bytes](float("inf"))
        self._incoming_send = sender
        self._incoming = receiver
        self._schemas: dict[str, Mapping[str, Any]] = {}
        self._readers: dict[RequestId, _Reader] = {}
        self._initialize: bytes | None = None
        self._initialized: bytes | None = None
        self._listening = False
        self._internal_ids = itertools.count(1)
        self._lock: anyio.Lock | None = None
        self._tasks: TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        self._closed = False

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
        post = _describe(message)
        if post.cancels is not None:
            reader = self._readers.get(post.cancels)
            modern = reader.modern if reader is not None else None
            if modern or (modern is None and self.protocol_version is None):
                # 2026: closing the response stream is the cancellation.
                if reader is not None:
                    reader.scope.cancel()
                return
        if post.method == INITIALIZE:
            self._initialize = message
        elif post.method == INITIALIZED:
            self._initialized = message
        await self._post(post)
        if post.cancels is not None:
            reader = self._readers.get(post.cancels)
            if reader is not None:
                reader.scope.cancel()

    # -- POST --

    def _post_headers(self, post: _Post) -> dict[str, str]:
        headers = {"Accept": _ACCEPT, "Content-Type": _JSON}
        if post.version is not None:
            headers.update(post.headers)
            if post.tool is not None:
                headers.update(self._param_headers(post))
        elif post.method != INITIALIZE:
            if self.session_id is not None:
                headers[SESSION_ID_HEADER] = self.session_id
            if self.protocol_version is not None:
                headers[PROTOCOL_VERSION_HEADER] = self.protocol_version
        return self._headers(headers)

    def _param_headers(self, post: _Post) -> dict[str, str]:
        schema = self._schemas.get(post.tool or "")
        if schema is None:
            return {}
        arguments: Any = None
        if len(post.arguments):
            try:
                arguments = msgspec.json.decode(post.arguments)
            except msgspec.DecodeError:
                arguments = None
        try:
            return client_param_headers(
                schema,
                (
                    typing.cast("dict[str, Any]", arguments)
                    if isinstance(arguments, dict)
                    else None
                ),
            )
        except ValueError:
            return {}

    async def _open(self, post: _Post, headers: dict[str, str]) -> httpx.Response:
        client = self._http()
        request = client.build_request(
            "POST", self.url, content=post.body, headers=headers
        )
        try:
            return await client.send(request, stream=True, auth=self._auth)
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url} failed: {exc!r}") from exc

    async def _post(self, post: _Post, *, retried: bool = False) -> None:
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
                body = await _read_some(response, ERROR_BODY_LIMIT)
                error = _error_object(body)
                if error is not None and error.get("code") == METHOD_NOT_FOUND:
                    # The 2026 spelling of an unknown method, not an expiry.
                    for request_id in post.request_ids:
                        self._queue(_reply_with(request_id, error))
                    await _close(response)
                    return
                self._expire(sent_session)
                if self.reinitialize and not retried and self._initialize is not None:
                    await _close(response)
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
            await _close(response)
            raise
        if not streaming:
            await _close(response)
        if post.method == INITIALIZED and response.is_success:
            self._listen_soon()

    def _cancelled_early(self, post: _Post) -> None:
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
        notice = msgspec.json.encode(
            {
                "jsonrpc": "2.0",
                "method": CANCELLED,
                "params": {"requestId": request_id, "reason": "cancelled"},
            }
        )
        self._tasks.start_soon(self._post_quietly, notice)

    async def _post_quietly(self, message: bytes) -> None:
        try:
            await self._post(_describe(message))
        except TransportError as exc:
            logger.debug("message not sent: %s", exc)

    async def _answer(self, post: _Post, response: httpx.Response) -> bool:
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
            self._read_soon(post, response)
            return True
        elif kind == _JSON:
            try:
                body = await _read_body(response, self.max_message_size)
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
        self, post: _Post, response: httpx.Response, status: int, kind: str | None
    ) -> None:
        """An HTTP error status: errors for the POST's requests."""
        body = await _read_some(response, ERROR_BODY_LIMIT)
        if post.method == INITIALIZE:
            outcome = classify_initialize(status, kind, body)
            if isinstance(outcome, FallbackLegacySse):
                raise LegacyServerError(self.url, status, outcome.reason)
        if not post.request_ids:
            logger.warning(
                "%s was refused: HTTP %d %s", post.label, status, _excerpt(body)
            )
            return
        error = _error_object(body) if kind == _JSON else None
        if error is not None:
            if error.get("code") == HEADER_MISMATCH and await self._retry_call(post):
                return
            for request_id in post.request_ids:
                self._queue(_reply_with(request_id, error))
            return
        reason = f"HTTP {status} {response.reason_phrase}".rstrip()
        if post.version is not None:
            era = classify_modern(
                status, kind, body, requested=post.version, modern_versions=()
            )
            if isinstance(era, FallbackInitialize | FallbackLegacySse):
                reason += f" ({era.reason})"
        elif body:
            reason += f": {_excerpt(body)}"
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

    async def _deliver_answer(self, post: _Post, body: bytes) -> None:
        """A JSON answer: retry a `tools/call` refused for its headers, or pass
        it on."""
        if post.tool is not None:
            error = _error_object(body)
            if (
                error is not None
                and error.get("code") == HEADER_MISMATCH
                and await self._retry_call(post)
            ):
                return
        self._deliver(post, body, None)

    def _deliver(
        self, post: _Post | None, message: bytes, unanswered: set[RequestId] | None
    ) -> None:
        """Note what a message answers, then pass it on."""
        if post is not None and post.request_ids:
            replies = _replies(message)
            for reply in replies:
                if unanswered is not None:
                    unanswered.discard(reply.id)
            if len(replies) == 1 and replies[0].id is None:
                message = self._own_error(post, message, unanswered)
            if post.method == INITIALIZE:
                self._note_initialize(replies)
            elif post.method == TOOLS_LIST and post.version is not None:
                message = self._note_tools(message, replies)
        self._queue(message)

    def _own_error(
        self, post: _Post, message: bytes, unanswered: set[RequestId] | None
    ) -> bytes:
        """An error with id null on a one-request POST answers that request."""
        error = _error_object(message)
        if error is None or len(post.request_ids) != 1:
            return message
        (request_id,) = post.request_ids
        if unanswered is not None:
            unanswered.discard(request_id)
        return _reply_with(request_id, error)

    def _note_initialize(self, replies: list[_ReplyProbe]) -> None:
        for reply in replies:
            if not len(reply.result):
                continue
            try:
                found = msgspec.json.decode(reply.result, type=_InitializeProbe)
            except msgspec.DecodeError:
                continue
            if isinstance(found.protocol_version, str):
                self.protocol_version = found.protocol_version

    def _note_tools(self, message: bytes, replies: list[_ReplyProbe]) -> bytes:
        """Remember the input schemas of listed tools; drop tools whose
        `x-mcp-header` annotations are invalid."""
        if len(replies) != 1 or not len(replies[0].result):
            return message
        try:
            decoded: Any = msgspec.json.decode(message)
        except msgspec.DecodeError:
            return message
        result: Any = typing.cast("dict[str, Any]", decoded).get("result")
        if not isinstance(result, dict):
            return message
        members = typing.cast("dict[str, Any]", result)
        tools = _listed(members.get("tools"))
        if tools is None:
            return message
        kept = self._remember_tools(tools)
        if len(kept) == len(tools):
            return message
        members["tools"] = kept
        return msgspec.json.encode(decoded)

    def _remember_tools(self, tools: list[Any]) -> list[Any]:
        kept: list[Any] = []
        for tool in tools:
            if not isinstance(tool, dict):
                kept.append(tool)
                continue
            members = typing.cast("dict[str, Any]", tool)
            name: Any = members.get("name")
            schema: Any = members.get("inputSchema")
            if isinstance(schema, dict):
                plain = typing.cast("dict[str, Any]", schema)
                problem = param_header_problem(plain)
                if problem is not None:
                    logger.warning("tool %r dropped: %s", name, problem)
                    continue
                if isinstance(name, str):
                    self._schemas[name] = plain
            kept.append(tool)
        return kept

    def _queue(self, message: bytes) -> None:
        try:
            self._incoming_send.send_nowait(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("a message arrived after close; dropped")

    # -- Mcp-Param headers refreshed --

    async def _retry_call(self, post: _Post) -> bool:
        """After `HeaderMismatch`: list the tools, and POST the call again when
        its headers changed. False when nothing changed (or listing failed)."""
        if post.tool is None or post.version is None:
            return False
        before = self._param_headers(post)
        try:
            await self._refresh_tools(post)
        except (TransportError, httpx.HTTPError) as exc:
            logger.debug("tools/list after a header mismatch failed: %r", exc)
            return False
        if self._param_headers(post) == before:
            return False
        headers = self._post_headers(post)
        retry = dataclasses.replace(post, tool=None)  # retried once only
        response = await self._open(retry, headers)
        try:
            streaming = await self._answer(retry, response)
        except BaseException:
            await _close(response)
            raise
        if not streaming:
            await _close(response)
        return True

    async def _refresh_tools(self, post: _Post) -> None:
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            params: dict[str, Any] = {"_meta": _envelope_of(post.params)}
            if cursor is not None:
                params["cursor"] = cursor
            request_id = f"mcp-codegen-http-{next(self._internal_ids)}"
            body = msgspec.json.encode(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": TOOLS_LIST,
                    "params": params,
                }
            )
            listing = _describe(body)
            response = await self._open(listing, self._post_headers(listing))
            try:
                reply = await self._read_reply(response)
            finally:
                await _close(response)
            result: Any = (reply or {}).get("result")
            if not isinstance(result, dict):
                return
            members = typing.cast("dict[str, Any]", result)
            tools = _listed(members.get("tools"))
            if tools is not None:
                self._remember_tools(tools)
            cursor = members.get("nextCursor")
            if not isinstance(cursor, str):
                return

    async def _read_reply(self, response: httpx.Response) -> dict[str, Any] | None:
        """The JSON-RPC response in an answer the transport asked for itself
        (other messages in an SSE answer are passed on)."""
        if not response.is_success:
            return None
        kind = media_type(response.headers.get("content-type"))
        try:
            if kind == _JSON:
                return _object(await _read_body(response, self.max_message_size))
            if kind != _SSE:
                return None
            parser = SSEParser(self.max_message_size)
            async with _chunks(response) as received:
                async for chunk in received:
                    for event in _feed(parser, chunk):
                        if event.event != "message" or not event.data.strip():
                            continue
                        if _replies(event.data):
                            return _object(event.data)
                        self._queue(event.data)
        except (httpx.HTTPError, MessageTooLargeError) as exc:
            logger.debug("reading an answer failed: %r", exc)
        return None

    # -- SSE streams --

    def _read_soon(self, post: _Post, response: httpx.Response) -> None:
        assert self._tasks is not None
        reader = _Reader(anyio.CancelScope(), modern=post.version is not None)
        for request_id in post.request_ids:
            self._readers[request_id] = reader
        self._tasks.start_soon(self._read_stream, post, response, reader)

    async def _read_stream(
        self, post: _Post, response: httpx.Response, reader: _Reader
    ) -> None:
        """Read a POST's SSE answer (resuming it when it breaks) until every
        request it carries is answered."""
        unanswered = set(post.request_ids)
        cursor = _Cursor()
        try:
            with reader.scope:
                try:
                    await self._consume(response, cursor, post, unanswered)
                finally:
                    await _close(response)
                if post.version is None:
                    await self._resume(post, cursor, unanswered)
            if unanswered and not reader.scope.cancel_called:
                self._fail(
                    sorted(unanswered, key=str),
                    "the server ended the response stream before answering",
                )
        finally:
            for request_id in post.request_ids:
                if self._readers.get(request_id) is reader:
                    del self._readers[request_id]

    async def _resume(
        self, post: _Post, cursor: _Cursor, unanswered: set[RequestId]
    ) -> None:
        failures = 0
        while unanswered and cursor.last_id and failures < MAX_RECONNECTS:
            failures += 1
            await anyio.sleep((cursor.retry_ms or DEFAULT_RETRY_MS) / 1000)
            response = await self._get(cursor.last_id)
            if response is None:
                return
            try:
                if await self._consume(response, cursor, post, unanswered):
                    failures = 0
            finally:
                await _close(response)

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
        await _close(response)
        if response.status_code == 404 and self.session_id is not None:
            self._expire(self.session_id)
        elif response.status_code != 405:
            logger.info("GET stream refused: HTTP %d", response.status_code)
        return None

    async def _consume(
        self,
        response: httpx.Response,
        cursor: _Cursor,
        post: _Post | None,
        unanswered: set[RequestId] | None,
    ) -> bool:
        """Pass on the messages of an SSE stream until it ends (or answers
        every request of `post`); whether any event came."""
        parser = SSEParser(self.max_message_size)
        progressed = False
        try:
            async with _chunks(response) as received:
                async for chunk in received:
                    for event in _feed(parser, chunk):
                        progressed = True
                        if event.event == "message" and event.data.strip():
                            self._deliver(post, event.data, unanswered)
                    cursor.last_id = parser.last_event_id or cursor.last_id
                    cursor.retry_ms = parser.retry_ms or cursor.retry_ms
                    if post is not None and post.request_ids and not unanswered:
                        break
        except httpx.HTTPError as exc:
            logger.debug("SSE stream broke: %r", exc)
        return progressed

    # -- the standalone GET stream --

    def _listen_soon(self) -> None:
        if (
            self._listening
            or not self.standalone_stream
            or self.protocol_version is None
            or self._tasks is None
            or self._closed
        ):
            return
        self._listening = True
        self._tasks.start_soon(self._listen)

    async def _listen(self) -> None:
        """Keep the legacy session's GET stream open while the server offers it."""
        cursor = _Cursor()
        failures = 0
        try:
            while failures <= MAX_RECONNECTS:
                response = await self._get(cursor.last_id)
                if response is None:
                    return
                try:
                    got = await self._consume(response, cursor, None, None)
                finally:
                    await _close(response)
                failures = 0 if got else failures + 1
                await anyio.sleep((cursor.retry_ms or DEFAULT_RETRY_MS) / 1000)
            logger.info("the GET stream keeps ending empty; not reopened")
        finally:
            self._listening = False

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
            post = _Post(self._initialize, INITIALIZE)
            response = await self._open(post, self._post_headers(post))
            try:
                reply = await self._read_reply(response)
                session_id = response.headers.get(SESSION_ID_HEADER)
            finally:
                await _close(response)
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
                notice = _Post(self._initialized, INITIALIZED)
                response = await self._open(notice, self._post_headers(notice))
                await _close(response)
            self._listen_soon()


@dataclass
class _Reader:
    """A background SSE reader: its cancel scope, and its request's era."""

    scope: anyio.CancelScope
    modern: bool


@dataclass
class _Cursor:
    """Where an SSE stream got to, for reconnecting."""

    last_id: str = ""
    retry_ms: int | None = None


def _listed(value: object) -> list[Any] | None:
    if not isinstance(value, list):
        return None
    return [*typing.cast("Iterable[Any]", value)]


def _object(body: bytes) -> dict[str, Any] | None:
    try:
        decoded: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    return typing.cast("dict[str, Any]", decoded) if isinstance(decoded, dict) else None


def _feed(parser: SSEParser, chunk: bytes) -> list[Event]:
    try:
        return parser.feed(chunk)
    except EventTooLongError as exc:
        logger.warning("%s", exc)
        return list(exc.events)


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
    from mcp_codegen_runtime.protocol.client import ClientSession

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
            session = await _legacy_sse(
                stack, refused, url, client, extra, name, version, options
            )
        yield session


async def _legacy_sse(
    stack: AsyncExitStack,
    refused: LegacyServerError,
    url: str,
    client: httpx.AsyncClient,
    headers: dict[str, str],
    name: str,
    version: str,
    options: dict[str, Any],
) -> ClientSession:
    """A session over the deprecated HTTP+SSE transport (2024-11-05), at the
    same URL with the same httpx client (`headers`: those the client lacks)."""
    import importlib

    from mcp_codegen_runtime.protocol.client import ClientSession

    try:
        module = importlib.import_module(f"{__package__}.legacy_sse")
    except ImportError:
        module = None
    factory: Any = getattr(module, "LegacySseClientTransport", None)
    if factory is None:
        raise LegacyServerError(
            refused.url,
            refused.status,
            f"HTTP {refused.status} to initialize; the HTTP+SSE fallback "
            "(legacy_sse.LegacySseClientTransport) is not available",
        ) from refused
    probe = ClientSession(_Unused(), name=name, version=version, **options)
    legacy = list(probe.legacy_versions)
    if not legacy:
        raise refused
    if headers:
        transport: Any = factory(url, http_client=client, headers=headers)
    else:
        transport = factory(url, http_client=client)
    if hasattr(transport, "__aenter__"):
        try:
            entered = await stack.enter_async_context(transport)
        except TransportError as exc:
            raise LegacyServerError(
                refused.url,
                refused.status,
                "",
                f"{refused.url} answered initialize with HTTP {refused.status}, "
                f"and the HTTP+SSE fallback failed: {exc}",
            ) from exc
        transport = _ClosedByStack(entered)
    options = {**options, "versions": legacy}
    return await stack.enter_async_context(
        ClientSession(transport, name=name, version=version, **options)
    )


class _ClosedByStack:
    """A transport entered on an exit stack, which also closes it: the
    session's own `aclose` is left out, so the transport's task group is
    only cancelled on its way out (cancelling it from inside the session,
    which runs within that group's scope, would cancel the caller)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def receive(self) -> bytes:
        received: bytes = await self.inner.receive()
        return received

    async def aclose(self) -> None:
        return None


class _Unused:
    """A transport never used: `ClientSession` built only to read the
    versions it allows."""

    async def send(self, message: bytes) -> None:
        raise anyio.ClosedResourceError

    async def receive(self) -> bytes:
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        return None

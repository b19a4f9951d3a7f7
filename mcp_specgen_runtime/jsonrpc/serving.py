"""Serving one incoming message: the `RequestContext` a handler sees
(`current_request()`), and `serve_request` / `serve_notification`, which run
a `Handler` and turn what it returns or raises into the reply.

`Connection` serves its peer's messages with these; so does the HTTP server,
one POST at a time. Decisions worth knowing:

- `ping` goes to the handler first; when it raises `MethodNotFoundError` the
  reply is `{}`, so liveness never depends on the handler.
- A handler's `SystemExit`, `KeyboardInterrupt` or other `BaseException`
  fails its request (-32603); only cancellation passes through.
- A notification is answered with nothing, so its failures are logged.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeAlias

import anyio
import msgspec
from msgspec import Raw, UnsetType

from mcp_specgen_runtime.errors import MethodNotFoundError, RpcError

from .envelope import (
    UNREADABLE,
    OutResult,
    ParamsMeta,
    RequestId,
    encoder,
    error_reply,
    internal_error,
)

__all__ = [
    "Handler",
    "NotificationFit",
    "Peer",
    "RequestContext",
    "current_request",
    "enter_request",
    "leave_request",
    "peer_address",
    "progress_token_in",
    "request_in_progress",
    "reset_peer_address",
    "serve_notification",
    "serve_request",
    "set_peer_address",
]

Handler: TypeAlias = Callable[[str, bytes | None], Awaitable[bytes | None]]
"""Serves one incoming message: `(method, raw params or None)` to the encoded
result, or None (for notifications; a request answered with None gets `{}`).
`Dispatcher.dispatch` has this signature. Raise `RpcError` to send an error."""

NotificationFit: TypeAlias = Callable[[str, Any], Any]
"""Fits an outgoing notification's params, `(method, params)` to the params
to send, to the revision the peer speaks."""

logger = logging.getLogger(__name__)

_peer_address: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "mcp_specgen_runtime.jsonrpc.serving.peer_address", default=None
)

PING = "ping"
PROGRESS = "notifications/progress"


class Peer(Protocol):
    """The other side of a request, as its handler sees it: a `Connection`, or
    the response stream of one HTTP request."""

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        ...

    async def request(
        self,
        method: str,
        params: Any,
        result_type: Any,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - mirrors Connection
    ) -> Any:
        """Send a request and wait for its result."""
        ...


class RequestContext:
    """The incoming request a handler is serving; see `current_request()`."""

    def __init__(
        self,
        connection: Peer,
        request_id: RequestId,
        method: str,
        progress_token: RequestId | None,
        *,
        principal: object = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self._progress_token = progress_token
        self._token_source: bytes | None = None
        self.principal = principal
        """Who sent the request, as the transport authenticated it (None:
        anonymous); request state and sessions are bound to it."""
        self.http_request: object = None
        """The HTTP request that carried it, as an HTTP transport records it
        (its `HttpRequest`); None over other transports."""
        self.connection = connection
        """The connection the request came in on (to send requests back)."""
        self.meta: dict[str, Any] | None = None
        """`_meta` entries added to the progress this request reports (a
        task's related-task key)."""
        self.fit: NotificationFit | None = None
        """Fits the notifications `notify` sends (None: sent as given), set
        when the peer's revision is not the one the handler was written for
        and the peer does not fit them itself."""
        self._progress: float | None = None

    @property
    def progress_token(self) -> RequestId | None:
        """The `_meta.progressToken` of the request's params, if it had one."""
        source = self._token_source
        if source is not None:
            self._token_source = None
            self._progress_token = progress_token_in(source)
        return self._progress_token

    @progress_token.setter
    def progress_token(self, token: RequestId | None) -> None:
        self._token_source = None
        self._progress_token = token

    def token_from(self, params: bytes | None) -> None:
        """Take the progress token from `params` when it is first asked for:
        most requests carry none and nobody asks, so their params are not
        read twice (a layer that decodes `_meta` anyway sets it instead)."""
        self._token_source = params

    def derive(self, *, meta: dict[str, Any] | None = None) -> RequestContext:
        """A copy of this context (its progress count included) with `meta`
        added to its progress notifications."""
        copy = RequestContext(
            self.connection,
            self.request_id,
            self.method,
            self.progress_token,
            principal=self.principal,
        )
        copy.http_request = self.http_request
        copy.meta = meta
        copy.fit = self.fit
        copy._progress = self._progress
        return copy

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification to the peer, fitted to its revision.

        Raises:
            TransportError: the connection is closed.
        """
        fit = self.fit
        await self.connection.notify(
            method, params if fit is None else fit(method, params)
        )

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` for this request.

        Nothing is sent when the peer asked for no progress (no token), but the
        order is checked all the same.

        Raises:
            ValueError: `progress` does not exceed the last value reported.
            TransportError: the connection is closed.
        """
        if self._progress is not None and progress <= self._progress:
            raise ValueError(
                f"progress must increase: {progress} after {self._progress}"
            )
        self._progress = progress
        if self.progress_token is None:
            return
        params: dict[str, Any] = {
            "progressToken": self.progress_token,
            "progress": progress,
        }
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        if self.meta:
            params["_meta"] = self.meta
        await self.notify(PROGRESS, params)


_current: contextvars.ContextVar[RequestContext] = contextvars.ContextVar(
    "mcp_specgen_runtime.jsonrpc.serving.current_request"
)


def enter_request(context: RequestContext) -> contextvars.Token[RequestContext]:
    """Make `context` the current request (work that continues a request
    elsewhere, such as a task, does this); undo with `leave_request`."""
    return _current.set(context)


def leave_request(token: contextvars.Token[RequestContext]) -> None:
    """Undo `enter_request`."""
    _current.reset(token)


def request_in_progress() -> RequestContext | None:
    """The request the calling code serves, or None outside any handler."""
    return _current.get(None)


async def serve_request(
    handler: Handler | None, context: RequestContext, params: bytes | None
) -> bytes:
    """Serve one request with `context` current: the encoded response, a result
    or the error the handler raised (-32603 without a traceback for anything
    but `RpcError`; `ping` answered `{}` when the handler does not serve it).

    Only cancellation passes through: `SystemExit`, `KeyboardInterrupt` and
    any other `BaseException` a handler raises fail its request alone (a real
    SIGINT cancels the event loop's main task; it never surfaces in a handler
    on asyncio)."""
    request_id = context.request_id
    token = _current.set(context)
    try:
        if handler is None:
            raise MethodNotFoundError(context.method)
        result = await handler(context.method, params)
    except MethodNotFoundError as exc:
        if context.method == PING:
            return encoder.encode(OutResult(id=request_id, result=Raw(b"{}")))
        return error_reply(request_id, exc)
    except RpcError as exc:
        return error_reply(request_id, exc)
    except Exception:
        logger.exception("handler of %s failed", context.method)
        return internal_error(request_id)
    except anyio.get_cancelled_exc_class():
        raise
    except BaseException as exc:
        # SystemExit and the like are the handler's failure: the process lives on.
        logger.error("handler of %s raised %r", context.method, exc, exc_info=exc)
        return internal_error(request_id)
    finally:
        _current.reset(token)
    raw = Raw(b"{}" if result is None else result)
    return encoder.encode(OutResult(id=request_id, result=raw))


async def serve_notification(
    handler: Handler | None, method: str, params: bytes | None
) -> None:
    """Serve one notification: nothing is answered, so failures are logged."""
    try:
        if handler is None:
            raise MethodNotFoundError(method)
        await handler(method, params)
    except MethodNotFoundError:
        logger.debug("no handler for notification %s", method)
    except RpcError as exc:
        logger.warning("notification %s rejected: %s", method, exc)
    except Exception:
        logger.exception("handler of notification %s failed", method)
    except anyio.get_cancelled_exc_class():
        raise
    except BaseException as exc:
        logger.error("handler of notification %s raised %r", method, exc, exc_info=exc)


def progress_token_in(params: bytes | None) -> RequestId | None:
    """The `_meta.progressToken` of raw params: None when absent, unreadable
    or not a string or an integer."""
    if params is None or b'"progressToken"' not in params:
        return None
    try:
        found = msgspec.json.decode(params, type=ParamsMeta)
    except UNREADABLE:
        return None  # the handler reports bad params
    if isinstance(found.meta, UnsetType) or isinstance(
        found.meta.progress_token, UnsetType
    ):
        return None
    return found.meta.progress_token


def current_request() -> RequestContext:
    """The request the calling handler is serving.

    Raises:
        RuntimeError: not called from within a request handler.
    """
    try:
        return _current.get()
    except LookupError:
        raise RuntimeError("not inside a JSON-RPC request handler") from None


def peer_address() -> str | None:
    """The network address of the client being served (the HTTP transport
    sets its host), None when the transport knows none (stdio)."""
    return _peer_address.get()


def set_peer_address(address: str | None) -> contextvars.Token[str | None]:
    """For transports: the client address of what runs in this context."""
    return _peer_address.set(address)


def reset_peer_address(token: contextvars.Token[str | None]) -> None:
    """Undo `set_peer_address`."""
    _peer_address.reset(token)

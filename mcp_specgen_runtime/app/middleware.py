"""Middleware: an ordered chain of functions around every message an `App` serves.

A middleware is any async callable `(call, call_next) -> result`::

    async def timing(call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            print(call.method, time.perf_counter() - started)

    app = App("demo", middleware=[timing])         # every message
    app.add_middleware(audit, methods=["tools/call"])

    @app.on("tools/call", "resources/read")        # the same, as a decorator
    async def only_some(call: Call, call_next: CallNext) -> Any: ...

The first middleware is the outermost. Every request and notification a
client sends reaches the chain, in both protocol eras and every revision:
`initialize` and `server/discover` too, before the session answers them.
Without middleware the chain costs one truth test per message.

What a middleware may do:

- look at the `Call`: method, typed `params` (decoded lazily into the type
  of the handler's revision: 2025-11-25 for the handshake revisions,
  2026-07-28 for the modern one), request id, principal, era, negotiated
  revision, session id, `ctx`;
- go on with `await call_next(call)`, or with changed params
  (`call_next(call.replace(params=...))`), and get the `Result`;
- answer itself (short-circuit): return a `Result`, a generated result
  Struct or a dict; it is encoded (fitted to the peer's revision, and given
  the 2026 `resultType` and `serverInfo` where the era wants them);
- refuse: raise `RpcError(code, message, data)`, which becomes that
  JSON-RPC error.

Any other exception a middleware raises is its own failure: the request is
answered -32603 naming the middleware and the exception's type (the
traceback goes to the log, not to the client), and the server keeps
serving. An exception coming out of `call_next` passes through as it was.

A middleware that has a `changed(kind, uri)` method is told when the app's
lists change (`kind` "tools", "prompts", "resources") or a resource is
updated (`kind` "resource", with its URI): a cache forgets what it kept.
"""

from __future__ import annotations

import logging
import typing
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar

import msgspec

from mcp_specgen_runtime.codec.conversion import ConversionError, fit
from mcp_specgen_runtime.codec.wire import encode
from mcp_specgen_runtime.errors import (
    ErrorCode,
    InvalidParamsError,
    MethodNotFoundError,
    RpcError,
)
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher
from mcp_specgen_runtime.jsonrpc.serving import peer_address, request_in_progress
from mcp_specgen_runtime.protocol.adapt import RESULT_FILL
from mcp_specgen_runtime.protocol.meta import META_PROTOCOL_VERSION
from mcp_specgen_runtime.protocol.tasks.owner import principal_owner

from .context import Context

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import ModuleType

    from mcp_specgen_runtime.jsonrpc.envelope import RequestId
    from mcp_specgen_runtime.protocol.session import ServerConnection

    from .lifespan import LifespanRunner

__all__ = [
    "Call",
    "CallNext",
    "Middleware",
    "MiddlewareChain",
    "Result",
    "tool_failed",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

Era = Literal["legacy", "modern"]


class Result:
    """A request's result as the chain passes it back: the encoded JSON,
    decoded only when asked."""

    __slots__ = ("_json", "raw")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        """The result's JSON, as it goes to the client."""
        self._json: Any = _UNREAD

    def json(self) -> Any:
        """The result as builtins (decoded once)."""
        if self._json is _UNREAD:
            self._json = msgspec.json.decode(self.raw)
        return self._json

    def as_type(self, result_type: type[T]) -> T:
        """The result decoded into `result_type` (a generated result type)."""
        return msgspec.json.decode(self.raw, type=result_type)

    def __repr__(self) -> str:
        return f"Result({self.raw[:80]!r})"


_UNREAD: Any = object()


class _ToolOutcome(msgspec.Struct):
    is_error: Any = msgspec.field(default=None, name="isError")


def tool_failed(result: Any) -> bool:
    """Whether a `tools/call` result (a `Result`, builtins or a generated
    Struct) says the tool failed (`isError: true`)."""
    if isinstance(result, Result):
        try:
            return msgspec.json.decode(result.raw, type=_ToolOutcome).is_error is True
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
    if isinstance(result, dict):
        found = typing.cast("dict[str, Any]", result)
        return found.get("isError") is True
    return getattr(result, "is_error", None) is True


class _Probe(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


class _TargetProbe(msgspec.Struct):
    name: Any = None
    uri: Any = None


TARGETS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
}
"""The methods about one named item, and the params member naming it."""


class Call:
    """One incoming request or notification, as middleware sees it.

    Attributes:
        method: the JSON-RPC method.
        raw_params: the params' JSON as the client sent them (None: absent).
        request_id: the request's id; None for a notification.
        principal: who sent it, as the transport authenticated it (None:
            anonymous).
        era: "legacy" (handshake revisions) or "modern" (2026), None while
            nothing has settled it (a legacy client's first message).
        session_id: the transport's session (Streamable HTTP's
            `Mcp-Session-Id`), None without one (stdio, 2026 requests).
        ctx: the request's `Context` (None for a notification).
        state: free for the chain's own use (a middleware may leave notes
            for those inside it).
    """

    __slots__ = (
        "_address",
        "_connection",
        "_params",
        "_version",
        "ctx",
        "era",
        "method",
        "principal",
        "raw_params",
        "request_id",
        "session_id",
        "state",
    )

    def __init__(
        self,
        connection: ServerConnection,
        method: str,
        raw_params: bytes | None,
        lifespan: LifespanRunner | None = None,
    ) -> None:
        self._connection = connection
        self.method = method
        self.raw_params = raw_params
        request = request_in_progress()
        self.request_id: RequestId | None = (
            None if request is None else request.request_id
        )
        self.principal: object = None if request is None else request.principal
        self.ctx: Context | None = None if request is None else Context(lifespan)
        self.session_id: str | None = connection.session_id
        self._address = peer_address()
        self.state: dict[str, Any] = {}
        self._params: Any = _UNREAD
        self.era: Era | None = connection.era
        self._version: str | None = None
        if connection.session.modern_versions and raw_params:
            version = _modern_version(raw_params)
            if version is not None and self.era != "legacy":
                self.era = "modern"
                self._version = version
        if self.era is None and method == "initialize":
            self.era = "legacy"

    @property
    def notification(self) -> bool:
        """Whether this is a notification (nothing will be answered)."""
        return self.request_id is None

    @property
    def protocol_version(self) -> str | None:
        """The revision the peer speaks: the one `initialize` negotiated, or
        the one a 2026 request names; None before either."""
        return self._version or self._connection.protocol_version

    @property
    def target(self) -> str | None:
        """The tool or prompt named by a `tools/call` or `prompts/get`, the
        URI of a `resources/read` (or subscribe); None for other methods or
        when the params do not say."""
        member = TARGETS.get(self.method)
        if member is None or not self.raw_params:
            return None
        try:
            probe = msgspec.json.decode(self.raw_params, type=_TargetProbe)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        found = getattr(probe, member)
        return found if isinstance(found, str) else None

    @property
    def caller(self) -> str:
        """Who to count this call against: the principal (a digest of its
        identity), else the transport's session, else the client's network
        address, else the connection it came in on."""
        owner = principal_owner(self.principal)
        if owner is not None:
            return owner
        if self.session_id is not None:
            return "session:" + self.session_id
        if self._address is not None:
            return "address:" + self._address
        return "connection:" + self._connection.key

    @property
    def params(self) -> Any:
        """The params decoded into the type the handler's revision gives
        this method (builtins for a method it has no type for; None when
        absent).

        Raises:
            InvalidParamsError: params that do not fit the type (-32602).
        """
        if self._params is _UNREAD:
            self._params = self._decode()
        return self._params

    def replace(self, *, params: Any) -> Call:
        """This call with other params (a generated params Struct of the
        handler's revision, or builtins), as they will be served."""
        changed = Call.__new__(Call)
        for name in Call.__slots__:
            setattr(changed, name, getattr(self, name))
        changed.raw_params = None if params is None else encode(params)
        changed._params = params
        return changed

    def _packages(self) -> tuple[ModuleType | None, ModuleType | None]:
        """The package the peer's revision is, and the one its handler was
        written for (None where unknown)."""
        session = self._connection.session
        version = self.protocol_version
        if version is None and self.era == "legacy" and session.legacy_versions:
            version = session.legacy_versions[-1]
        if version is None or version not in session.revisions:
            return None, None
        revision = session.revisions[version]
        return revision.package, revision.written_for

    def _decode(self) -> Any:
        raw = self.raw_params
        if raw is None:
            return None
        wire, written_for = self._packages()
        own = None if written_for is None else written_for.METHODS.get(self.method)
        if wire is None or own is None or own.params is None:
            try:
                return msgspec.json.decode(raw)
            except msgspec.DecodeError as exc:
                raise InvalidParamsError(self.method, str(exc)) from None
        spoken = wire.METHODS.get(self.method)
        if wire is written_for or spoken is None or spoken.params is None:
            return Dispatcher.decode_params(own, raw)
        decoded = Dispatcher.decode_params(spoken, raw)
        try:
            label = f"{self.method} params, for middleware"
            return fit(decoded, own.params, label=label, list_unknown=False).value
        except ConversionError as exc:
            raise InvalidParamsError(self.method, str(exc)) from None

    def encode(self, value: Any) -> bytes:
        """A result a middleware answered with, as the engine sends it."""
        if isinstance(value, Result):
            return value.raw
        wire, _ = self._packages()
        spoken = None if wire is None else wire.METHODS.get(self.method)
        if value is None:
            value = {}
        elif spoken is not None and spoken.result:
            # Checked in the handlers' own revision too: a middleware's
            # answer, unlike a handler's, is not typed.
            value = fit(value, spoken.result, label="result", fill=RESULT_FILL).value
        raw = encode(value)
        if self.era == "modern":
            return self._connection.session.stamp(raw)
        return raw

    def __repr__(self) -> str:
        return f"Call({self.method!r}, id={self.request_id!r}, era={self.era!r})"


def _modern_version(raw: bytes) -> str | None:
    try:
        meta = msgspec.json.decode(raw, type=_Probe).meta
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not isinstance(meta, dict):
        return None
    version = typing.cast("dict[str, Any]", meta).get(META_PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


CallNext: TypeAlias = Callable[[Call], Awaitable[Any]]
"""Serves the call with the rest of the chain: the `Result` (None for a
notification)."""

Middleware: TypeAlias = Callable[[Call, CallNext], Awaitable[Any]]
"""`(call, call_next) -> result`; see the module docstring."""

Endpoint: TypeAlias = Callable[[str, bytes | None], Awaitable[bytes | None]]


class Watcher(Protocol):
    """A middleware told of the app's changes (see the module docstring)."""

    def changed(self, kind: str, uri: str | None = None) -> None: ...


class _Link:
    """One middleware of the chain, with the methods it is for (None: all)."""

    __slots__ = ("methods", "middleware", "name")

    def __init__(self, middleware: Middleware, methods: frozenset[str] | None):
        self.middleware = middleware
        self.methods = methods
        self.name = _name_of(middleware)


class MiddlewareChain:
    """The ordered middleware of an app; the first is the outermost."""

    def __init__(
        self,
        middleware: Iterable[Middleware] = (),
        *,
        lifespan: LifespanRunner | None = None,
    ) -> None:
        self._lifespan = lifespan
        self._links: list[_Link] = []
        self._by_method: dict[str, tuple[_Link, ...]] = {}
        for each in middleware:
            self.add(each)

    def __bool__(self) -> bool:
        return bool(self._links)

    def __len__(self) -> int:
        return len(self._links)

    def add(
        self, middleware: Middleware, *, methods: Iterable[str] | None = None
    ) -> None:
        """Add `middleware` inside those already there; with `methods`, it
        sees only calls of those methods.

        Raises:
            TypeError: `middleware` is not callable, or `methods` is a string.
        """
        if not callable(middleware):
            raise TypeError(f"middleware must be callable: {middleware!r}")
        if isinstance(methods, str):
            raise TypeError("methods must be a collection of method names")
        chosen = None if methods is None else frozenset(methods)
        self._links.append(_Link(middleware, chosen))
        self._by_method.clear()

    def changed(self, kind: str, uri: str | None = None) -> None:
        """Tell the middleware that watch the app (a `changed` method) that
        `kind` changed."""
        for link in self._links:
            watcher = getattr(link.middleware, "changed", None)
            if callable(watcher):
                typing.cast("Watcher", link.middleware).changed(kind, uri)

    def _for(self, method: str) -> tuple[_Link, ...]:
        links = self._by_method.get(method)
        if links is None:
            links = tuple(
                link
                for link in self._links
                if link.methods is None or method in link.methods
            )
            if len(self._by_method) < 1024:  # methods are the client's to name
                self._by_method[method] = links
        return links

    async def serve(
        self,
        connection: ServerConnection,
        method: str,
        params: bytes | None,
        endpoint: Endpoint,
    ) -> bytes | None:
        """Serve one message through the chain, `endpoint` innermost."""
        links = self._for(method)
        if not links:
            return await endpoint(method, params)
        call = Call(connection, method, params, self._lifespan)

        async def innermost(call: Call) -> Result | None:
            try:
                raw = await endpoint(call.method, call.raw_params)
            except MethodNotFoundError:
                # The engine drops a notification nobody serves (it handles
                # a cancellation itself) and answers a ping with {}.
                if not call.notification and call.method != "ping":
                    raise
                raw = None
            if call.notification:
                return None
            return Result(b"{}" if raw is None else raw)

        step: CallNext = innermost
        for link in reversed(links):
            step = _step(link, step)
        answer = await step(call)
        if call.notification:
            return None
        try:
            return call.encode(answer)
        except Exception as exc:
            logger.exception("middleware answered %s with %r", method, answer)
            raise RpcError(
                ErrorCode.INTERNAL_ERROR,
                f"Internal error: a middleware answered {method} with a result "
                f"that cannot be sent ({type(exc).__name__})",
            ) from None


class _Raised:
    """The exception the inner part of the chain raised, if any."""

    __slots__ = ("exc",)

    def __init__(self) -> None:
        self.exc: BaseException | None = None


def _step(link: _Link, inner: CallNext) -> CallNext:
    """`link`'s middleware around `inner`, its own failures made -32603."""
    middleware = link.middleware

    async def step(call: Call) -> Any:
        raised = _Raised()

        async def call_next(call: Call) -> Any:
            try:
                return await inner(call)
            except BaseException as exc:
                raised.exc = exc
                raise

        try:
            return await middleware(call, call_next)
        except RpcError:
            raise
        except Exception as exc:
            if exc is raised.exc:
                raise  # from inside: not this middleware's failure
            logger.exception("middleware %s failed on %s", link.name, call.method)
            raise RpcError(
                ErrorCode.INTERNAL_ERROR,
                f"Internal error: middleware {link.name} failed on {call.method} "
                f"({type(exc).__name__})",
            ) from None

    return step


def _name_of(middleware: object) -> str:
    name = getattr(middleware, "__qualname__", None)
    if not isinstance(name, str):
        name = type(middleware).__qualname__
    return name

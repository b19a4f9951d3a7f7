"""The client side of an MCP connection: version negotiation and typed calls.

`ClientSession` wraps a `Connection`, negotiates a protocol version on entry,
and is the `RequestSender` of the generated typed clients (`connect_stdio`, in
`transports.stdio`, spawns a server and opens one)::

    command = [sys.executable, "server.py"]
    async with connect_stdio(command, name="me", version="1") as session:
        client = v2025_11_25.Client(session)
        tools = await client.list_tools()

How a version is chosen, among the `versions` the client allows (default:
every dated revision; the draft only when named):

1. If modern versions (2026-07-28 and later) are allowed, it probes with
   `server/discover` at the newest one. A `DiscoverResult` settles the newest
   version both sides speak; -32022 lists the server's versions to pick from.
   Any other error, an answer that is no `DiscoverResult` (a lenient legacy
   server may answer any method with `{}`), or no answer within
   `probe_timeout`, means a server of the handshake era.
2. Else, or after that fallback, the `initialize` handshake at the newest
   allowed legacy version; a server answering a version not allowed ends the
   session with `NegotiationError`.

A `VersionCache` shared between sessions remembers what each server spoke, so
the next session with the same `cache_key` skips the probe of a legacy server,
and re-uses a modern server's discover result while its `ttlMs` lasts.

Every request waits at most `request_timeout` seconds (default 60, the
official TypeScript SDK's; `request(..., timeout=)` per call, None for no
limit) and then raises `RequestTimeoutError`, so a lost answer never hangs a
call.

Typed clients of any revision work on any session: a call written against
another revision than the negotiated one is converted both ways (see
`adapt`). Modern requests get the `_meta` envelope (protocol version, client
info and capabilities, log level) added. Requests for a capability the server
did not declare raise `CapabilityError` without being sent. A modern result
`InputRequiredResult` is answered with the client handlers (sampling,
elicitation, roots) and the request retried, so callers only ever see the
final result. The client handlers serve the server's requests as
`client_serving.ClientDispatcher` says (newer shapes of params taken, defaults
of elicitation forms filled in).
"""

from __future__ import annotations

import logging
import time
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from mcp_specgen_runtime.codec.conversion import fit
from mcp_specgen_runtime.codec.wire import decode, to_builtins
from mcp_specgen_runtime.errors import (
    CapabilityError,
    DiscoveryError,
    ErrorCode,
    McpError,
    MessageTooLargeError,
    MethodNotFoundError,
    NegotiationError,
    ProtocolError,
    RequestTimeoutError,
    RpcError,
    TransportError,
)
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.jsonrpc.dispatch import (
    implemented_methods,
    is_legacy,
    package_in,
)

from .adapt import RESULT_FILL, adapt, nearest
from .client_serving import ClientDispatcher
from .meta import (
    ENVELOPE_KEYS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)
from .session import (
    DISCOVER,
    INITIALIZE,
    INITIALIZED,
    UNSUPPORTED_PROTOCOL_VERSION,
    version_order,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence
    from types import ModuleType, TracebackType
    from typing import Self

    from mcp_specgen_runtime.codec.spec import Handlers
    from mcp_specgen_runtime.jsonrpc.transport import Transport

__all__ = ["AroundSend", "ClientSession", "VersionCache"]

AroundSend: TypeAlias = (
    "Callable[[str, Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]"
)
"""`(method, wire params, send) -> what send returned`: wraps what a
`ClientSession` sends (see `ClientSession.around_send`)."""

logger = logging.getLogger(__name__)

DEFAULT_PROBE_TIMEOUT = 10.0
DEFAULT_REQUEST_TIMEOUT = 60.0
"""Seconds a request waits for its result unless told otherwise (the official
TypeScript SDK's default), so a lost answer fails the call, never hangs it."""
MAX_INPUT_ROUNDS = 16

_LEGACY_REFUSALS = frozenset(
    {
        ErrorCode.PARSE_ERROR,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.METHOD_NOT_FOUND,
        ErrorCode.INVALID_PARAMS,
    }
)
"""Codes a legacy server may answer the unknown `server/discover` with; any
other error is the probe failing on a server that may be modern."""

_SERVER_CAPABILITY = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "logging": "logging",
    "completion": "completions",
}
"""The server capability each client→server method family needs."""

_CLIENT_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}
"""The client capability declared for each server→client request handled."""


@typing.runtime_checkable
class _ReportsExit(Protocol):
    """A transport to a server process (`StdioClientTransport`)."""

    @property
    def returncode(self) -> int | None: ...

    async def exit_report(self, *, wait: float = ...) -> str: ...


class _ModernOnly(NegotiationError):
    """`initialize` refused by a server that names modern versions the client
    allows: its probe went unanswered in time, not unspoken."""

    def __init__(self, message: str, offered: Sequence[Any]) -> None:
        super().__init__(message)
        self.offered = offered


@dataclass(frozen=True)
class _ProbeFailure:
    """`server/discover` at `version` failed with `error`, which no legacy
    server answers an unknown method with."""

    version: str
    error: RpcError


@dataclass
class _Known:
    version: str
    discover: bytes | None
    expires: float


class VersionCache:
    """What each server spoke, shared between sessions (keyed by the caller:
    a command line, a URL)."""

    def __init__(self) -> None:
        self._known: dict[str, _Known] = {}

    def get(self, key: str) -> tuple[str, bytes | None] | None:
        """The version last negotiated with `key`, and the discover result
        still fresh (None once its `ttlMs` has passed)."""
        known = self._known.get(key)
        if known is None:
            return None
        fresh = known.discover if time.monotonic() < known.expires else None
        return known.version, fresh

    def put(self, key: str, version: str, discover: bytes | None, ttl_s: float) -> None:
        """Remember what `key` spoke."""
        self._known[key] = _Known(version, discover, time.monotonic() + ttl_s)


class ClientSession:
    """A negotiated client connection to one MCP server; see the module docstring.

    Args:
        transport: carries the messages (e.g. from `stdio_client`).
        name, version: the client's `Implementation`.
        handlers: generated `ClientHandlers` for server→client requests and
            notifications, one per revision written (the nearest one serves a
            negotiated revision without its own). They also set the client
            capabilities declared: sampling, elicitation, roots.
        versions: the protocol versions allowed (default: every dated one; the
            draft only when named).
        probe_timeout: seconds to wait for the `server/discover` probe (and
            for `initialize`, unless `initialize_timeout` is given).
        initialize_timeout: seconds to wait for the `initialize` answer.
        request_timeout: seconds every other request waits for its result
            (default 60; None: no limit); `request(..., timeout=)` overrides
            it per call.
        log_level: the modern `io.modelcontextprotocol/logLevel` of requests.
        capabilities: client capabilities declared besides those the
            handlers imply (builtins, e.g. 2025-11-25 `tasks`); a revision
            without such a field drops it.
        cache, cache_key: remember the server's version between sessions.

    Attributes (once entered):
        protocol_version, era, package (the negotiated revision's types),
        server_info, server_capabilities (builtins), instructions.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str,
        version: str,
        handlers: Sequence[Handlers] = (),
        versions: Sequence[str] | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        initialize_timeout: float | UnsetType | None = UNSET,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None,
        cache: VersionCache | None = None,
        cache_key: str | None = None,
    ) -> None:
        import mcp_specgen_types as root

        self._modules: Mapping[str, str] = root.MODULES
        # The draft changes under its users: speak it only when asked to.
        allowed = tuple(versions or (v for v in root.KNOWN_VERSIONS if v != "draft"))
        self._packages = {v: package_in(root.MODULES, v) for v in allowed}
        order = sorted(allowed, key=version_order)
        self.legacy_versions = tuple(v for v in order if is_legacy(self._packages[v]))
        self.modern_versions = tuple(
            v for v in order if not is_legacy(self._packages[v])
        )
        self.name = name
        self.version = version
        self.log_level = log_level
        self.probe_timeout = probe_timeout
        self.initialize_timeout = (
            probe_timeout
            if isinstance(initialize_timeout, UnsetType)
            else initialize_timeout
        )
        self.request_timeout = request_timeout
        self._handlers = tuple(handlers)
        self._extra_capabilities = dict(capabilities or {})
        self._cache = cache
        self._cache_key = cache_key
        self.connection = Connection(transport, self._serve)
        self.protocol_version: str | None = None
        self.era: Literal["legacy", "modern"] | None = None
        self.package: ModuleType | None = None
        self.server_info: Any = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._dispatcher: ClientDispatcher | None = None
        self._envelope: dict[str, Any] = {}
        self._sources: dict[Any, ModuleType] = {}
        self.around_send: AroundSend | None = None
        """Wraps each request (all its input rounds) and notification sent
        once negotiated, as `around_send(method, wire params, send)`:
        telemetry opens a span there and adds its context to the params."""

    # -- lifecycle --

    async def __aenter__(self) -> Self:
        await self.connection.__aenter__()
        try:
            await self.negotiate()
        except BaseException as exc:
            explained = None
            if isinstance(exc, TransportError | NegotiationError):
                explained = await self._explained(exc)
            await self.connection.__aexit__(type(exc), exc, exc.__traceback__)
            if explained is not None:
                raise explained from exc
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.connection.__aexit__(exc_type, exc, traceback)

    # -- negotiation --

    async def negotiate(self) -> None:
        """Settle the protocol version (called on entry).

        Raises:
            NegotiationError: no version both sides speak.
            DiscoveryError: `server/discover` failed (not as a legacy server
                refuses it) and the `initialize` fallback did not help.
            TransportError: the connection closed meanwhile.
        """
        cached = self._cached()
        failure: _ProbeFailure | None = None
        if self.modern_versions and (
            cached is None or cached[0] in self.modern_versions
        ):
            fresh = None if cached is None else cached[1]
            if cached is not None and fresh is not None:
                self._settle_modern(
                    cached[0], fresh, self._discovered(cached[0], fresh)
                )
                return
            start = cached[0] if cached is not None else self.modern_versions[-1]
            probed = await self._probe(start)
            if probed is True:
                return
            if isinstance(probed, _ProbeFailure):
                failure = probed
        if not self.legacy_versions:
            if failure is not None:
                raise DiscoveryError(failure.version, failure.error) from failure.error
            raise NegotiationError(
                "the server speaks none of the modern versions "
                f"{list(self.modern_versions)} and the client allows no legacy one"
            )
        try:
            await self._initialize()
        except _ModernOnly as refused:
            # A modern server too slow to answer the probe in time (one
            # still starting) refuses initialize naming its versions: the
            # probe is worth a second try now that it answers.
            if failure is None:
                again = await self._probe(self._pick(refused.offered))
                if again is True:
                    return
                failure = again or None
            if failure is None:
                raise NegotiationError(str(refused)) from None
            raise DiscoveryError(
                failure.version, failure.error, refused
            ) from failure.error
        except (NegotiationError, RpcError) as exc:
            if failure is None:
                raise
            # The fallback's failure is a consequence: the discover error
            # is what went wrong (a modern server refuses initialize).
            raise DiscoveryError(failure.version, failure.error, exc) from failure.error

    def _cached(self) -> tuple[str, bytes | None] | None:
        if self._cache is None or self._cache_key is None:
            return None
        found = self._cache.get(self._cache_key)
        if found is None or found[0] not in self._packages:
            return None
        return found

    async def _probe(self, version: str) -> bool | _ProbeFailure:
        """Settle a modern version with `server/discover`, starting at `version`
        (True); else fall back to `initialize` (False, or why the probe
        failed when no legacy server would answer so)."""
        for _ in range(2):
            try:
                raw = await self._discover(version)
            except RpcError as exc:
                offered = _supported(exc)
                if exc.code != UNSUPPORTED_PROTOCOL_VERSION or offered is None:
                    if exc.code in _LEGACY_REFUSALS:
                        return False
                    logger.info("server/discover failed: %s", exc)
                    return _ProbeFailure(version, exc)
                version = self._pick(offered)
                continue
            except RequestTimeoutError:
                return False
            try:
                result = self._discovered(version, raw)
            except msgspec.DecodeError as exc:
                # A lenient legacy server answers any method with a result.
                logger.info("server/discover answered no DiscoverResult: %s", exc)
                return False
            best = self._pick(result.supported_versions or [version])
            if best != version:
                version = best
                continue
            self._settle_modern(version, raw, result)
            return True
        raise NegotiationError("the server kept changing its supported versions")

    async def _discover(self, version: str) -> bytes:
        params = {"_meta": self._envelope_of(version)}
        raw: msgspec.Raw = await self.connection.request(
            DISCOVER, params, msgspec.Raw, timeout=self.probe_timeout
        )
        return bytes(raw)

    def _pick(self, offered: Sequence[Any]) -> str:
        common = [v for v in self.modern_versions if v in offered]
        if not common:
            raise NegotiationError(
                f"the server speaks {list(offered)}; the client allows "
                f"{list(self.modern_versions)}"
            )
        return common[-1]

    def _discovered(self, version: str, discover: bytes) -> Any:
        """`discover` as `version`'s `DiscoverResult`.

        Raises:
            msgspec.DecodeError: it is none.
        """
        return self._decode(discover, self._packages[version].DiscoverResult)

    def _settle_modern(self, version: str, discover: bytes, result: Any) -> None:
        self._settle(version, "modern")
        self.server_info = getattr(result.meta, "server_info", None) or None
        self.server_capabilities = to_builtins(result.capabilities)
        self.instructions = result.instructions or None
        self._envelope = self._envelope_of(version)
        self._remember(version, discover, result.ttl_ms / 1000)

    async def _initialize(self) -> None:
        offered = self.legacy_versions[-1]
        package = self._packages[offered]
        params = package.InitializeRequestParams(
            protocol_version=offered,
            capabilities=self._client_capabilities(package),
            client_info=package.Implementation(name=self.name, version=self.version),
        )
        try:
            result: msgspec.Raw = await self.connection.request(
                INITIALIZE, params, msgspec.Raw, timeout=self.initialize_timeout
            )
        except RpcError as exc:
            offered_by_server = _supported(exc)
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or offered_by_server is None:
                raise
            message = (
                f"the server speaks {offered_by_server}; the client allows "
                f"{list(self.legacy_versions)} for initialize"
            )
            if any(v in self.modern_versions for v in offered_by_server):
                raise _ModernOnly(message, offered_by_server) from None
            raise NegotiationError(message) from None
        answered = msgspec.json.decode(result, type=dict[str, Any]).get(
            "protocolVersion"
        )
        if answered not in self.legacy_versions:
            raise NegotiationError(
                f"the server answered initialize with protocol version {answered!r}; "
                f"the client allows {list(self.legacy_versions)}"
            )
        package = self._packages[answered]
        decoded = self._decode(bytes(result), package.InitializeResult)
        self._settle(answered, "legacy")
        self.server_info = decoded.server_info
        self.server_capabilities = to_builtins(decoded.capabilities)
        self.instructions = decoded.instructions or None
        self.connection.allow_batches = answered == "2025-03-26"
        await self.connection.notify(INITIALIZED, None)
        self._remember(answered, None, 0)

    @staticmethod
    def _decode(raw: bytes, result_type: Any) -> Any:
        return decode(raw, result_type)

    def _settle(self, version: str, era: Literal["legacy", "modern"]) -> None:
        package = self._packages[version]
        self.protocol_version = version
        self.era = era
        self.package = package
        if self._handlers:
            self._dispatcher = ClientDispatcher(self._handlers, package)

    def _remember(self, version: str, discover: bytes | None, ttl_s: float) -> None:
        if self._cache is not None and self._cache_key is not None:
            self._cache.put(self._cache_key, version, discover, ttl_s)

    def _client_capabilities(self, package: ModuleType) -> Any:
        handled: set[str] = set()
        if self._handlers:
            handled = set(
                implemented_methods(adapt(nearest(package, self._handlers), package))
            )
        found: dict[str, Any] = {
            cap: {} for method, cap in _CLIENT_CAPABILITY.items() if method in handled
        }
        found.update(self._extra_capabilities)
        fields = {
            f.encode_name for f in msgspec.structs.fields(package.ClientCapabilities)
        }
        return fit(
            {k: v for k, v in found.items() if k in fields},
            package.ClientCapabilities,
            label="client capabilities",
        ).value

    def _envelope_of(self, version: str) -> dict[str, Any]:
        package = self._packages[version]
        envelope: dict[str, Any] = {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: to_builtins(self._client_capabilities(package)),
            META_CLIENT_INFO: {"name": self.name, "version": self.version},
        }
        if self.log_level is not None:
            envelope[META_LOG_LEVEL] = self.log_level
        return envelope

    def set_log_level(self, level: str | None) -> None:
        """The modern `io.modelcontextprotocol/logLevel` of the next requests
        (legacy servers take `logging/setLevel` instead)."""
        self.log_level = level
        if self.era == "modern" and self.protocol_version is not None:
            self._envelope = self._envelope_of(self.protocol_version)

    # -- sending (the RequestSender of generated clients) --

    async def request(
        self,
        method: str,
        params: Any,
        result_type: Any,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109 - to the engine
    ) -> Any:
        """Send a request and return its final result as `result_type`.

        `timeout` is the seconds each round waits for its result (default:
        the session's `request_timeout`; None: no limit).

        Raises:
            CapabilityError: the server did not declare the capability needed.
            RpcError: the server answered with an error.
            ProtocolError: a result that does not fit, or too many input rounds.
            RequestTimeoutError, TransportError: as `Connection.request`.
        """
        package = self._negotiated()
        self._check_capability(method, package)
        spec = package.METHODS.get(method)
        if spec is None:
            raise MethodNotFoundError(method)
        source = self._source_of(result_type)
        if isinstance(timeout, UnsetType):
            timeout = self.request_timeout
        limit = timeout

        async def rounds(wire_params: Any) -> Any:
            for _ in range(MAX_INPUT_ROUNDS):
                result = await self._sent(method, wire_params, spec.result, limit)
                answered = getattr(package, "InputRequiredResult", None)
                if answered is None or not isinstance(result, answered):
                    return self._incoming(result, result_type, source is not package)
                wire_params = await self._answer_input(wire_params, result)
            raise ProtocolError(
                f"{method}: still asking for input after {MAX_INPUT_ROUNDS} rounds"
            )

        wire_params = self._outgoing(params, spec, source is not package)
        if self.around_send is not None:
            return await self.around_send(method, wire_params, rounds)
        return await rounds(wire_params)

    async def _sent(
        self, method: str, params: Any, result_type: Any, limit: float | None
    ) -> Any:
        """`connection.request`, a transport failure told with how the
        server process ended when the transport knows (`_explained`)."""
        try:
            return await self.connection.request(
                method, params, result_type, timeout=limit
            )
        except TransportError as exc:
            explained = await self._explained(exc)
            if explained is None:
                raise
            raise explained from exc

    async def request_raw(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109 - to the engine
    ) -> dict[str, Any]:
        """Send a request whose result is not the method's usual type (a
        2025 task-augmented call answers `CreateTaskResult`; a 2026 call may
        answer `resultType: "task"`), or whose method the negotiated revision
        does not define (an extension's, e.g. 2026 `tasks/get`): the result
        as builtins. Modern requests get the envelope (client capabilities
        given in `params._meta` are merged into it) and input rounds are
        answered as in `request`.

        Raises:
            RpcError: the server answered with an error.
            ProtocolError: the result is no JSON object, or too many rounds.
            RequestTimeoutError, TransportError: as `Connection.request`.
        """
        self._negotiated()
        if isinstance(timeout, UnsetType):
            timeout = self.request_timeout
        limit = timeout

        async def rounds(body: Any) -> dict[str, Any]:
            for _ in range(MAX_INPUT_ROUNDS):
                raw: msgspec.Raw = await self._sent(method, body, msgspec.Raw, limit)
                try:
                    result = msgspec.json.decode(raw, type=dict[str, Any])
                except msgspec.DecodeError:
                    raise ProtocolError(
                        f"{method}: the result is no JSON object"
                    ) from None
                if self.era != "modern" or result.get("resultType") != "input_required":
                    return result
                body = await self._answer_input_raw(body, result)
            raise ProtocolError(
                f"{method}: still asking for input after {MAX_INPUT_ROUNDS} rounds"
            )

        body = self._outgoing(dict(params) if params is not None else {}, None, False)
        if self.around_send is not None:
            found: dict[str, Any] = await self.around_send(method, body, rounds)
            return found
        return await rounds(body)

    async def answer_input(self, method: str, params: Any) -> Any:
        """Answer one server→client request (`method`, builtins `params`)
        with the session's handlers, as for a 2026 `inputRequests` entry:
        the result as builtins.

        Raises:
            MethodNotFoundError: no handler serves `method`.
            RpcError: the handler refused.
        """
        answer = await self._serve(method, msgspec.json.encode(params or {}))
        return msgspec.json.decode(answer or b"{}")

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification (converted and enveloped like requests)."""
        package = self._negotiated()
        spec = package.METHODS.get(method)
        if spec is None:
            raise MethodNotFoundError(method)
        source = None if params is None else self._source_of(type(params))
        converted = source is not None and source is not package
        outgoing = self._outgoing(params, spec, converted)
        if self.around_send is None:
            await self.connection.notify(method, outgoing)
            return

        async def send(params: Any) -> None:
            await self.connection.notify(method, params)

        await self.around_send(method, outgoing, send)

    def _negotiated(self) -> ModuleType:
        if self.package is None:
            raise ProtocolError("the session has not negotiated a protocol version")
        return self.package

    def _check_capability(self, method: str, package: ModuleType) -> None:
        capability = _SERVER_CAPABILITY.get(method.split("/", 1)[0])
        if capability is None or capability in self.server_capabilities:
            return
        # 2024-11-05 has completion/complete but no `completions` capability.
        declarable = {
            f.encode_name for f in msgspec.structs.fields(package.ServerCapabilities)
        }
        if capability in declarable:
            raise CapabilityError(method, capability, "server")

    def _source_of(self, result_type: Any) -> ModuleType:
        """The revision package a typed call was written against."""
        found = self._sources.get(result_type)
        if found is None:
            module: str = getattr(result_type, "__module__", "")
            found = self._negotiated()
            for version, name in self._modules.items():
                if module.startswith(name + "."):
                    found = package_in(self._modules, version)
                    break
            self._sources[result_type] = found
        return found

    def _outgoing(self, params: Any, spec: Any, convert: bool) -> Any:
        """`params` as the negotiated revision sends them: converted when
        written against another revision, and enveloped on a modern wire."""
        fits = params is not None and convert and spec.params is not None
        if self.era != "modern":
            if not fits:
                return params
            plain = _without_envelope(to_builtins(params))
            return fit(plain, spec.params, label=f"{spec.name} params").value
        body: dict[str, Any] = to_builtins(params) if params is not None else {}
        body["_meta"] = self._enveloped(body.get("_meta"))
        if not fits:
            return body
        # Fitted with its envelope: a `_meta` of the caller's own (a progress
        # token) must not stand for the envelope the revision requires.
        fitted = fit(body, spec.params, label=f"{spec.name} params").value
        return to_builtins(fitted)  # input rounds edit it as a JSON object

    def _enveloped(self, meta: Any) -> dict[str, Any]:
        """A request's `_meta` with the session's envelope merged in."""
        if not isinstance(meta, dict):
            return self._envelope
        own = typing.cast("dict[str, Any]", meta)
        merged: dict[str, Any] = {**own, **self._envelope}
        asked: Any = own.get(META_CLIENT_CAPABILITIES)
        if isinstance(asked, dict):
            # Capabilities declared for this request only (e.g. an extension).
            merged[META_CLIENT_CAPABILITIES] = _merged(
                self._envelope.get(META_CLIENT_CAPABILITIES) or {},
                typing.cast("dict[str, Any]", asked),
            )
        return merged

    def _incoming(self, result: Any, result_type: Any, convert: bool) -> Any:
        if not convert:
            return result
        return fit(result, result_type, label="result", fill=RESULT_FILL).value

    async def _answer_input(self, params: Any, result: Any) -> Any:
        """The retry of a request answered `InputRequiredResult`."""
        return await self._answer_input_raw(params, to_builtins(result))

    async def _answer_input_raw(
        self, params: Mapping[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The retry of a request answered `InputRequiredResult` (builtins)."""
        responses: dict[str, Any] = {}
        requests: Any = result.get("inputRequests") or {}
        if not isinstance(requests, dict):
            raise ProtocolError("inputRequests is no JSON object")
        for key, request in typing.cast("dict[str, Any]", requests).items():
            if not isinstance(request, dict) or "method" not in request:
                raise ProtocolError(f"inputRequests[{key!r}] names no method")
            asked = typing.cast("dict[str, Any]", request)
            responses[key] = await self.answer_input(
                asked["method"], asked.get("params")
            )
        body = dict(params)
        body.pop("inputResponses", None)
        body.pop("requestState", None)
        if responses:
            body["inputResponses"] = responses
        state = result.get("requestState")
        if state:
            body["requestState"] = state
        return body

    async def _explained(self, exc: McpError) -> McpError | None:
        """`exc` told with how the server process ended (its exit status and
        the tail of its stderr), when the transport knows; else None."""
        transport = self.connection.transport
        if not isinstance(transport, _ReportsExit) or isinstance(
            exc, MessageTooLargeError
        ):
            return None
        if isinstance(exc, NegotiationError):
            # Only a dead server explains a negotiation that failed.
            report = await transport.exit_report(wait=0)
            if transport.returncode is None:
                return None
            return NegotiationError(f"{exc}; {report}")
        return TransportError(f"{exc}; {await transport.exit_report()}")

    # -- serving the server's requests and notifications --

    async def _serve(self, method: str, params: bytes | None) -> bytes | None:
        if self._dispatcher is None:
            raise MethodNotFoundError(method)
        return await self._dispatcher.dispatch(method, params)


def _merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, key by key into nested objects."""
    merged = dict(base)
    for key, value in extra.items():
        inner: Any = merged.get(key)
        if isinstance(inner, dict) and isinstance(value, dict):
            merged[key] = _merged(
                typing.cast("dict[str, Any]", inner),
                typing.cast("dict[str, Any]", value),
            )
        else:
            merged[key] = value
    return merged


def _without_envelope(body: Any) -> Any:
    """Params minus the modern `_meta` envelope keys (for a legacy server,
    which would take them for a modern request)."""
    if not isinstance(body, dict):
        return body
    params = typing.cast("dict[str, Any]", body)
    meta = params.get("_meta")
    if isinstance(meta, dict):
        kept = {
            k: v
            for k, v in typing.cast("dict[str, Any]", meta).items()
            if k not in ENVELOPE_KEYS
        }
        params = {k: v for k, v in params.items() if k != "_meta"}
        if kept:
            params["_meta"] = kept
    return params


def _supported(error: RpcError) -> list[Any] | None:
    data = error.data
    if isinstance(data, dict):
        supported: Any = typing.cast("dict[str, Any]", data).get("supported")
        if isinstance(supported, list):
            return [*typing.cast("Sequence[Any]", supported)]
    return None

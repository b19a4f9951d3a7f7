"""Serve one revision's methods with handlers written against another revision.

`adapt(handlers, package)` wraps generated handlers of revision A as handlers
of revision B (`package`): each call's params are fitted from B's types to A's,
the handler runs, and its result is fitted back to B's type. Methods A serves
that B lacks are left out; so are B's methods A lacks (they answer -32601).

Fitting goes by the method's declared types, not by type names, since a
method's params type may be renamed between revisions. What the target does not
define is kept as unknown keys (MCP objects are open) and what it cannot hold
at all is dropped; both are logged. Properties the target requires and the source
never had come from `fill`: the session sets it per request with
`conversion_fill()` (for 2026 params, the request `_meta` envelope built from
the legacy handshake); results of the modern era get `ttlMs: 0` and
`cacheScope: "private"`, the values that promise nothing.

`notification_fit(package)` fits the notifications such handlers send the same
way, dropping what the target revision does not define (a 2024-11-05 peer gets
no progress `message`); notifications it does not define go as they are.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from mcp_specgen_runtime.codec.conversion import ConversionError, Converted, fit
from mcp_specgen_runtime.codec.wire import decode, encode
from mcp_specgen_runtime.errors import InvalidParamsError
from mcp_specgen_runtime.jsonrpc.dispatch import (
    generated_base,
    implemented_methods,
    is_legacy,
    package_in,
    revision_of,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
    from types import ModuleType

    from mcp_specgen_runtime.codec.spec import Handlers, MethodSpec

__all__ = [
    "RESULT_FILL",
    "adapt",
    "conversion_fill",
    "nearest",
    "notification_fit",
    "package_of_version",
]

logger = logging.getLogger(__name__)

RESULT_FILL: Mapping[str, Any] = {
    "cacheScope": "private",
    "ttlMs": 0,
    "resultType": "complete",
}
"""Values for result properties a newer revision requires and an older lacks."""

_params_fill: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "mcp_specgen_runtime.protocol.adapt.params_fill", default=None
)


@contextlib.contextmanager
def conversion_fill(values: Mapping[str, Any]) -> Generator[None]:
    """Within the block, adapted handlers fill missing required params from
    `values` (by wire name)."""
    token = _params_fill.set(values)
    try:
        yield
    finally:
        _params_fill.reset(token)


def package_of_version(like: ModuleType, version: str) -> ModuleType:
    """The generated package of `version`, from the same generated tree as the
    revision package `like`.

    Raises:
        ValueError: the tree has no such version.
    """
    root = importlib.import_module(like.__name__.rsplit(".", 1)[0])
    return package_in(root.MODULES, version)


def nearest(package: ModuleType, handlers: Sequence[Handlers]) -> Handlers:
    """Of `handlers` (one per revision), the one to serve `package`'s revision:
    its own, else the nearest revision of the same era, else the nearest."""
    own = {revision_of(h)[0]: h for h in handlers}
    version: str = package.PROTOCOL_VERSION
    if version in own:
        return own[version]
    root = importlib.import_module(package.__name__.rsplit(".", 1)[0])
    known: tuple[str, ...] = tuple(root.KNOWN_VERSIONS)
    legacy = is_legacy(package)

    def distance(source: str) -> tuple[bool, int]:
        other_era = is_legacy(revision_of(own[source])[1]) != legacy
        return (other_era, abs(known.index(source) - known.index(version)))

    return own[min(own, key=distance)]


def adapt(handlers: Handlers, package: ModuleType) -> Handlers:
    """`handlers` serving the methods of the revision of `package`.

    Returns `handlers` itself when it is already of that revision.
    """
    source_version, _ = revision_of(handlers)
    target_version = getattr(package, "PROTOCOL_VERSION", None)
    if source_version == target_version:
        return handlers
    source_base = generated_base(type(handlers))
    target_base: type[Handlers] = getattr(package, source_base.__name__)
    label = f"{source_version} handler serving {target_version}"
    namespace: dict[str, Any] = {}
    for name in sorted(implemented_methods(handlers)):
        target = target_base.__mcp_methods__.get(name)
        if target is None or target.direction not in target_base.__mcp_directions__:
            continue
        source = handlers.__mcp_methods__[name]
        bound = getattr(handlers, source.py_name)
        namespace[target.py_name] = _converting(bound, source, target, label)
    namespace["__doc__"] = f"{type(handlers).__name__} adapted to {target_version}."
    adapted = type(
        f"{type(handlers).__name__}As{target_base.__name__}", (target_base,), namespace
    )
    instance: Handlers = adapted()
    return instance


_MISS: Any = object()
"""What `_read_as` answers for a value that does not fit as it is."""


def _readable(tp: Any) -> bool:
    """Whether JSON can be decoded into `tp` at all (a union holding a marker
    type cannot): such types always take `fit`."""
    try:
        decode(b"null", tp)
    except TypeError:
        return False
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    return True


def _read_as(value: Any, tp: Any) -> Any:
    """`value` (generated types) as `tp` when it fits as it is, keys `tp` does
    not name kept as unknown keys; else `_MISS`. What `fit` does first, in one
    encode and one decode instead of builtins and a conversion (a third of
    the cost for a small message)."""
    try:
        return decode(encode(value), tp)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return _MISS


def _converting(
    bound: Callable[..., Awaitable[Any]],
    source: MethodSpec,
    target: MethodSpec,
    label: str,
) -> Callable[..., Awaitable[Any]]:
    # Read as they are only when nothing is to be listed: the walk reports
    # the unknown keys, which a debug log shows.
    params_direct = source.params is not None and _readable(source.params)
    result_direct = target.result is not None and _readable(target.result)

    async def call(self: Handlers, params: Any = None) -> Any:
        args: tuple[Any, ...] = ()
        listing = logger.isEnabledFor(logging.DEBUG)
        if source.params is not None:
            if params_direct and params is not None and not listing:
                value = _read_as(params, source.params)
                if value is not _MISS:
                    result = await bound(value)
                    return _result(result, listing)
            try:
                converted = fit(
                    {} if params is None else params,
                    source.params,
                    label=f"{target.name} params, {label}",
                    fill=_params_fill.get(),
                    list_unknown=listing,
                )
            except ConversionError as exc:
                # The peer's params, valid in its revision or not, are what
                # cannot be served: its error, not ours.
                raise InvalidParamsError(target.name, str(exc)) from None
            _log(converted)
            args = (converted.value,)
        result = await bound(*args)
        return _result(result, listing)

    def _result(result: Any, listing: bool) -> Any:
        if target.result is None:
            return None
        if result_direct and not listing:
            value = _read_as(result, target.result)
            if value is not _MISS:
                return value
        converted = fit(
            result,
            target.result,
            label=f"{target.name} result, {label}",
            fill=RESULT_FILL,
            # Only a debug log would list the keys kept as unknown: without it,
            # a result that needs nothing dropped or filled goes in one pass.
            list_unknown=listing,
        )
        _log(converted)
        return converted.value

    call.__name__ = target.py_name
    return call


def _log(converted: Converted[Any]) -> None:
    for item in converted.dropped:
        logger.info("conversion dropped %s: %s", item.path, item.reason)
    for item in converted.unknown:
        logger.debug("conversion kept %s: %s", item.path, item.reason)


def notification_fit(package: ModuleType) -> Callable[[str, Any], Any]:
    """Fits outgoing notifications' params to the revision of `package`:
    properties it does not define are dropped (`_meta` is kept). A params
    object it cannot express at all goes as it is, logged."""
    methods: Mapping[str, MethodSpec] = package.METHODS
    version: str = package.PROTOCOL_VERSION

    def fit_notification(method: str, params: Any) -> Any:
        spec = methods.get(method)
        if spec is None or spec.kind != "notification" or spec.params is None:
            return params
        if params is None:
            return None
        try:
            converted = fit(
                params,
                spec.params,
                label=f"{method} params, sent at {version}",
                keep_unknown=False,
            )
        except ConversionError:
            logger.warning("%s not fitted to %s", method, version, exc_info=True)
            return params
        _log(converted)
        return converted.value

    return fit_notification

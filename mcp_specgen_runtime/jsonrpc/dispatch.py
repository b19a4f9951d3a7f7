"""Table-driven dispatch: raw params bytes in, handler called, result bytes out.

Generated packages provide the method table (`METHODS`) and handler base
classes (derived from `spec.Handlers`) whose methods all answer -32601; a
server or client subclasses them and overrides what it serves. `Dispatcher`
decodes `params` in one msgspec pass straight into the method's params type,
calls the handler, and encodes the result.
"""

from __future__ import annotations

import importlib
import typing
from typing import TYPE_CHECKING, Any

import msgspec

from mcp_specgen_runtime.codec.wire import decode, encode
from mcp_specgen_runtime.errors import InvalidParamsError, MethodNotFoundError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping
    from types import ModuleType

    from mcp_specgen_runtime.codec.spec import Handlers, MethodSpec

__all__ = [
    "Dispatcher",
    "generated_base",
    "implemented_methods",
    "is_legacy",
    "package_in",
    "revision_of",
]


def implemented_methods(handlers: Handlers) -> frozenset[str]:
    """Names of the methods `handlers` overrides (what a peer may call)."""
    base = generated_base(type(handlers))
    found: set[str] = set()
    for name, spec in handlers.__mcp_methods__.items():
        if spec.direction not in handlers.__mcp_directions__:
            continue
        if getattr(type(handlers), spec.py_name) is not getattr(base, spec.py_name):
            found.add(name)
    return frozenset(found)


def generated_base(cls: type[Any]) -> type[Handlers]:
    """The generated `ServerHandlers`/`ClientHandlers` class `cls` derives from.

    Raises:
        TypeError: `cls` derives from no generated handler class.
    """
    for klass in cls.__mro__:
        if "__mcp_methods__" in vars(klass):
            return typing.cast("type[Handlers]", klass)
    raise TypeError(f"{cls.__name__} does not derive from a generated handler class")


def is_legacy(package: ModuleType) -> bool:
    """Whether a generated revision package uses the `initialize` handshake."""
    return "initialize" in package.METHODS


def package_in(modules: Mapping[str, str], version: str) -> ModuleType:
    """The generated package of `version`, given a tree's `MODULES` table.

    Raises:
        ValueError: the tree has no such version.
    """
    if version not in modules:
        known = ", ".join(modules)
        raise ValueError(f"unknown protocol version {version!r} (known: {known})")
    return importlib.import_module(modules[version])


def revision_of(handlers: Handlers) -> tuple[str, ModuleType]:
    """The protocol version and generated package of `handlers`.

    Raises:
        TypeError: not handlers of a generated revision package.
    """
    base = generated_base(type(handlers))
    package = importlib.import_module(base.__module__.rsplit(".", 1)[0])
    version = getattr(package, "PROTOCOL_VERSION", None)
    if not isinstance(version, str):
        raise TypeError(f"{package.__name__} has no PROTOCOL_VERSION")
    return version, package


class Dispatcher:
    """Calls the handler of a method with decoded params and encodes its result.

    Raises (from `dispatch`):
        MethodNotFoundError: unknown method, or one `handlers` does not implement.
        InvalidParamsError: params that do not fit, with the field and reason.
    """

    def __init__(self, handlers: Handlers) -> None:
        self.handlers = handlers
        self.implemented = implemented_methods(handlers)
        self._bound: dict[str, tuple[MethodSpec, Callable[..., Awaitable[Any]]]] = {
            name: (spec, getattr(handlers, spec.py_name))
            for name, spec in handlers.__mcp_methods__.items()
            if name in self.implemented
        }

    def methods(self) -> Iterable[str]:
        """The methods this dispatcher serves, sorted."""
        return sorted(self.implemented)

    async def dispatch(self, method: str, params: bytes | None) -> bytes | None:
        """Handle one request or notification; returns the encoded result (None
        for notifications)."""
        bound = self._bound.get(method)
        if bound is None:
            raise MethodNotFoundError(method)
        spec, handler = bound
        if spec.params is None:
            result = await handler()
        else:
            result = await handler(self.decode_params(spec, params))
        return None if spec.kind == "notification" else encode(result)

    @staticmethod
    def decode_params(spec: MethodSpec, params: bytes | None) -> Any:
        """One msgspec decode of `params` into the method's params type."""
        if params is None:
            if spec.params_required:
                raise InvalidParamsError(spec.name, "params are required")
            try:
                return spec.params()
            except TypeError as exc:
                raise InvalidParamsError(
                    spec.name, f"params are required ({exc})"
                ) from None
        try:
            return decode(params, spec.params)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise InvalidParamsError(spec.name, str(exc)) from None

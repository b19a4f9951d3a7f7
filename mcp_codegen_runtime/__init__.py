"""mcp-codegen runtime: what generated MCP types, servers and clients need at run time.

Depends on msgspec and anyio. The wire codec, the dispatcher and the JSON-RPC
connection are importable from here::

    from mcp_codegen_runtime import Connection, Dispatcher, decode, encode
"""

from typing import TYPE_CHECKING, Any

from .wire import (
    UNSET,
    ClosedStruct,
    OpenStruct,
    UnsetType,
    ValidationError,
    convert,
    decode,
    encode,
    extra,
    recursive_alias,
    structural_union,
    to_builtins,
    with_extra,
)

if TYPE_CHECKING:
    from .dispatch import Dispatcher
    from .jsonrpc import Connection, current_request
    from .session import ServerSession

# The engine pulls in anyio; generated types need only the codec, so they import
# fast. The engine's names load on first use.
_LAZY = {
    "Connection": "jsonrpc",
    "Dispatcher": "dispatch",
    "ServerSession": "session",
    "current_request": "jsonrpc",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "UNSET",
    "ClosedStruct",
    "Connection",
    "Dispatcher",
    "OpenStruct",
    "ServerSession",
    "UnsetType",
    "ValidationError",
    "convert",
    "current_request",
    "decode",
    "encode",
    "extra",
    "recursive_alias",
    "structural_union",
    "to_builtins",
    "with_extra",
]

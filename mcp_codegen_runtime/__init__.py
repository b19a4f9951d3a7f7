"""mcp-codegen runtime: what generated MCP types, servers and clients need at run time.

Depends on msgspec only. Import the wire codec from here::

    from mcp_codegen_runtime import decode, encode
"""

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

__all__ = [
    "UNSET",
    "ClosedStruct",
    "OpenStruct",
    "UnsetType",
    "ValidationError",
    "convert",
    "decode",
    "encode",
    "extra",
    "recursive_alias",
    "structural_union",
    "to_builtins",
    "with_extra",
]

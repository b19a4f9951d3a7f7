"""The codec: msgspec decode/encode, unknown keys, structural unions, conversions
between revisions, and the method tables generated code fills. Stands on msgspec only.

Generated types, method tables and dispatch stubs import this layer (and
`mcp_specgen_runtime.errors`), nothing above it.
"""

from .conversion import ConversionError, Converted, convert_across
from .spec import Handlers, MethodSpec, RequestSender
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
    "ConversionError",
    "Converted",
    "Handlers",
    "MethodSpec",
    "OpenStruct",
    "RequestSender",
    "UnsetType",
    "ValidationError",
    "convert",
    "convert_across",
    "decode",
    "encode",
    "extra",
    "recursive_alias",
    "structural_union",
    "to_builtins",
    "with_extra",
]

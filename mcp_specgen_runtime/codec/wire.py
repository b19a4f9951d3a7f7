"""The wire codec: decode and encode generated MCP types without losing data.

Generated types are msgspec Structs that forbid unknown fields, so that the
common case (no unknown keys) is one msgspec decode at full speed. When a
message does carry keys the schema does not name, JSON Schema still accepts
it (objects are open unless `additionalProperties: false`), so `decode` falls
back to a slower path that sets the unknown keys aside object by object, keeps
them on the object (`extra(obj)`) and leaves the rest to msgspec; `encode`
writes them back. A message that does not fit is converted again piece by
piece, for an error that says where and why.

Unions without a discriminator (`TextResourceContents | BlobResourceContents`)
cannot be decoded by msgspec directly. Generated code declares them with
`structural_union`: at run time a marker type whose decoding picks the first
member that accepts the value, trying members that fit without unknown keys
first; a member with a const property of its own (`resultType:
"input_required"`) is the only one tried for a value that carries it.
Recursive aliases (`JSONValue`) are declared with `recursive_alias`.
"""

from __future__ import annotations

import typing
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType, ValidationError

from ._const_choice import (
    distinct_consts as _distinct_consts,
    named_member as _named_member,
)
from ._encode_walk import with_extras as _with_extras
from ._error_text import UNKNOWN_FIELD as _UNKNOWN_FIELD
from ._extras import (
    EXTRA_ATTR as _EXTRA_ATTR,
    attach as _attach,
    live_extras as _live_extras,
)
from ._markers import (
    Marker as _Marker,
    dec_hook as _dec_hook,
    marker_members as marker_members,
)
from ._structs import (
    ClosedStruct,
    OpenStruct,
    required_fields as required_fields,
    struct_fields as struct_fields,
)
from ._tag_guard import require_tag as _require_tag
from ._unknown_keys import (
    convert_open as _convert_open,
    convert_to as _convert,
    with_unknown_keys as _with_unknown_keys,
)

if typing.TYPE_CHECKING:
    from collections.abc import Callable

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

T = TypeVar("T")


class _StructuralUnion(_Marker):
    _consts: tuple[tuple[Any, str, str], ...] | None = None

    @classmethod
    def resolve(cls, obj: Any) -> Any:
        if cls._consts is None:
            cls._consts = _distinct_consts(cls.members())
        named = _named_member(obj, cls._consts) if cls._consts else None
        members = cls.members() if named is None else (named,)
        errors: list[str] = []
        for member in members:
            try:
                return _convert(obj, member, allow_extra=False)
            except ValidationError as exc:
                errors.append(f"{_type_name(member)}: {exc}")
        for member in members:
            try:
                return _convert_open(obj, member)
            except ValidationError:
                pass
        raise ValidationError(
            f"no member of {cls.__name__} accepts the value ({'; '.join(errors)})"
        )


class _RecursiveAlias(_Marker):
    @classmethod
    def resolve(cls, obj: Any) -> Any:
        (target,) = cls.members()
        return _convert_open(obj, target)


def structural_union(name: str, module: str, *members: str) -> Any:
    """Declare a union without a discriminator; members are type expressions as text."""
    attrs = {"__mcp_module__": module, "__mcp_members__": members, "__module__": module}
    return type(name, (_StructuralUnion,), attrs)


def recursive_alias(name: str, module: str, target: str) -> Any:
    """Declare a recursive type alias; `target` is its type expression as text."""
    attrs = {
        "__mcp_module__": module,
        "__mcp_members__": (target,),
        "__module__": module,
    }
    return type(name, (_RecursiveAlias,), attrs)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


class _Decoders(dict[Any, "Callable[[bytes | str], Any]"]):
    """Per type: its decoder's bound `decode` (tagged Structs behind their tag
    guard), made on first use."""

    def __missing__(self, tp: Any) -> Callable[[bytes | str], Any]:
        decoder = msgspec.json.Decoder(_require_tag(tp), dec_hook=_dec_hook)
        decode_as = self[tp] = decoder.decode
        return decode_as


_decoders = _Decoders()
_encode = msgspec.json.Encoder().encode
_live_tokens = _live_extras.refs
"""The live tokens' weak references; empty when no object keeps unknown keys."""


def decode(data: bytes | str, type: type[T] | Any) -> T:
    """Decode JSON into `type`, keeping keys the schema does not name.

    Raises:
        ValidationError: the message does not fit `type`; the text says where and why.
        msgspec.DecodeError: the input is not JSON.
    """
    # The hot path of every message: a subscript and msgspec's decode, nothing
    # else (a `try` costs nothing until it catches).
    try:
        value: T = _decoders[type](data)  # not typing.cast: a call, every message
        return value
    except ValidationError as exc:
        if _UNKNOWN_FIELD not in str(exc):
            raise
    except (UnicodeDecodeError, RecursionError) as exc:
        raise _unreadable(exc) from None
    try:
        builtins = msgspec.json.decode(data)
        found = _with_unknown_keys(builtins, type, tried_whole=False)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise _unreadable(exc) from None
    return typing.cast("T", found)


def _unreadable(exc: UnicodeDecodeError | RecursionError) -> msgspec.DecodeError:
    """The `DecodeError` for what msgspec reports with Python's own errors."""
    if isinstance(exc, RecursionError):
        return msgspec.DecodeError("JSON is nested too deeply")
    return msgspec.DecodeError(f"JSON is malformed: a string is not UTF-8 ({exc})")


def convert(obj: Any, type: type[T] | Any) -> T:
    """Convert builtins (dicts, lists, scalars) into `type`, keeping unknown keys.

    Raises:
        ValidationError: the value does not fit `type`.
    """
    return typing.cast("T", _convert_open(obj, type))


def encode(obj: Any) -> bytes:
    """Encode a value as JSON, unknown keys kept by `decode` included."""
    if not _live_tokens:  # a set's truth, not a property: this is every message
        return _encode(obj)
    return _encode(_with_extras(obj))


def to_builtins(obj: Any) -> Any:
    """Return `obj` as JSON-ready builtins, unknown keys kept by `decode` included."""
    if not _live_tokens:
        return msgspec.to_builtins(obj)
    return msgspec.to_builtins(_with_extras(obj))


def extra(obj: msgspec.Struct) -> dict[str, Any]:
    """The properties of `obj` that its schema does not name (empty if none)."""
    return dict(getattr(obj, "__dict__", {}).get(_EXTRA_ATTR, {}))


def with_extra(obj: OpenStruct, properties: dict[str, Any]) -> OpenStruct:
    """Attach properties the schema does not name to `obj`; `encode` writes them.

    Raises:
        ValueError: a key is one of the type's own properties.
    """
    names = set(obj.__struct_encode_fields__)
    tag_field = obj.__struct_config__.tag_field
    if tag_field is not None:
        names.add(tag_field)
    clashing = sorted(names.intersection(properties))
    if clashing:
        raise ValueError(f"{type(obj).__name__} already defines {', '.join(clashing)}")
    _attach(obj, dict(properties))
    return obj

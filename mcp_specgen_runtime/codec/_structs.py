"""The bases of generated objects, and the fields of a Struct class."""

from __future__ import annotations

import functools
import typing
from typing import Any

import msgspec


class OpenStruct(msgspec.Struct, forbid_unknown_fields=True, dict=True, weakref=True):
    """Base of generated objects that keep properties the schema does not name.

    Subclasses declare `kw_only=True` themselves: msgspec does not inherit it.
    """


class ClosedStruct(msgspec.Struct, forbid_unknown_fields=True):
    """Base of generated objects whose schema forbids other properties."""


_field_types: dict[type[msgspec.Struct], dict[str, Any]] = {}


def struct_fields(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The resolved type of each field of `struct`, by wire name (cached)."""
    fields = _field_types.get(struct)
    if fields is None:
        hints = typing.get_type_hints(struct, include_extras=True)
        fields = _field_types[struct] = {
            wire: hints[attr]
            for attr, wire in zip(
                struct.__struct_fields__, struct.__struct_encode_fields__, strict=True
            )
        }
    return fields


@functools.cache
def required_fields(struct: type[msgspec.Struct]) -> frozenset[str]:
    """The wire names of the fields `struct` requires (cached)."""
    return frozenset(
        field.encode_name for field in msgspec.structs.fields(struct) if field.required
    )

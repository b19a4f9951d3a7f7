"""The encode side: values with the unknown keys their Structs keep written in."""

from __future__ import annotations

import operator
import typing
from typing import Any

import msgspec
from msgspec import UNSET

from ._extras import EXTRA_ATTR
from ._structs import struct_fields
from ._unknown_keys import fitter


def with_extras(obj: Any) -> Any:
    """`obj` with the unknown keys its Structs keep written in.

    A Struct with some becomes a dict; one holding such a Struct, a copy that
    holds the dict. Values without any are returned as they are.
    """
    if isinstance(obj, msgspec.Struct):
        return _struct_with_extras(obj)
    if isinstance(obj, (list, tuple)):
        items: list[Any] | tuple[Any, ...] = typing.cast("Any", obj)
        expanded = [
            (
                _struct_with_extras(item)
                if isinstance(item, msgspec.Struct)
                else with_extras(item)
            )
            for item in items
        ]
        return expanded if any(map(operator.is_not, expanded, items)) else items
    if isinstance(obj, dict):
        mapping: dict[str, Any] = typing.cast("Any", obj)
        values = [with_extras(value) for value in mapping.values()]
        if any(map(operator.is_not, values, mapping.values())):
            return dict(zip(mapping, values, strict=True))
        return mapping
    return obj


def _struct_with_extras(obj: msgspec.Struct) -> Any:
    layout = _layouts.get(type(obj)) or _layout(type(obj))
    changed: dict[str, Any] = {}
    for attr in layout.nested:
        value = getattr(obj, attr)
        if value is not UNSET:
            expanded = (
                _struct_with_extras(value)
                if isinstance(value, msgspec.Struct)
                else with_extras(value)
            )
            if expanded is not value:
                changed[attr] = expanded
    state: dict[str, Any] = getattr(obj, "__dict__", _NO_STATE)
    extras: dict[str, Any] | None = state.get(EXTRA_ATTR)
    if not extras:
        if not changed:
            return obj
        if layout.replaceable:
            # msgspec encodes whatever a field holds: a copy with the expanded
            # values in place is cheaper than a dict.
            return msgspec.structs.replace(obj, **changed)
    out: dict[str, Any] = {}
    if layout.tag_field is not None:
        out[layout.tag_field] = layout.tag
    for attr, wire in layout.fields:
        value = changed.get(attr, getattr(obj, attr))
        if value is not UNSET:
            out[wire] = value
    if extras:
        for key, value in extras.items():
            out.setdefault(key, value)
    return out


_NO_STATE: dict[str, Any] = {}


class _Layout:
    """The fields of a Struct class, and those whose values may hold a Struct."""

    def __init__(self, struct: type[msgspec.Struct]) -> None:
        config = struct.__struct_config__
        self.tag_field = config.tag_field
        self.tag = config.tag
        self.fields = tuple(
            zip(struct.__struct_fields__, struct.__struct_encode_fields__, strict=True)
        )
        self.replaceable = not hasattr(struct, "__post_init__")
        # A field whose declared type names no Struct (`str`, `list[str]`,
        # `dict[str, Any]`) is skipped: decode and convert never put a Struct
        # in such a place, `Any` included, so no unknown keys can be inside.
        try:
            types = struct_fields(struct)
            self.nested = tuple(
                attr for attr, wire in self.fields if fitter(types[wire]) is not None
            )
        except Exception:  # hints that do not resolve: look into every field
            self.nested = struct.__struct_fields__


_layouts: dict[type[msgspec.Struct], _Layout] = {}


def _layout(struct: type[msgspec.Struct]) -> _Layout:
    layout = _layouts[struct] = _Layout(struct)
    return layout

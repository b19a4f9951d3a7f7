"""Which member of a structural union a value names by a const property.

A member with a required single-value string property (a const, or a Struct
tag) is the one a value carrying that value means: `resultType:
"input_required"` is an InputRequiredResult even when its keys would also fit
the method's complete result. A const that two members share names
neither (`type: "string"` of several enum schemas); members without a const
are chosen by shape as before.
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec


def const_of(member: Any) -> tuple[str, str] | None:
    """The (wire name, value) of a Struct member's const property, if it has one."""
    if not (isinstance(member, type) and issubclass(member, msgspec.Struct)):
        return None
    info = msgspec.inspect.type_info(member)
    assert isinstance(info, msgspec.inspect.StructType)
    if isinstance(info.tag_field, str) and isinstance(info.tag, str):
        return info.tag_field, info.tag
    for field in info.fields:
        kind = field.type
        if (
            field.required
            and isinstance(kind, msgspec.inspect.LiteralType)
            and len(kind.values) == 1
            and isinstance(kind.values[0], str)
        ):
            return field.encode_name, kind.values[0]
    return None


def distinct_consts(members: tuple[Any, ...]) -> tuple[tuple[Any, str, str], ...]:
    """(member, wire name, value) of each member whose const no other member has."""
    found = [(m, c) for m in members if (c := const_of(m)) is not None]
    shared = [c for _, c in found]
    return tuple((m, *c) for m, c in found if shared.count(c) == 1)


def named_member(obj: Any, consts: tuple[tuple[Any, str, str], ...]) -> Any | None:
    """The member whose const `obj` carries; None if it carries none of them."""
    if isinstance(obj, dict):
        fields = typing.cast("dict[str, Any]", obj)
        for member, key, value in consts:
            if fields.get(key) == value:
                return member
    return None

"""Marker types: run-time stand-ins for types msgspec cannot express, and
the decode hook through which msgspec resolves them."""

from __future__ import annotations

import sys
import types
import typing
from typing import Any

from msgspec import ValidationError

from ._error_text import INSIDE, LOCATION
from ._tag_guard import Never


class _MarkerType(type):
    """Metaclass of markers: a value is an instance if it is one of a member's."""

    def __instancecheck__(cls, obj: Any) -> bool:
        marker = typing.cast("type[Marker]", cls)
        return isinstance(obj, marker.classes())


class Marker(metaclass=_MarkerType):
    """Base of run-time stand-ins for types msgspec cannot express."""

    __mcp_module__: str
    __mcp_members__: tuple[str, ...]
    _resolved: tuple[Any, ...] | None = None
    _classes: tuple[type, ...] | None = None

    @classmethod
    def members(cls) -> tuple[Any, ...]:
        """The member types, resolved in the declaring module on first use."""
        if cls._resolved is None:
            namespace = vars(sys.modules[cls.__mcp_module__])
            cls._resolved = tuple(eval(m, namespace) for m in cls.__mcp_members__)
        return cls._resolved

    @classmethod
    def classes(cls) -> tuple[type, ...]:
        """The Python classes that values of this type have."""
        if cls._classes is None:
            found: list[type] = []
            for member in cls.members():
                found.extend(_classes_of(member))
            cls._classes = tuple(found)
        return cls._classes

    @classmethod
    def resolve(cls, obj: Any) -> Any:
        raise NotImplementedError


def marker_members(tp: Any) -> tuple[Any, ...] | None:
    """The members of a structural union or recursive alias; None for other types."""
    if isinstance(tp, type) and issubclass(tp, Marker):
        return tp.members()
    return None


def dec_hook(tp: Any, obj: Any) -> Any:
    """msgspec's hook for what it cannot decode: markers, and the tag guard's field."""
    if isinstance(tp, type) and issubclass(tp, Marker):
        try:
            return tp.resolve(obj)
        except ValidationError as exc:
            # msgspec appends the location of this value to a ValueError raised
            # here; a location found inside it is kept as a note before that.
            located = LOCATION.fullmatch(str(exc))
            if located is None:
                raise ValueError(str(exc)) from None
            reason, inner = located.groups()
            noted = INSIDE.fullmatch(reason)
            if noted:
                reason, deeper = noted.groups()
                inner += deeper
            raise ValueError(f"{reason} (at `${inner}` inside)") from None
    if tp is Never:
        raise ValueError("not a known tag")
    raise NotImplementedError(f"cannot decode {tp!r}")


def _classes_of(tp: Any) -> list[type]:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _classes_of(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [c for arg in typing.get_args(tp) for c in _classes_of(arg)]
    if origin is typing.Literal:
        return [type(value) for value in typing.get_args(tp)]
    if origin is not None:
        return [origin]
    if tp is None:
        return [type(None)]
    if tp is Any:
        return [object]
    if isinstance(tp, type) and issubclass(tp, Marker):
        return list(tp.classes())
    return [tp] if isinstance(tp, type) else [object]

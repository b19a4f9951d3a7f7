"""The slow path: converting values with unknown keys, keeping them."""

from __future__ import annotations

import contextvars
import functools
import types
import typing
from typing import Any

import msgspec
from msgspec import UnsetType, ValidationError

from ._error_text import UNKNOWN_FIELD, at, union_reason
from ._extras import EXTRA_ATTR, TOKEN_ATTR, Token, attach, live_extras
from ._markers import Marker, dec_hook
from ._structs import OpenStruct, struct_fields
from ._tag_guard import require_tag

# --- the slow path: values with unknown keys ----------------------------------


def convert_to(obj: Any, tp: Any, *, allow_extra: bool) -> Any:
    """Convert `obj` to `tp`; unknown keys are kept when `allow_extra`."""
    try:
        return msgspec.convert(obj, require_tag(tp), dec_hook=dec_hook)
    except ValidationError as exc:
        if not allow_extra or UNKNOWN_FIELD not in str(exc):
            raise
    except TypeError:
        pass  # a union holding a marker type: msgspec cannot take it whole
    return _convert_parts(obj, tp, allow_extra)


def convert_open(obj: Any, tp: Any) -> Any:
    """`convert_to(obj, tp, allow_extra=True)`, faster when there are unknown keys."""
    try:
        return msgspec.convert(obj, require_tag(tp), dec_hook=dec_hook)
    except ValidationError as exc:
        if UNKNOWN_FIELD not in str(exc):
            raise
    except TypeError:
        pass  # a union holding a marker type: msgspec cannot take it whole
    return with_unknown_keys(obj, tp, tried_whole=True)


def with_unknown_keys(obj: Any, tp: Any, *, tried_whole: bool) -> Any:
    """Convert a value that has unknown keys somewhere, keeping them.

    First in one pass that sets the unknown keys aside and leaves the rest to
    msgspec, one call per object (`fitter`). That pass only has to be right
    for values that fit; when anything does not, the value is converted again
    the careful way, piece by piece, whose errors say exactly where and why.
    `tried_whole`: msgspec has already refused `obj` as a whole.
    """
    if not _in_careful_pass.get():
        try:
            fit = fitter(tp)
            fitted = obj if fit is None else fit(obj, live_extras.token())
            return msgspec.convert(fitted, require_tag(tp), dec_hook=dec_hook)
        except (ValidationError, TypeError):
            pass
    # Values inside go the careful way at once: trying a fit again at each
    # structural union below would multiply the work with their depth.
    reset = _in_careful_pass.set(True)
    try:
        if tried_whole:
            return _convert_parts(obj, tp, True)
        return convert_to(obj, tp, allow_extra=True)
    finally:
        _in_careful_pass.reset(reset)


_in_careful_pass = contextvars.ContextVar("_in_careful_pass", default=False)


def _convert_parts(obj: Any, tp: Any, allow_extra: bool) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        inner = convert_to(obj, typing.get_args(tp)[0], allow_extra=allow_extra)
        return msgspec.convert(inner, tp, dec_hook=dec_hook)
    if origin is typing.Union or origin is types.UnionType:
        return _convert_union(obj, typing.get_args(tp), allow_extra)
    if origin is list and isinstance(obj, list):
        (item_type,) = typing.get_args(tp)
        items: list[Any] | tuple[Any, ...] = typing.cast("Any", obj)
        return [
            at(f"[{index}]", convert_to, item, item_type, allow_extra)
            for index, item in enumerate(items)
        ]
    if origin is dict and isinstance(obj, dict):
        _, value_type = typing.get_args(tp)
        mapping: dict[str, Any] = typing.cast("Any", obj)
        return {
            key: at("[...]", convert_to, value, value_type, allow_extra)
            for key, value in mapping.items()
        }
    if isinstance(tp, type) and issubclass(tp, Marker):
        return tp.resolve(obj)
    if (
        isinstance(tp, type)
        and issubclass(tp, msgspec.Struct)
        and isinstance(obj, dict)
    ):
        fields: dict[str, Any] = typing.cast("Any", obj)
        struct: type[msgspec.Struct] = typing.cast("Any", tp)
        return _convert_struct(fields, struct, allow_extra)
    target: Any = typing.cast("Any", tp)
    return msgspec.convert(obj, target, dec_hook=dec_hook)


def _convert_union(obj: Any, members: tuple[Any, ...], allow_extra: bool) -> Any:
    candidates = [m for m in members if m is not UnsetType]
    if obj is None and type(None) in candidates:
        return None
    errors: list[str] = []
    for member in candidates:
        try:
            return convert_to(obj, member, allow_extra=allow_extra)
        except ValidationError as exc:
            errors.append(str(exc))
    raise ValidationError(union_reason(errors))


class _StructPlan:
    """What the slow path needs to know about one Struct type."""

    def __init__(self, struct: type[msgspec.Struct]) -> None:
        config = struct.__struct_config__
        self.fields = struct_fields(struct)
        self.tag_field = config.tag_field
        self.open = issubclass(struct, OpenStruct)
        self.names = frozenset(self.fields).union(
            () if config.tag_field is None else (config.tag_field,)
        )
        self.fitters = {
            wire: fit
            for wire, field_type in self.fields.items()
            if (fit := fitter(field_type)) is not None
        }
        self.hooked = any(map(_names_marker, self.fields.values()))


_plans: dict[type[msgspec.Struct], _StructPlan] = {}


def _plan(struct: type[msgspec.Struct]) -> _StructPlan:
    plan = _plans.get(struct)
    if plan is None:
        plan = _plans[struct] = _StructPlan(struct)
    return plan


def _convert_struct(
    obj: dict[str, Any], struct: type[msgspec.Struct], allow_extra: bool
) -> Any:
    plan = _plan(struct)
    known: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for key, value in obj.items():
        field_type = plan.fields.get(key)
        if field_type is not None:
            if isinstance(value, (dict, list)):
                value = at(f".{key}", convert_to, value, field_type, allow_extra)
            known[key] = value
        elif key == plan.tag_field:
            known[key] = value
        else:
            extras[key] = value
    if extras and not (allow_extra and plan.open):
        raise ValidationError(f"{UNKNOWN_FIELD} `{next(iter(extras))}`")
    if plan.tag_field is not None and plan.tag_field not in obj:
        raise ValidationError(f"Object missing required field `{plan.tag_field}`")
    result = msgspec.convert(known, struct, dec_hook=dec_hook)
    attach(result, extras)
    return result


_Fit = typing.Callable[[Any, Token], Any]
"""Converts the Structs in a value of some type, giving those with unknown keys
the token; leaves the rest as it is, for `msgspec.convert` to check after."""

_fitters: dict[Any, _Fit | None] = {}


def fitter(tp: Any) -> _Fit | None:
    """The fit for values of `tp`; None when no value of `tp` holds a Struct."""
    # Unions equal but for the order of their members (which the careful path
    # follows) are told apart by their text.
    key = tp if isinstance(tp, type) else (tp, repr(tp))
    try:
        return _fitters[key]
    except KeyError:
        fit = _fitters[key] = _make_fitter(tp)
        return fit
    except TypeError:  # an unhashable type expression
        return functools.partial(_fit_carefully, tp)


def _make_fitter(tp: Any) -> _Fit | None:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return fitter(args[0])  # msgspec checks the constraints after
    if origin is typing.Union or origin is types.UnionType:
        return _union_fitter(tp, args)
    if origin is list:
        item = fitter(args[0])
        return None if item is None else functools.partial(_fit_list, item)
    if origin is dict:
        value = fitter(args[1])
        return None if value is None else functools.partial(_fit_dict, value)
    if origin is typing.Literal or tp is Any or tp is None:
        return None
    if origin is None and isinstance(tp, type):
        if issubclass(tp, Marker):
            return functools.partial(_fit_carefully, tp)
        if issubclass(tp, msgspec.Struct):
            return functools.partial(_fit_struct, tp)
        return None
    if origin is not None and all(fitter(arg) is None for arg in args):
        return None
    return functools.partial(_fit_carefully, tp)


def _union_fitter(tp: Any, args: tuple[Any, ...]) -> _Fit | None:
    """Only an object can have unknown keys, so a union's fit is that of its one
    member holding Structs, or of the tagged Struct a message's tag names.
    Other unions holding Structs are converted carefully."""
    members = [arg for arg in args if arg is not UnsetType and arg is not type(None)]
    fitters = [fitter(member) for member in members]
    if not any(fitters):
        return None
    if len(members) == 1:
        return fitters[0]
    tagged = _tagged_structs(members)
    if tagged is None:
        return functools.partial(_fit_carefully, tp)
    return functools.partial(_fit_tagged, *tagged)


def _tagged_structs(
    members: list[Any],
) -> tuple[str, dict[Any, type[msgspec.Struct]]] | None:
    """The tag field and the members by tag, if `members` are Structs tagged alike."""
    tag_fields: set[str | None] = set()
    by_tag: dict[Any, type[msgspec.Struct]] = {}
    for member in members:
        if not (isinstance(member, type) and issubclass(member, msgspec.Struct)):
            return None
        config = member.__struct_config__
        tag_fields.add(config.tag_field)
        by_tag[config.tag] = member
    if len(tag_fields) != 1 or len(by_tag) != len(members):
        return None
    (tag_field,) = tag_fields
    return None if tag_field is None else (tag_field, by_tag)


def _names_marker(tp: Any) -> bool:
    """Whether `tp` names a marker type, outside any Struct it names."""
    if isinstance(tp, type):
        return issubclass(tp, Marker)
    return any(map(_names_marker, typing.get_args(tp)))


def _fit_carefully(tp: Any, obj: Any, token: Token) -> Any:
    return convert_to(obj, tp, allow_extra=True)


def _fit_list(item: _Fit, obj: Any, token: Token) -> Any:
    if not isinstance(obj, list):
        return obj
    items: list[Any] = typing.cast("Any", obj)
    return [item(value, token) for value in items]


def _fit_dict(value: _Fit, obj: Any, token: Token) -> Any:
    if not isinstance(obj, dict):
        return obj
    mapping: dict[str, Any] = typing.cast("Any", obj)
    return {key: value(item, token) for key, item in mapping.items()}


def _fit_tagged(
    tag_field: str, by_tag: dict[Any, type[msgspec.Struct]], obj: Any, token: Token
) -> Any:
    if not isinstance(obj, dict):
        return obj
    fields: dict[str, Any] = typing.cast("Any", obj)
    struct = by_tag.get(fields.get(tag_field))
    return fields if struct is None else _fit_struct(struct, fields, token)


def _fit_struct(struct: type[msgspec.Struct], obj: Any, token: Token) -> Any:
    """`_convert_struct` for a value that fits: no error messages to care about."""
    if not isinstance(obj, dict):
        return obj
    fields: dict[str, Any] = typing.cast("Any", obj)
    plan = _plans.get(struct) or _plan(struct)
    if plan.tag_field is not None and plan.tag_field not in fields:
        raise ValidationError("missing tag")
    names, fitters = plan.names, plan.fitters
    known: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for key, value in fields.items():
        if key not in names:
            extras[key] = value
        elif isinstance(value, (dict, list)) and key in fitters:
            known[key] = fitters[key](value, token)
        else:
            known[key] = value
    if extras and not plan.open:
        raise ValidationError(UNKNOWN_FIELD)
    if plan.hooked:
        result = msgspec.convert(known, struct, dec_hook=dec_hook)
    else:
        result = msgspec.convert(known, struct)  # any keyword costs ~0.3 µs
    if extras:
        state = vars(result)
        state[EXTRA_ATTR] = extras
        state[TOKEN_ATTR] = token
    return result

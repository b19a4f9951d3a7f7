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
first. Recursive aliases (`JSONValue`) are declared with `recursive_alias`.
"""

from __future__ import annotations

import contextvars
import functools
import operator
import re
import sys
import types
import typing
import weakref
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType, ValidationError

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

_EXTRA_ATTR = "_mcp_extra"
_UNKNOWN_FIELD = "Object contains unknown field"


class OpenStruct(msgspec.Struct, forbid_unknown_fields=True, dict=True, weakref=True):
    """Base of generated objects that keep properties the schema does not name.

    Subclasses declare `kw_only=True` themselves: msgspec does not inherit it.
    """


class ClosedStruct(msgspec.Struct, forbid_unknown_fields=True):
    """Base of generated objects whose schema forbids other properties."""


class _MarkerType(type):
    """Metaclass of markers: a value is an instance if it is one of a member's."""

    def __instancecheck__(cls, obj: Any) -> bool:
        marker = typing.cast("type[_Marker]", cls)
        return isinstance(obj, marker.classes())


class _Marker(metaclass=_MarkerType):
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


class _StructuralUnion(_Marker):
    @classmethod
    def resolve(cls, obj: Any) -> Any:
        errors: list[str] = []
        for member in cls.members():
            try:
                return _convert(obj, member, allow_extra=False)
            except ValidationError as exc:
                errors.append(f"{_type_name(member)}: {exc}")
        for member in cls.members():
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


def marker_members(tp: Any) -> tuple[Any, ...] | None:
    """The members of a structural union or recursive alias; None for other types."""
    if isinstance(tp, type) and issubclass(tp, _Marker):
        return tp.members()
    return None


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


def _dec_hook(tp: Any, obj: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, _Marker):
        try:
            return tp.resolve(obj)
        except ValidationError as exc:
            # msgspec appends the location of this value to a ValueError raised
            # here; a location found inside it is kept as a note before that.
            located = _LOCATION.fullmatch(str(exc))
            if located is None:
                raise ValueError(str(exc)) from None
            reason, inner = located.groups()
            noted = _INSIDE.fullmatch(reason)
            if noted:
                reason, deeper = noted.groups()
                inner += deeper
            raise ValueError(f"{reason} (at `${inner}` inside)") from None
    if tp is _Never:
        raise ValueError("not a known tag")
    raise NotImplementedError(f"cannot decode {tp!r}")


_decoders: dict[Any, Callable[[bytes | str], Any]] = {}
"""Per type: its decoder's bound `decode` (tagged Structs behind their tag guard)."""
_encoder = msgspec.json.Encoder()


def decode(data: bytes | str, type: type[T] | Any) -> T:
    """Decode JSON into `type`, keeping keys the schema does not name.

    Raises:
        ValidationError: the message does not fit `type`; the text says where and why.
        msgspec.DecodeError: the input is not JSON.
    """
    # The hot path of every message: one dict lookup and msgspec's decode.
    decode_as = _decoders.get(type)
    if decode_as is None:
        decoder = msgspec.json.Decoder(_require_tag(type), dec_hook=_dec_hook)
        decode_as = _decoders[type] = decoder.decode
    try:
        value: T = decode_as(data)  # not typing.cast: a call, on every message
        return value
    except ValidationError as exc:
        if _UNKNOWN_FIELD not in str(exc):
            raise
    builtins = msgspec.json.decode(data)
    return typing.cast("T", _with_unknown_keys(builtins, type, tried_whole=False))


def convert(obj: Any, type: type[T] | Any) -> T:
    """Convert builtins (dicts, lists, scalars) into `type`, keeping unknown keys.

    Raises:
        ValidationError: the value does not fit `type`.
    """
    return typing.cast("T", _convert_open(obj, type))


def encode(obj: Any) -> bytes:
    """Encode a value as JSON, unknown keys kept by `decode` included."""
    if not _live_tokens:  # a set's truth, not a property: this is every message
        return _encoder.encode(obj)
    return _encoder.encode(_with_extras(obj))


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


class _Token:
    """Held by each object a conversion gave unknown keys, so that the token
    lives as long as any of them does."""

    __slots__ = ("__weakref__",)


class _LiveExtras:
    """Counts live tokens; at zero no object carries unknown keys and `encode`
    skips the search."""

    def __init__(self) -> None:
        self.refs: set[weakref.ref[_Token]] = set()

    @property
    def count(self) -> int:
        return len(self.refs)

    def token(self) -> _Token:
        token = _Token()
        self.refs.add(weakref.ref(token, self.refs.discard))
        return token


_live_extras = _LiveExtras()
_live_tokens = _live_extras.refs
_TOKEN_ATTR = "_mcp_token"


def _attach(obj: msgspec.Struct, properties: dict[str, Any]) -> None:
    if properties:
        state = vars(obj)
        state[_EXTRA_ATTR] = properties
        if _TOKEN_ATTR not in state:
            state[_TOKEN_ATTR] = _live_extras.token()


def _with_extras(obj: Any) -> Any:
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
                else _with_extras(item)
            )
            for item in items
        ]
        return expanded if any(map(operator.is_not, expanded, items)) else items
    if isinstance(obj, dict):
        mapping: dict[str, Any] = typing.cast("Any", obj)
        values = [_with_extras(value) for value in mapping.values()]
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
                else _with_extras(value)
            )
            if expanded is not value:
                changed[attr] = expanded
    state: dict[str, Any] = getattr(obj, "__dict__", _NO_STATE)
    extras: dict[str, Any] | None = state.get(_EXTRA_ATTR)
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
                attr for attr, wire in self.fields if _fitter(types[wire]) is not None
            )
        except Exception:  # hints that do not resolve: look into every field
            self.nested = struct.__struct_fields__


_layouts: dict[type[msgspec.Struct], _Layout] = {}


def _layout(struct: type[msgspec.Struct]) -> _Layout:
    layout = _layouts[struct] = _Layout(struct)
    return layout


# --- the slow path: values with unknown keys ----------------------------------


def _convert(obj: Any, tp: Any, *, allow_extra: bool) -> Any:
    """Convert `obj` to `tp`; unknown keys are kept when `allow_extra`."""
    try:
        return msgspec.convert(obj, _require_tag(tp), dec_hook=_dec_hook)
    except ValidationError as exc:
        if not allow_extra or _UNKNOWN_FIELD not in str(exc):
            raise
    except TypeError:
        pass  # a union holding a marker type: msgspec cannot take it whole
    return _convert_parts(obj, tp, allow_extra)


def _convert_open(obj: Any, tp: Any) -> Any:
    """`_convert(obj, tp, allow_extra=True)`, faster when there are unknown keys."""
    try:
        return msgspec.convert(obj, _require_tag(tp), dec_hook=_dec_hook)
    except ValidationError as exc:
        if _UNKNOWN_FIELD not in str(exc):
            raise
    except TypeError:
        pass  # a union holding a marker type: msgspec cannot take it whole
    return _with_unknown_keys(obj, tp, tried_whole=True)


def _with_unknown_keys(obj: Any, tp: Any, *, tried_whole: bool) -> Any:
    """Convert a value that has unknown keys somewhere, keeping them.

    First in one pass that sets the unknown keys aside and leaves the rest to
    msgspec, one call per object (`_fitter`). That pass only has to be right
    for values that fit; when anything does not, the value is converted again
    the careful way, piece by piece, whose errors say exactly where and why.
    `tried_whole`: msgspec has already refused `obj` as a whole.
    """
    if not _in_careful_pass.get():
        try:
            fit = _fitter(tp)
            fitted = obj if fit is None else fit(obj, _live_extras.token())
            return msgspec.convert(fitted, _require_tag(tp), dec_hook=_dec_hook)
        except (ValidationError, TypeError):
            pass
    # Values inside go the careful way at once: trying a fit again at each
    # structural union below would multiply the work with their depth.
    reset = _in_careful_pass.set(True)
    try:
        if tried_whole:
            return _convert_parts(obj, tp, True)
        return _convert(obj, tp, allow_extra=True)
    finally:
        _in_careful_pass.reset(reset)


_in_careful_pass = contextvars.ContextVar("_in_careful_pass", default=False)


_tag_guards: dict[Any, Any] = {}


def _require_tag(tp: Any) -> Any:
    """For a tagged Struct, a union that makes msgspec insist on the tag.

    msgspec checks a tag only when it chooses between union members; decoding a
    tagged Struct on its own accepts a message without the tag, which the schema
    (where the tag is a required const) rejects. A second member whose tag can
    never occur forces the check at no measurable cost.
    """
    try:
        guarded = _tag_guards.get(tp)
    except TypeError:  # an unhashable type expression: nothing to guard
        return tp
    if guarded is None:
        guarded = _tag_guards[tp] = _with_tag_guard(tp)
    return guarded


def _with_tag_guard(tp: Any) -> Any:
    config = getattr(tp, "__struct_config__", None)
    if not isinstance(tp, type) or config is None or config.tag_field is None:
        return tp
    guard = msgspec.defstruct(
        f"{tp.__name__}TagGuard",
        [("never", _Never)],
        tag_field=config.tag_field,
        tag="\x00 never a tag" if isinstance(config.tag, str) else -(2**62),
    )
    return typing.Union[tp, guard]  # noqa: UP007 - built at run time


class _Never:
    """The type of the guard's one required field: no JSON value decodes to it
    (`_dec_hook` refuses it), so no message ever comes out as a guard."""


def _convert_parts(obj: Any, tp: Any, allow_extra: bool) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        inner = _convert(obj, typing.get_args(tp)[0], allow_extra=allow_extra)
        return msgspec.convert(inner, tp, dec_hook=_dec_hook)
    if origin is typing.Union or origin is types.UnionType:
        return _convert_union(obj, typing.get_args(tp), allow_extra)
    if origin is list and isinstance(obj, list):
        (item_type,) = typing.get_args(tp)
        items: list[Any] | tuple[Any, ...] = typing.cast("Any", obj)
        return [
            _at(f"[{index}]", _convert, item, item_type, allow_extra)
            for index, item in enumerate(items)
        ]
    if origin is dict and isinstance(obj, dict):
        _, value_type = typing.get_args(tp)
        mapping: dict[str, Any] = typing.cast("Any", obj)
        return {
            key: _at("[...]", _convert, value, value_type, allow_extra)
            for key, value in mapping.items()
        }
    if isinstance(tp, type) and issubclass(tp, _Marker):
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
    return msgspec.convert(obj, target, dec_hook=_dec_hook)


def _convert_union(obj: Any, members: tuple[Any, ...], allow_extra: bool) -> Any:
    candidates = [m for m in members if m is not UnsetType]
    if obj is None and type(None) in candidates:
        return None
    errors: list[str] = []
    for member in candidates:
        try:
            return _convert(obj, member, allow_extra=allow_extra)
        except ValidationError as exc:
            errors.append(str(exc))
    raise ValidationError(_union_reason(errors))


_INSIDE = re.compile(r"(.*) \(at `\$([^`]*)` inside\)", re.DOTALL)
"""The note `_dec_hook` leaves for a location msgspec would otherwise lose."""

_EXPECTED = re.compile(r"Expected `([^`]+)`, got `([^`]+)`")


def _union_reason(errors: list[str]) -> str:
    """One reason for a value no member accepts: `Expected `a | b`, got `c``
    when every member refused its JSON type alone, else each reason in turn."""
    if not errors:
        return "no type accepts the value"
    kinds = [_EXPECTED.fullmatch(error) for error in errors]
    got = {match.group(2) for match in kinds if match}
    if all(kinds) and len(got) == 1:
        expected = dict.fromkeys(match.group(1) for match in kinds if match)
        return f"Expected `{' | '.join(expected)}`, got `{got.pop()}`"
    # Members of the right JSON kind failed deeper down: their reasons matter,
    # "expected an object, got an array" from the others does not.
    deeper = [error for error, kind in zip(errors, kinds, strict=True) if not kind]
    return " or ".join(dict.fromkeys(deeper or errors))


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
            if (fit := _fitter(field_type)) is not None
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
                value = _at(f".{key}", _convert, value, field_type, allow_extra)
            known[key] = value
        elif key == plan.tag_field:
            known[key] = value
        else:
            extras[key] = value
    if extras and not (allow_extra and plan.open):
        raise ValidationError(f"{_UNKNOWN_FIELD} `{next(iter(extras))}`")
    if plan.tag_field is not None and plan.tag_field not in obj:
        raise ValidationError(f"Object missing required field `{plan.tag_field}`")
    result = msgspec.convert(known, struct, dec_hook=_dec_hook)
    _attach(result, extras)
    return result


_Fit = typing.Callable[[Any, _Token], Any]
"""Converts the Structs in a value of some type, giving those with unknown keys
the token; leaves the rest as it is, for `msgspec.convert` to check after."""

_fitters: dict[Any, _Fit | None] = {}


def _fitter(tp: Any) -> _Fit | None:
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
        return _fitter(args[0])  # msgspec checks the constraints after
    if origin is typing.Union or origin is types.UnionType:
        return _union_fitter(tp, args)
    if origin is list:
        item = _fitter(args[0])
        return None if item is None else functools.partial(_fit_list, item)
    if origin is dict:
        value = _fitter(args[1])
        return None if value is None else functools.partial(_fit_dict, value)
    if origin is typing.Literal or tp is Any or tp is None:
        return None
    if origin is None and isinstance(tp, type):
        if issubclass(tp, _Marker):
            return functools.partial(_fit_carefully, tp)
        if issubclass(tp, msgspec.Struct):
            return functools.partial(_fit_struct, tp)
        return None
    if origin is not None and all(_fitter(arg) is None for arg in args):
        return None
    return functools.partial(_fit_carefully, tp)


def _union_fitter(tp: Any, args: tuple[Any, ...]) -> _Fit | None:
    """Only an object can have unknown keys, so a union's fit is that of its one
    member holding Structs, or of the tagged Struct a message's tag names.
    Other unions holding Structs are converted carefully."""
    members = [arg for arg in args if arg is not UnsetType and arg is not type(None)]
    fitters = [_fitter(member) for member in members]
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
        return issubclass(tp, _Marker)
    return any(map(_names_marker, typing.get_args(tp)))


def _fit_carefully(tp: Any, obj: Any, token: _Token) -> Any:
    return _convert(obj, tp, allow_extra=True)


def _fit_list(item: _Fit, obj: Any, token: _Token) -> Any:
    if not isinstance(obj, list):
        return obj
    items: list[Any] = typing.cast("Any", obj)
    return [item(value, token) for value in items]


def _fit_dict(value: _Fit, obj: Any, token: _Token) -> Any:
    if not isinstance(obj, dict):
        return obj
    mapping: dict[str, Any] = typing.cast("Any", obj)
    return {key: value(item, token) for key, item in mapping.items()}


def _fit_tagged(
    tag_field: str, by_tag: dict[Any, type[msgspec.Struct]], obj: Any, token: _Token
) -> Any:
    if not isinstance(obj, dict):
        return obj
    fields: dict[str, Any] = typing.cast("Any", obj)
    struct = by_tag.get(fields.get(tag_field))
    return fields if struct is None else _fit_struct(struct, fields, token)


def _fit_struct(struct: type[msgspec.Struct], obj: Any, token: _Token) -> Any:
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
        raise ValidationError(_UNKNOWN_FIELD)
    if plan.hooked:
        result = msgspec.convert(known, struct, dec_hook=_dec_hook)
    else:
        result = msgspec.convert(known, struct)  # any keyword costs ~0.3 µs
    if extras:
        state = vars(result)
        state[_EXTRA_ATTR] = extras
        state[_TOKEN_ATTR] = token
    return result


def _at(
    segment: str, func: Callable[..., Any], value: Any, tp: Any, allow_extra: bool
) -> Any:
    """Call `func`, and prefix the path of a validation error with `segment`."""
    try:
        return func(value, tp, allow_extra=allow_extra)
    except ValidationError as exc:
        message = str(exc)
        located = _LOCATION.fullmatch(message)
        if located:
            head, path = located.groups()
            raise ValidationError(f"{head} - at `${segment}{path}`") from None
        raise ValidationError(f"{message} - at `${segment}`") from None


_LOCATION = re.compile(r"(.*) - at `\$([^`]*)`", re.DOTALL)
"""msgspec's error text: the reason, then where, at the very end."""


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
    if isinstance(tp, type) and issubclass(tp, _Marker):
        return list(tp.classes())
    return [tp] if isinstance(tp, type) else [object]


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)

"""Convert values between protocol revisions, reporting what the target cannot express.

A handler written against one revision's types can answer a peer of another:
`convert_across` walks the value one adjacent revision at a time, using the
generated tables of properties each step drops, and rebuilds it as the target
revision's type of the same name; `fit` goes straight to a given type.

What the target does not define is handled as the schema allows. MCP objects
are open, so a property the target type does not define is kept as an unknown
key (`wire.extra`) and reported in `Converted.unknown`: receivers ignore keys
they do not know, and nothing is lost. (Dropping them would lose real data:
2026-07-28's `ToolOutputSchema` no longer names `type` because an output
schema may be any JSON Schema.) Only what the target cannot hold at all is dropped
and reported in `Converted.dropped`: properties of closed objects, list items
and map values no target type accepts (an `AudioContent` for 2024-11-05).

Most values fit their target as they are (a text `CallToolResult`, a list of
plain tools: adjacent revisions mostly agree). Those take a fast path: one
`msgspec.convert` of the value's builtins to the target type, which refuses any
key the target does not name (every generated object forbids unknown fields)
and any item no member of a union takes. When it succeeds nothing was set
aside, dropped or filled in, so the walk would have answered the same with
nothing to report; when it refuses, the walk goes one level down and tries
again on each part, so only the objects that hold something to report (a
tool's JSON Schema with keywords the type does not name) are walked.
"""

from __future__ import annotations

import importlib
import types
import typing
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from mcp_specgen_runtime.errors import McpError

from ._markers import Marker, dec_hook
from ._tag_guard import require_tag
from .wire import (
    OpenStruct,
    UnsetType,
    ValidationError,
    convert,
    marker_members,
    required_fields,
    struct_fields,
    to_builtins,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType

__all__ = ["ConversionError", "Converted", "Dropped", "convert_across", "fit"]

T = TypeVar("T")


class ConversionError(McpError):
    """The value cannot be expressed in the target revision at all."""


class Dropped(msgspec.Struct, frozen=True, kw_only=True):
    """One piece of data the target revision cannot express (dropped, or kept
    as an unknown key)."""

    path: str
    """Where it was, as a JSON path (`$.tools[0].icons`)."""
    reason: str
    """Why it was dropped, naming the revision step."""


class Converted(msgspec.Struct, Generic[T], frozen=True, kw_only=True):
    """The converted value, what was dropped on the way, and what was kept as
    unknown keys the target revision does not define."""

    value: T
    dropped: tuple[Dropped, ...]
    unknown: tuple[Dropped, ...] = ()


def convert_across(
    value: Any,
    target: str,
    *,
    versions: tuple[str, ...],
    modules: Mapping[str, str],
    dropped: Mapping[tuple[str, str], Mapping[str, frozenset[str]]],
    fill: Mapping[str, Any] | None = None,
) -> Converted[Any]:
    """Convert a generated value to the type of the same name in `target`.

    `fill` maps wire names to values for properties a target struct requires
    and the value lacks.

    Raises:
        ConversionError: the target has no type of that name, or the value
            lacks something the target requires.
    """
    source = _revision_of(value, modules)
    if target not in versions:
        raise ConversionError(f"unknown revision {target!r}")
    start, end = versions.index(source), versions.index(target)
    step = 1 if end >= start else -1
    report: list[Dropped] = []
    unknown: list[Dropped] = []
    for index in range(start, end, step):
        here, there = versions[index], versions[index + step]
        fitter = _Fitter(dropped.get((here, there), {}), f"{here} -> {there}", fill)
        value = _step(value, _module(modules[there]), fitter)
        report.extend(fitter.dropped)
        # Only what the final revision does not define is unknown to the peer.
        unknown = fitter.unknown
    return Converted(value=value, dropped=tuple(report), unknown=tuple(unknown))


def fit(
    value: Any,
    target_type: Any,
    *,
    label: str,
    fill: Mapping[str, Any] | None = None,
    list_unknown: bool = True,
    keep_unknown: bool = True,
) -> Converted[Any]:
    """Fit a value (generated types or builtins) to `target_type` in one step.

    Unlike `convert_across`, which walks every revision in between, this goes
    straight to the target, so a property both ends define survives even when
    a revision in between lacks it. `label` names the step in drop reasons.
    With `list_unknown` False, keys the target does not name are kept all the
    same but not listed in `Converted.unknown`, which lets a value that needs
    nothing dropped or filled in go through in one pass of the codec.
    Without `keep_unknown`, properties the target does not define are dropped
    even from open structs, all but `_meta` (reserved in every revision).

    Raises:
        ConversionError: the value lacks something the target requires.
    """
    builtins = to_builtins(value)
    if keep_unknown and not list_unknown:
        kept = _keeping_unknown(builtins, target_type)
        if kept is not _MISS:
            return Converted(value=kept, dropped=(), unknown=())
    fitter = _Fitter({}, label, fill, keep_unknown=keep_unknown)
    try:
        result = fitter.fit(builtins, target_type, "$")
    except _DoesNotFit as exc:
        name = getattr(target_type, "__name__", repr(target_type))
        raise ConversionError(f"{label}: {name} cannot be expressed: {exc}") from None
    return Converted(
        value=result, dropped=tuple(fitter.dropped), unknown=tuple(fitter.unknown)
    )


_MISS: Any = object()
"""What `_exactly` answers for a value that does not fit as it is."""


def _exactly(obj: Any, tp: Any) -> Any:
    """`obj` (builtins) as `tp` when it fits as it is, every key one `tp` names;
    else `_MISS`."""
    try:
        return msgspec.convert(obj, require_tag(tp), dec_hook=_exact_hook)
    except (ValidationError, TypeError):
        # TypeError: a union holding a marker type, which msgspec cannot take whole
        return _MISS


def _keeping_unknown(obj: Any, tp: Any) -> Any:
    """`obj` (builtins) as `tp`, keys `tp` does not name kept as unknown keys,
    when nothing needs dropping or filling in; else `_MISS`."""
    try:
        return convert(obj, tp)
    except (ValidationError, TypeError):
        return _MISS


def _exact_hook(tp: Any, obj: Any) -> Any:
    # A marker resolves its value with the unknown keys kept and unreported:
    # a value holding one takes the walk, which reports them.
    if isinstance(tp, type) and issubclass(tp, Marker):
        raise ValueError("a marker type takes the walk")
    return dec_hook(tp, obj)


def _revision_of(value: Any, modules: Mapping[str, str]) -> str:
    module = type(value).__module__
    for revision, package in modules.items():
        if module.startswith(package + "."):
            return revision
    raise ConversionError(f"{type(value).__name__} is not a generated MCP type")


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def _step(value: Any, target: ModuleType, fitter: _Fitter) -> Any:
    name = type(value).__name__
    target_type = getattr(target, name, None)
    if target_type is None:
        raise ConversionError(f"{fitter.step}: the target revision has no {name}")
    try:
        return fitter.fit(to_builtins(value), target_type, "$")
    except _DoesNotFit as exc:
        raise ConversionError(
            f"{fitter.step}: {name} cannot be expressed: {exc}"
        ) from None


class _DoesNotFit(Exception):
    """A value that cannot become the target type (its container may drop it)."""


class _Fitter:
    """Fits builtins to a target type, keeping or dropping what it cannot hold.

    Properties an open target struct does not define are kept as unknown keys;
    those of a closed one are dropped, and so are list items and map values
    that fit none of the target's item types. Both are reported; the reason
    cites the generated table when it lists the property.
    """

    def __init__(
        self,
        table: Mapping[str, frozenset[str]],
        step: str,
        fill: Mapping[str, Any] | None = None,
        *,
        keep_unknown: bool = True,
    ) -> None:
        self.table = table
        self.step = step
        self.fill = fill or {}
        self.keep_unknown = keep_unknown
        self.report: list[tuple[bool, Dropped]] = []
        """(dropped?, what) in the order met; False means kept as unknown."""

    @property
    def dropped(self) -> list[Dropped]:
        """What was dropped."""
        return [item for gone, item in self.report if gone]

    @property
    def unknown(self) -> list[Dropped]:
        """What was kept as unknown keys."""
        return [item for gone, item in self.report if not gone]

    def fit(self, obj: Any, tp: Any, path: str) -> Any:
        if isinstance(obj, (dict, list)):
            exact = _exactly(obj, tp)
            if exact is not _MISS:
                return exact
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            return self.validate(self.fit(obj, typing.get_args(tp)[0], path), tp)
        if origin is typing.Union or origin is types.UnionType:
            return self.union(obj, typing.get_args(tp), path)
        members = marker_members(tp)
        if members is not None:
            return self.union(obj, members, path)
        if origin is list and isinstance(obj, list):
            (item_type,) = typing.get_args(tp)
            items: list[Any] = typing.cast("Any", obj)
            return self.items(items, item_type, path)
        if origin is dict and isinstance(obj, dict):
            _, value_type = typing.get_args(tp)
            mapping: dict[str, Any] = typing.cast("Any", obj)
            return self.mapping(mapping, value_type, path)
        if (
            isinstance(tp, type)
            and issubclass(tp, msgspec.Struct)
            and isinstance(obj, dict)
        ):
            fields: dict[str, Any] = typing.cast("Any", obj)
            return self.struct(fields, tp, path)
        return self.validate(obj, tp)

    def struct(self, obj: dict[str, Any], tp: type[msgspec.Struct], path: str) -> Any:
        fields = struct_fields(tp)
        tag_field = tp.__struct_config__.tag_field
        listed = self.table.get(tp.__name__, frozenset())
        is_open = issubclass(tp, OpenStruct)
        kept: dict[str, Any] = {}
        notes: list[tuple[bool, Dropped]] = []
        for key, value in obj.items():
            if key == tag_field:
                kept[key] = value
            elif key in fields:
                kept[key] = self.fit(value, fields[key], f"{path}.{key}")
            else:
                table = " (generated table)" if key in listed else ""
                what = f"{tp.__name__} has no `{key}`{table}"
                keep_unknown = is_open and (self.keep_unknown or key == "_meta")
                if keep_unknown:
                    kept[key] = value
                    what += "; kept as an unknown key"
                notes.append((not keep_unknown, self.note(f"{path}.{key}", what)))
        for key in sorted((required_fields(tp) - kept.keys()) & self.fill.keys()):
            kept[key] = self.fit(self.fill[key], fields[key], f"{path}.{key}")
        result = self.validate(kept, tp)
        self.report.extend(notes)
        return result

    def items(self, obj: list[Any], item_type: Any, path: str) -> list[Any]:
        kept: list[Any] = []
        for index, item in enumerate(obj):
            where = f"{path}[{index}]"
            mark = len(self.report)
            try:
                kept.append(self.fit(item, item_type, where))
            except _DoesNotFit as exc:
                del self.report[mark:]
                self.report.append((True, self.note(where, str(exc))))
        return kept

    def mapping(
        self, obj: dict[str, Any], value_type: Any, path: str
    ) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for key, value in obj.items():
            where = f"{path}.{key}"
            mark = len(self.report)
            try:
                kept[key] = self.fit(value, value_type, where)
            except _DoesNotFit as exc:
                del self.report[mark:]
                self.report.append((True, self.note(where, str(exc))))
        return kept

    def union(self, obj: Any, members: tuple[Any, ...], path: str) -> Any:
        reasons: list[str] = []
        candidates = [m for m in members if m is not UnsetType]
        # Prefer a member that takes the value whole, then one that drops least,
        # then one that leaves the fewest keys unknown.
        best: tuple[tuple[int, int], Any, list[tuple[bool, Dropped]]] | None = None
        for member in candidates:
            mark = len(self.report)
            try:
                value = self.fit(obj, member, path)
            except _DoesNotFit as exc:
                reasons.append(str(exc))
                continue
            finally:
                trial = self.report[mark:]
                del self.report[mark:]
            drops = sum(1 for gone, _ in trial if gone)
            cost = (drops, len(trial) - drops)
            if best is None or cost < best[0]:
                best = (cost, value, trial)
            if not trial:
                break
        if best is None:
            raise _DoesNotFit("; ".join(dict.fromkeys(reasons)) or "no type fits")
        self.report.extend(best[2])
        return best[1]

    def validate(self, obj: Any, tp: Any) -> Any:
        try:
            return convert(obj, tp)
        except ValidationError as exc:
            raise _DoesNotFit(str(exc)) from None

    def note(self, path: str, what: str) -> Dropped:
        return Dropped(path=path, reason=f"{self.step}: {what}")

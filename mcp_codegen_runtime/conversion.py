"""Convert values between protocol revisions, reporting what the target cannot express.

A handler written against one revision's types can answer a peer of another:
`convert_across` walks the value one adjacent revision at a time, using the
generated tables of properties each step drops, and rebuilds it as the target
revision's type of the same name. Unknown keys travel along untouched; a list
item whose type the target lacks (an `AudioContent` for 2024-11-05) is dropped;
everything dropped is reported with its JSON path.
"""

from __future__ import annotations

import importlib
import types
import typing
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from .errors import McpError
from .wire import (
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
    """One piece of data the target revision cannot express."""

    path: str
    """Where it was, as a JSON path (`$.tools[0].icons`)."""
    reason: str
    """Why it was dropped, naming the revision step."""


class Converted(msgspec.Struct, Generic[T], frozen=True, kw_only=True):
    """The converted value and everything dropped on the way."""

    value: T
    dropped: tuple[Dropped, ...]


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
    for index in range(start, end, step):
        here, there = versions[index], versions[index + step]
        value = _step(
            value,
            _module(modules[there]),
            dropped.get((here, there), {}),
            f"{here} -> {there}",
            report,
            fill or {},
        )
    return Converted(value=value, dropped=tuple(report))


def fit(
    value: Any,
    target_type: Any,
    *,
    label: str,
    fill: Mapping[str, Any] | None = None,
) -> Converted[Any]:
    """Fit a value (generated types or builtins) to `target_type` in one step.

    Unlike `convert_across`, which walks every revision in between, this goes
    straight to the target, so a property both ends define survives even when
    a revision in between lacks it. `label` names the step in drop reasons.

    Raises:
        ConversionError: the value lacks something the target requires.
    """
    fitter = _Fitter({}, label, fill)
    try:
        result = fitter.fit(to_builtins(value), target_type, "$")
    except _DoesNotFit as exc:
        name = getattr(target_type, "__name__", repr(target_type))
        raise ConversionError(f"{label}: {name} cannot be expressed: {exc}") from None
    return Converted(value=result, dropped=tuple(fitter.report))


def _revision_of(value: Any, modules: Mapping[str, str]) -> str:
    module = type(value).__module__
    for revision, package in modules.items():
        if module.startswith(package + "."):
            return revision
    raise ConversionError(f"{type(value).__name__} is not a generated MCP type")


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def _step(
    value: Any,
    target: ModuleType,
    dropped: Mapping[str, frozenset[str]],
    step: str,
    report: list[Dropped],
    fill: Mapping[str, Any],
) -> Any:
    name = type(value).__name__
    target_type = getattr(target, name, None)
    if target_type is None:
        raise ConversionError(f"{step}: the target revision has no {name}")
    fitter = _Fitter(dropped, step, fill)
    try:
        result = fitter.fit(to_builtins(value), target_type, "$")
    except _DoesNotFit as exc:
        raise ConversionError(f"{step}: {name} cannot be expressed: {exc}") from None
    report.extend(fitter.report)
    return result


class _DoesNotFit(Exception):
    """A value that cannot become the target type (its container may drop it)."""


class _Fitter:
    """Fits builtins to a target type, dropping what the type cannot hold.

    Properties the target struct does not define are dropped; so are list items
    and map values that fit none of the target's item types. Everything dropped
    is reported; the reason cites the generated table when it lists the property.
    """

    def __init__(
        self,
        dropped: Mapping[str, frozenset[str]],
        step: str,
        fill: Mapping[str, Any] | None = None,
    ) -> None:
        self.dropped = dropped
        self.step = step
        self.fill = fill or {}
        self.report: list[Dropped] = []

    def fit(self, obj: Any, tp: Any, path: str) -> Any:
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
        listed = self.dropped.get(tp.__name__, frozenset())
        kept: dict[str, Any] = {}
        dropped: list[Dropped] = []
        for key, value in obj.items():
            if key == tag_field:
                kept[key] = value
            elif key in fields:
                kept[key] = self.fit(value, fields[key], f"{path}.{key}")
            else:
                table = " (generated table)" if key in listed else ""
                dropped.append(
                    self.dropped_item(
                        f"{path}.{key}", f"{tp.__name__} has no `{key}`{table}"
                    )
                )
        for key in sorted((required_fields(tp) - kept.keys()) & self.fill.keys()):
            kept[key] = self.fit(self.fill[key], fields[key], f"{path}.{key}")
        result = self.validate(kept, tp)
        self.report.extend(dropped)
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
                self.report.append(self.dropped_item(where, str(exc)))
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
                self.report.append(self.dropped_item(where, str(exc)))
        return kept

    def union(self, obj: Any, members: tuple[Any, ...], path: str) -> Any:
        reasons: list[str] = []
        candidates = [m for m in members if m is not UnsetType]
        # Prefer a member that takes the value whole, then one that drops least.
        best: tuple[int, Any, list[Dropped]] | None = None
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
            if best is None or len(trial) < best[0]:
                best = (len(trial), value, trial)
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

    def dropped_item(self, path: str, what: str) -> Dropped:
        return Dropped(path=path, reason=f"{self.step}: {what}")

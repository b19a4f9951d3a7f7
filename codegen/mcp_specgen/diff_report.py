"""Reports of a `RevisionDiff`: terminal text, markdown and JSON.

Every emitter returns the whole report as text ending in a newline. `FORMATS`
maps the names the command line accepts to the emitters.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

import msgspec

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from .revdiff import (
        MethodChange,
        MethodSig,
        RevisionDiff,
        TypeChange,
        TypeEntry,
    )


def summary(diff: RevisionDiff) -> str:
    """One line of counts: methods and types added, removed, changed, unchanged."""
    return f"{diff.a} -> {diff.b}: {_counts(diff)}"


def _counts(diff: RevisionDiff) -> str:
    counts = diff.counts
    return "; ".join(
        f"{counts[f'{what}_added']} {what} added, "
        f"{counts[f'{what}_removed']} removed, "
        f"{counts[f'{what}_changed']} changed, "
        f"{counts[f'{what}_unchanged']} unchanged"
        for what in ("methods", "types")
    )


def to_text(diff: RevisionDiff) -> str:
    """A terminal report: the summary, then aligned sections of what changed."""
    lines = [summary(diff)]
    if diff.empty:
        lines.append("no differences")
    for title, methods in _method_sections(diff):
        lines += ["", f"{title} ({len(methods)})"]
        header = ("method", "kind", "direction", "params", "result")
        lines += _aligned([header] + [_method_cells(m) for m in methods], "  ")
    if diff.method_changes:
        lines += ["", f"Methods changed ({len(diff.method_changes)})"]
        rows = [
            (change.name, aspect, f"{a} -> {b}")
            for change in diff.method_changes
            for aspect, a, b in _method_aspects(change)
        ]
        lines += _aligned([("method", "what", "change"), *rows], "  ")
    for title, entries in _type_sections(diff):
        lines += ["", f"{title} ({len(entries)})"]
        lines += _aligned(
            [("type", "kind"), *[(entry.name, entry.kind) for entry in entries]], "  "
        )
    if diff.type_changes:
        lines += ["", f"Changed types ({len(diff.type_changes)})"]
        for change in diff.type_changes:
            lines.append(f"  {change.name} ({_kinds(change)})")
            lines += [f"    {_text_row(row)}" for row in _type_rows(change)]
    return "\n".join(lines) + "\n"


def to_markdown(diff: RevisionDiff) -> str:
    """A markdown report: the summary, then one section or table per kind of change."""
    lines = [f"**{diff.a} → {diff.b}**: {_counts(diff)}."]
    if diff.empty:
        lines += ["", "No differences."]
    for title, methods in _method_sections(diff):
        lines += ["", f"## {title}", ""]
        header = ("Method", "Kind", "Direction", "Params", "Result")
        lines += _table(header, [_method_cells(m, markdown=True) for m in methods])
    if diff.method_changes:
        lines += ["", "## Methods changed", ""]
        rows = [
            (f"`{change.name}`", aspect, _code(a), _code(b))
            for change in diff.method_changes
            for aspect, a, b in _method_aspects(change)
        ]
        lines += _table(("Method", "What", diff.a, diff.b), rows)
    for title, entries in _type_sections(diff):
        lines += ["", f"## {title}", ""]
        lines += _table(
            ("Type", "Kind"), [(f"`{entry.name}`", entry.kind) for entry in entries]
        )
    if diff.type_changes:
        lines += ["", "## Changed types"]
        for change in diff.type_changes:
            lines += ["", f"### `{change.name}` ({_kinds(change, ' → ')})", ""]
            rows = [
                (
                    row.marker,
                    f"`{row.subject}`" if row.field else row.subject,
                    _code(row.a),
                    _code(row.b),
                )
                for row in _type_rows(change)
            ]
            lines += _table(("", "Field or part", diff.a, diff.b), rows)
    return "\n".join(lines) + "\n"


def to_json(diff: RevisionDiff) -> str:
    """The diff as JSON: the `RevisionDiff` fields plus `summary` (its counts).

    Keys are sorted and indented by 2, so the output is stable.
    """
    payload = {"summary": diff.counts, **msgspec.to_builtins(diff)}
    return json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


FORMATS: dict[str, Callable[[RevisionDiff], str]] = {
    "text": to_text,
    "markdown": to_markdown,
    "json": to_json,
}
"""Report emitters by format name."""


def _method_sections(
    diff: RevisionDiff,
) -> Iterator[tuple[str, tuple[MethodSig, ...]]]:
    for title, methods in (
        ("Methods added", diff.methods_added),
        ("Methods removed", diff.methods_removed),
    ):
        if methods:
            yield title, methods


def _type_sections(
    diff: RevisionDiff,
) -> Iterator[tuple[str, tuple[TypeEntry, ...]]]:
    for title, entries in (
        ("Types added", diff.types_added),
        ("Types removed", diff.types_removed),
    ):
        if entries:
            yield title, entries


def _method_cells(method: MethodSig, *, markdown: bool = False) -> tuple[str, ...]:
    code = _code if markdown else str
    return (
        code(method.name),
        method.message,
        method.direction,
        _params(method, markdown=markdown),
        code(method.result_type or "-"),
    )


def _params(method: MethodSig, *, markdown: bool = False) -> str:
    if method.params_type is None:
        return "-"
    name = _code(method.params_type) if markdown else method.params_type
    return f"{name} ({_required(method.params_required)})"


def _required(required: bool) -> str:
    return "required" if required else "optional"


def _method_aspects(change: MethodChange) -> list[tuple[str, str, str]]:
    """(aspect, value in A, value in B) for each part of the method that changed."""
    a, b = change.a, change.b
    aspects = [
        ("direction", a.direction, b.direction, change.direction_changed),
        ("kind", a.message, b.message, change.message_changed),
        ("message type", a.message_type, b.message_type, change.message_type_changed),
        ("params", _params(a), _params(b), change.params_changed),
        ("result", a.result_type or "-", b.result_type or "-", change.result_changed),
    ]
    return [(aspect, old, new) for aspect, old, new, changed in aspects if changed]


def _kinds(change: TypeChange, arrow: str = " -> ") -> str:
    if change.kind_changed:
        return f"{change.kind_a}{arrow}{change.kind_b}"
    return change.kind_a


class _Row(NamedTuple):
    """One line of a changed type."""

    marker: str
    """`+` (only in B), `-` (only in A) or `~` (changed)."""
    subject: str
    """The field's wire name, `member`, `kind`, `target` or `unknown keys`."""
    a: str
    b: str
    field: bool


def _type_rows(change: TypeChange) -> list[_Row]:
    """What changed in one type, one row per attribute, member or field."""
    rows: list[_Row] = []
    if change.kind_changed:
        shape_a = f"{change.kind_a} {change.shape_a}"
        rows.append(
            _Row("~", "kind", shape_a, f"{change.kind_b} {change.shape_b}", False)
        )
    if change.open_changed:
        open_a, open_b = _openness(change.open_a), _openness(change.open_b)
        rows.append(_Row("~", "unknown keys", open_a, open_b, False))
    if change.target_changed:
        rows.append(
            _Row("~", "target", change.target_a or "", change.target_b or "", False)
        )
    rows += [_Row("+", "member", "", m, False) for m in change.members_gained]
    rows += [_Row("-", "member", m, "", False) for m in change.members_lost]
    rows += [
        _Row("+", f.wire_name, "", f.describe(), True) for f in change.fields_added
    ]
    rows += [
        _Row("-", f.wire_name, f.describe(), "", True) for f in change.fields_removed
    ]
    rows += [
        _Row("~", c.wire_name, c.a.describe(), c.b.describe(), True)
        for c in change.fields_changed
    ]
    return rows


def _openness(open_: bool | None) -> str:
    return "kept (open)" if open_ else "rejected (closed)"


def _text_row(row: _Row) -> str:
    if row.marker == "~":
        return f"~ {row.subject}: {row.a} -> {row.b}"
    if not row.field:
        return f"{row.marker} {row.a or row.b}"
    return f"+ {row.subject}: {row.b}" if row.marker == "+" else f"- {row.subject}"


def _aligned(rows: Sequence[Sequence[str]], indent: str) -> list[str]:
    """Rows as lines whose columns line up, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        (
            indent
            + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub markdown table."""
    lines = [_table_line(header), _table_line(tuple("---" for _ in header))]
    lines += [_table_line(row) for row in rows]
    return lines


def _table_line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _code(value: str) -> str:
    return f"`{value}`" if value and value != "-" else value

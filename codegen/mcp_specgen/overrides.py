"""Overrides: data patches applied to the schema before the IR is built.

Each `schema/overrides/*.toml` file (one per rule or topic) holds `[[patch]]`
entries, each with a JSON `pointer` into the schema document, the `expected`
value found there today (leave it out to add a member that must not exist
yet), the new `value`, a `reason`, and the revisions it applies to: either
`since = "REV"` (that revision and every later one in manifest order, so a new
revision inherits the rule), optionally ended by `until = "REV"`, or an
explicit `revisions = [...]` list.

A patch whose `expected` value no longer matches is an error, so a schema
change never silently voids an override; and a patch that stops one revision
too early (its predecessor had it, and the schema still holds the value it
expects) is an error too, so a new revision never silently loses a rule.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import OverrideError
from .jsondata import is_array, is_object
from .manifest import load_manifest

if TYPE_CHECKING:
    from pathlib import Path

OVERRIDES_DIR = "overrides"


_ABSENT: Any = object()


@dataclass(frozen=True)
class Patch:
    """Set `pointer` to `value`; it must hold `expected` now (or be absent).

    `since`/`until` (inclusive) or `revisions` say where it applies; `source`
    is the file it was read from, for error messages.
    """

    pointer: str
    expected: Any
    value: Any
    reason: str
    since: str = ""
    until: str = ""
    revisions: tuple[str, ...] = ()
    source: str = ""

    def applies_to(self, revision: str, order: tuple[str, ...]) -> bool:
        """Whether the patch applies to `revision`, given the manifest's order."""
        if self.revisions:
            return revision in self.revisions
        if revision not in order:
            return False
        index = order.index(revision)
        if index < order.index(self.since):
            return False
        return not self.until or index <= order.index(self.until)

    @property
    def label(self) -> str:
        """How errors name the patch: its file and reason."""
        return f"{self.source}: {self.reason!r}" if self.source else repr(self.reason)


def load_rules(schema_dir: Path, order: tuple[str, ...]) -> tuple[Patch, ...]:
    """Read every patch of `schema_dir/overrides/*.toml`, files in name order.

    Raises:
        OverrideError: a file is not valid TOML, a patch lacks a key, or its
            `since`/`until`/`revisions` name no revision of `order`.
    """
    folder = schema_dir / OVERRIDES_DIR
    if not folder.is_dir():
        return ()
    patches: list[Patch] = []
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            entries = data.get("patch", [])
            patches += [_patch(entry, path.name, order) for entry in entries]
        except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
            raise OverrideError(f"{path}: {exc}") from exc
    return tuple(patches)


def _patch(entry: dict[str, Any], source: str, order: tuple[str, ...]) -> Patch:
    patch = Patch(
        entry["pointer"],
        entry.get("expected", _ABSENT),
        entry["value"],
        entry["reason"],
        since=entry.get("since", ""),
        until=entry.get("until", ""),
        revisions=tuple(entry.get("revisions", ())),
        source=source,
    )
    if bool(patch.since) == bool(patch.revisions):
        raise OverrideError(
            f"{source}: the patch needs exactly one of `since` or `revisions`",
            pointer=patch.pointer,
        )
    if patch.until and not patch.since:
        raise OverrideError(
            f"{source}: `until` goes with `since`", pointer=patch.pointer
        )
    named = (patch.since, patch.until, *patch.revisions)
    unknown = [name for name in named if name and name not in order]
    if unknown:
        raise OverrideError(
            f"{source}: the patch names {', '.join(map(repr, unknown))}, which the "
            f"manifest does not pin (it pins {', '.join(order)})",
            pointer=patch.pointer,
        )
    if patch.until and order.index(patch.until) < order.index(patch.since):
        raise OverrideError(
            f"{source}: `until` {patch.until!r} comes before `since` {patch.since!r}",
            pointer=patch.pointer,
        )
    return patch


def load_patches(schema_dir: Path, revision: str) -> tuple[Patch, ...]:
    """The patches of `revision`, in file order (the manifest gives the order).

    Raises:
        OverrideError: see `load_rules`.
        SchemaLoadError: the manifest cannot be read.
    """
    order = load_manifest(schema_dir).names
    rules = load_rules(schema_dir, order)
    return tuple(patch for patch in rules if patch.applies_to(revision, order))


def check_inherited(
    document: Any, rules: tuple[Patch, ...], revision: str, order: tuple[str, ...]
) -> None:
    """Refuse a revision that lost a rule its predecessor had and still needs.

    A patch that applies to the previous revision, not to `revision`, and is
    not ended on purpose (`until`) is still needed when `revision`'s schema
    holds the value it expects at its pointer.

    Raises:
        OverrideError: naming the patch, the revision and the pointer.
    """
    index = order.index(revision) if revision in order else 0
    if index == 0:
        return
    before = order[index - 1]
    for patch in rules:
        if patch.until or not patch.applies_to(before, order):
            continue
        if patch.applies_to(revision, order):
            continue
        current = _current(document, patch.pointer)
        if current is _UNRESOLVED or not _matches(current, patch.expected):
            continue
        raise OverrideError(
            f"the override {patch.label} applies to {before} but not to {revision}, "
            f"whose schema still holds {_show(patch.expected)} there; add {revision} "
            f"to its `revisions` (or write `since = {patch.revisions[0]!r}` if "
            f"every later revision needs it), or end it with `until = {before!r}`",
            revision=revision,
            pointer=patch.pointer,
        )


def apply_patches(document: Any, patches: tuple[Patch, ...], revision: str) -> Any:
    """Return a copy of `document` with every patch applied.

    Raises:
        OverrideError: a pointer does not resolve or its value is not `expected`.
    """
    result = copy.deepcopy(document)
    for patch in patches:
        parent, key = _resolve_parent(result, patch.pointer, revision)
        present = key < len(parent) if isinstance(parent, list) else key in parent
        current = parent[key] if present else _ABSENT
        if not _matches(current, patch.expected):
            where = f" ({patch.label})" if patch.source else ""
            raise OverrideError(
                f"override{where} expects {_show(patch.expected)} but the schema has "
                f"{_show(current)}; update or drop the override",
                revision=revision,
                pointer=patch.pointer,
            )
        parent[key] = copy.deepcopy(patch.value)
    return result


_UNRESOLVED: Any = object()


def _matches(current: Any, expected: Any) -> bool:
    return current is expected or (
        current is not _ABSENT and expected is not _ABSENT and current == expected
    )


def _show(value: Any) -> str:
    return "nothing" if value is _ABSENT else repr(value)


def _current(document: Any, pointer: str) -> Any:
    """The value at `pointer` (`_ABSENT` if only the last step is missing)."""
    try:
        parent, key = _resolve_parent(document, pointer, "")
    except OverrideError:
        return _UNRESOLVED
    present = key < len(parent) if isinstance(parent, list) else key in parent
    return parent[key] if present else _ABSENT


def _resolve_parent(
    document: Any, pointer: str, revision: str
) -> tuple[dict[str, Any] | list[Any], Any]:
    """The object or array `pointer` ends in, and the key (str) or index (int)."""
    if not pointer.startswith("/"):
        raise OverrideError(
            "a pointer must start with '/'", revision=revision, pointer=pointer
        )
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]
    node = document
    try:
        for part in parts[:-1]:
            node = node[int(part)] if is_array(node) else node[part]
        if not (is_object(node) or is_array(node)):
            raise TypeError(node)
        last = int(parts[-1]) if is_array(node) else parts[-1]
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise OverrideError(
            "the pointer does not resolve in the schema",
            revision=revision,
            pointer=pointer,
        ) from exc
    return node, last

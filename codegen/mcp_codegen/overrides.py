"""Per-revision overrides: data patches applied to the schema before the IR is built.

`schema/overrides/<rev>.toml` holds `[[patch]]` entries, each with a JSON
`pointer` into the schema document, the `expected` value found there today
(leave it out to add a member that must not exist yet), the new `value`, and
a `reason`. A patch whose `expected` value no longer matches is an error, so
a schema change never silently voids an override.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import OverrideError
from .jsondata import is_array, is_object

if TYPE_CHECKING:
    from pathlib import Path

OVERRIDES_DIR = "overrides"


_ABSENT: Any = object()


@dataclass(frozen=True)
class Patch:
    """Set `pointer` to `value`; it must hold `expected` now (or be absent)."""

    pointer: str
    expected: Any
    value: Any
    reason: str


def load_patches(schema_dir: Path, revision: str) -> tuple[Patch, ...]:
    """Read the patches of `revision` (none when it has no overrides file).

    Raises:
        OverrideError: the file is not valid TOML or a patch lacks a key.
    """
    path = schema_dir / OVERRIDES_DIR / f"{revision}.toml"
    if not path.exists():
        return ()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return tuple(
            Patch(
                entry["pointer"],
                entry.get("expected", _ABSENT),
                entry["value"],
                entry["reason"],
            )
            for entry in data.get("patch", [])
        )
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise OverrideError(f"{path}: {exc}", revision=revision) from exc


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
        if current is not patch.expected and current != patch.expected:
            wanted = "nothing" if patch.expected is _ABSENT else repr(patch.expected)
            found = "nothing" if current is _ABSENT else repr(current)
            raise OverrideError(
                f"override expects {wanted} but the schema has {found}; "
                "update or drop the override",
                revision=revision,
                pointer=patch.pointer,
            )
        parent[key] = copy.deepcopy(patch.value)
    return result


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

"""Per-revision overrides: data patches applied to the schema before the IR is built.

`schema/overrides/<rev>.toml` holds `[[patch]]` entries, each with a JSON
`pointer` into the schema document, the `expected` value found there today,
the new `value`, and a `reason` (with an upstream link where there is one).
A patch whose `expected` value no longer matches is an error, so a schema
change never silently voids an override.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import OverrideError

OVERRIDES_DIR = "overrides"


@dataclass(frozen=True)
class Patch:
    """Replace the value at `pointer` (which must equal `expected`) by `value`."""

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
            Patch(entry["pointer"], entry["expected"], entry["value"], entry["reason"])
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
        current = parent[key]
        if current != patch.expected:
            raise OverrideError(
                f"override expects {patch.expected!r} but the schema has {current!r}; "
                "update or drop the override",
                revision=revision,
                pointer=patch.pointer,
            )
        parent[key] = copy.deepcopy(patch.value)
    return result


def _resolve_parent(document: Any, pointer: str, revision: str) -> tuple[Any, Any]:
    if not pointer.startswith("/"):
        raise OverrideError(
            "a pointer must start with '/'", revision=revision, pointer=pointer
        )
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]
    node = document
    try:
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last: Any = int(parts[-1]) if isinstance(node, list) else parts[-1]
        node[last]  # noqa: B018 - the lookup checks that the target exists
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise OverrideError(
            "the pointer does not resolve in the schema",
            revision=revision,
            pointer=pointer,
        ) from exc
    return node, last

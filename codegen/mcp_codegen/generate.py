"""Write the generated package, or check that what is on disk is current."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .emit import PACKAGE, render_package
from .pipeline import load_revision

if TYPE_CHECKING:
    from pathlib import Path

    from .manifest import Manifest


@dataclass(frozen=True)
class Difference:
    """One generated file that is stale, missing or orphaned."""

    path: str
    status: str  # "stale", "missing" or "orphaned"
    diff: str


def latest_dated(manifest: Manifest) -> str:
    """The newest revision whose name is a date (not `draft`)."""
    dated = [name for name in manifest.names if name[:1].isdigit()]
    return dated[-1]


def render_all(manifest: Manifest, schema_dir: Path) -> dict[str, str]:
    """Every generated file for every pinned revision, in memory.

    Raises:
        CodegenError: a revision cannot be loaded or built.
    """
    revisions = tuple(load_revision(schema_dir, pin) for pin in manifest.revisions)
    return render_package(revisions, latest_dated(manifest))


def write(files: dict[str, str], out_dir: Path) -> list[str]:
    """Write `files` under `out_dir`, delete orphaned ones; return what changed."""
    changed: list[str] = []
    for difference in compare(files, out_dir):
        target = out_dir / difference.path
        if difference.status == "orphaned":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[difference.path], encoding="utf-8")
        changed.append(difference.path)
    return changed


def compare(files: dict[str, str], out_dir: Path) -> list[Difference]:
    """What differs between `files` and the package on disk, sorted by path."""
    differences: list[Difference] = []
    on_disk = {
        str(path.relative_to(out_dir))
        for path in (out_dir / PACKAGE).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    for rel in sorted(set(files) | on_disk):
        target = out_dir / rel
        if rel not in files:
            differences.append(
                Difference(rel, "orphaned", f"{rel} is not generated any more\n")
            )
            continue
        if rel not in on_disk:
            differences.append(Difference(rel, "missing", f"{rel} is missing\n"))
            continue
        current = target.read_text(encoding="utf-8")
        if current != files[rel]:
            diff = "".join(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    files[rel].splitlines(keepends=True),
                    fromfile=f"{rel} (on disk)",
                    tofile=f"{rel} (generated)",
                )
            )
            differences.append(Difference(rel, "stale", diff))
    return differences

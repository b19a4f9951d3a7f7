"""Write the generated package, or check that what is on disk is current."""

from __future__ import annotations

import difflib
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .emit import (
    EXTENSIONS_PACKAGE,
    PACKAGE,
    render_extension,
    render_extensions_root,
    render_package,
    render_revision,
)
from .pipeline import load_extension, load_revision

if TYPE_CHECKING:
    from pathlib import Path

    from . import ir
    from .manifest import Manifest, PinnedRevision


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
    pins = manifest.revisions
    workers = min(len(pins), os.cpu_count() or 1)
    if workers > 1:
        # black dominates the run time; each revision formats in its own process.
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_build_and_render, pins, [schema_dir] * len(pins)))
    else:
        results = [_build_and_render(pin, schema_dir) for pin in pins]
    revisions = tuple(rev for rev, _ in results)
    rendered = {path: text for _, files in results for path, text in files.items()}
    files = render_package(revisions, latest_dated(manifest), rendered)
    extensions = tuple(load_extension(schema_dir, pin) for pin in manifest.extensions)
    for ext in extensions:
        files.update(render_extension(ext))
    files[f"{EXTENSIONS_PACKAGE}/__init__.py"] = render_extensions_root(extensions)
    return files


def _build_and_render(
    pin: PinnedRevision, schema_dir: Path
) -> tuple[ir.Revision, dict[str, str]]:
    rev = load_revision(schema_dir, pin)
    return rev, render_revision(rev)


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

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
from .errors import CodegenError
from .importnames import is_identifier, shadows
from .ownership import claim, files_under, has_marker, may_replace
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
    return latest_of(manifest.names)


def latest_of(names: tuple[str, ...]) -> str:
    """The newest dated name of `names` (protocol order), else the newest one."""
    dated = [name for name in names if name[:1].isdigit()]
    return (dated or list(names))[-1]


def render_all(
    manifest: Manifest,
    schema_dir: Path,
    *,
    package: str = PACKAGE,
    revisions: tuple[str, ...] = (),
) -> dict[str, str]:
    """Every generated file for the pinned revisions, in memory.

    `revisions` picks some (default: all); an extension is generated when the
    revision it was written against is. `package` is the import name: the
    files' paths start with it and the package's own imports use it.

    Raises:
        CodegenError: a revision cannot be loaded or built, or is not pinned.
    """
    chosen = set(manifest.select(revisions))
    pins = tuple(pin for pin in manifest.revisions if pin in chosen)  # protocol order
    check_package_name(package, allow=(PACKAGE,))
    workers = min(len(pins), os.cpu_count() or 1)
    args = (pins, [schema_dir] * len(pins), [manifest] * len(pins))
    if workers > 1:
        # black dominates the run time; each revision formats in its own process.
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_build_and_render, *args))
    else:
        results = list(map(_build_and_render, *args))
    built = tuple(rev for rev, _ in results)
    rendered = {path: text for _, files in results for path, text in files.items()}
    names = tuple(pin.name for pin in pins)
    files = render_package(built, latest_of(names), rendered, package)
    extensions = tuple(
        load_extension(manifest.folder, pin)
        for pin in manifest.extensions
        if pin.version in names
    )
    for ext in extensions:
        files.update(render_extension(ext))
    files[f"{EXTENSIONS_PACKAGE}/__init__.py"] = render_extensions_root(
        extensions, package
    )
    return {package + path.removeprefix(PACKAGE): text for path, text in files.items()}


def check_package_name(package: str, allow: tuple[str, ...] = ()) -> None:
    """Refuse an import name that is not one, or that would shadow a
    standard-library module or one of mcp-specgen's packages (`allow` names
    exceptions: `generate` writes the runtime's own `mcp_specgen_types`).

    Raises:
        CodegenError: naming the problem.
    """
    if not is_identifier(package):
        raise CodegenError(f"--package {package!r} is not a Python identifier")
    if shadows(package) and package not in allow:
        raise CodegenError(
            f"--package {package!r} would shadow the module of that name "
            "(standard library or mcp-specgen's own)"
        )


def _build_and_render(
    pin: PinnedRevision, schema_dir: Path, manifest: Manifest
) -> tuple[ir.Revision, dict[str, str]]:
    rev = load_revision(schema_dir, pin, manifest)
    return rev, render_revision(rev)


def write(files: dict[str, str], out_dir: Path, package: str = PACKAGE) -> list[str]:
    """Write `files` under `out_dir`, delete orphaned generated ones; return
    what changed.

    Only files carrying the generated header are replaced or deleted; files
    of anyone else beside them are left alone.

    Raises:
        CodegenError: `out_dir/package` holds files but none of ours, or a
            file to write exists and is not ours (nothing is written then).
    """
    claim(out_dir / package)
    differences = compare(files, out_dir, package)
    for difference in differences:
        if difference.status == "stale":
            may_replace(out_dir / difference.path)
    changed: list[str] = []
    for difference in differences:
        target = out_dir / difference.path
        if difference.status == "orphaned":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[difference.path], encoding="utf-8")
        changed.append(difference.path)
    return changed


def compare(
    files: dict[str, str], out_dir: Path, package: str = PACKAGE
) -> list[Difference]:
    """What differs between `files` and package `package` on disk, sorted by
    path (a file nobody generated is not ours to report)."""
    differences: list[Difference] = []
    on_disk = {
        path.relative_to(out_dir).as_posix() for path in files_under(out_dir / package)
    }
    for rel in sorted(set(files) | on_disk):
        target = out_dir / rel
        if rel not in files:
            if not has_marker(target):
                continue
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

"""`mcp-codegen client`: inspect, render, then write or check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from ..errors import CodegenError
from ..ownership import claim, files_under, has_marker, may_replace
from .emit import render_client
from .inspect import ClientGenError, inspect_server
from .lock import LOCK_NAME, drift, lock_of, parse_lock

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from .inspect import Listing


@dataclass(frozen=True)
class Outcome:
    """What `generate_client` or `check_client` found."""

    listing: Listing
    files: dict[str, str]
    changed: list[str] = field(default_factory=list[str])
    """Files written (generate) or out of date (check)."""
    drifted: list[str] = field(default_factory=list[str])
    """What differs between the lock on disk and the server (check)."""

    @property
    def in_sync(self) -> bool:
        """Whether the package on disk matches the server."""
        return not self.changed and not self.drifted


def read_server(
    target: str, headers: Mapping[str, str] | None = None, timeout: float = 30.0
) -> Listing:
    """`inspect_server` from synchronous code."""
    return anyio.run(lambda: inspect_server(target, headers, timeout))


def generate_client(listing: Listing, out: Path, package: str) -> Outcome:
    """Write the package `package` for `listing` into `out`.

    Only our files (generated header, or our lock) are replaced or deleted.

    Raises:
        CodegenError: `out/package` holds files but none of ours, or a file to
            write exists and is not ours (nothing is written then).
    """
    files = render_client(listing, package)
    claim(out / package, ours)
    found = differences(files, out, package)
    for rel, status in found:
        if status == "stale":
            may_replace(out / rel, ours)
    changed: list[str] = []
    for rel, status in found:
        target = out / rel
        if status == "orphaned":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[rel], encoding="utf-8")
        changed.append(rel)
    return Outcome(listing, files, changed=changed)


def check_client(listing: Listing, out: Path, package: str) -> Outcome:
    """Compare `out/package` with what `listing` generates, and its lock with
    the server (nothing is written).

    Raises:
        ClientGenError: there is no lock file (the package was never generated).
    """
    lock_path = out / package / LOCK_NAME
    try:
        text = lock_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClientGenError(
            f"{lock_path} is missing: generate the package first "
            "(the same command without --check)"
        ) from exc
    drifted = drift(parse_lock(text, str(lock_path)), lock_of(listing))
    files = render_client(listing, package)
    stale = [f"{rel} ({status})" for rel, status in differences(files, out, package)]
    return Outcome(listing, files, changed=stale, drifted=drifted)


def differences(
    files: dict[str, str], out: Path, package: str
) -> list[tuple[str, str]]:
    """(path, "missing" | "stale" | "orphaned") for each file of `out/package`
    that differs from `files`, sorted by path."""
    on_disk = {path.relative_to(out).as_posix() for path in files_under(out / package)}
    found: list[tuple[str, str]] = []
    for rel in sorted(set(files) | on_disk):
        if rel not in files:
            if ours(out / rel):
                found.append((rel, "orphaned"))
        elif rel not in on_disk:
            found.append((rel, "missing"))
        elif (out / rel).read_text(encoding="utf-8") != files[rel]:
            found.append((rel, "stale"))
    return found


def ours(path: Path) -> bool:
    """Whether `path` was written by `mcp-codegen client` (header or lock)."""
    if path.name != LOCK_NAME:
        return has_marker(path)
    try:
        parse_lock(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, CodegenError):
        return False
    return True

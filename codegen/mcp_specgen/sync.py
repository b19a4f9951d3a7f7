"""`mcp-codegen schema sync`: fill `schema/<rev>/schema.json` from upstream or a folder.

This is the only part of the generator that may touch the network, and only
when no local source folder is given.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import SchemaLoadError
from .manifest import pin_advice

if TYPE_CHECKING:
    from .manifest import Manifest, PinnedRevision

SOURCE_ENV = "MCP_CODEGEN_SCHEMA_SOURCE"
"""Environment variable naming a local folder laid out as `<rev>/schema.json`."""


@dataclass(frozen=True)
class SyncResult:
    """What happened to one revision."""

    revision: str
    sha256: str
    source: str
    accepted_new_hash: bool = False


def schema_path(schema_dir: Path, revision: str) -> Path:
    """Where the synced schema of `revision` lives."""
    return schema_dir / revision / "schema.json"


def sync(
    manifest: Manifest,
    schema_dir: Path,
    revisions: tuple[PinnedRevision, ...],
    *,
    source_dir: Path | None = None,
    accept_new_hash: bool = False,
) -> tuple[Manifest, list[SyncResult]]:
    """Fetch each revision, check its hash, and write it under `schema_dir`.

    Returns the manifest (updated when a new hash was accepted) and a result
    per revision.

    Raises:
        SchemaLoadError: a file cannot be fetched, or its hash differs from the
            pin and `accept_new_hash` is false. Nothing is written for it.
    """
    if source_dir is None and os.environ.get(SOURCE_ENV):
        source_dir = Path(os.environ[SOURCE_ENV])
    results: list[SyncResult] = []
    for rev in revisions:
        data, source = _fetch(rev, source_dir)
        digest = hashlib.sha256(data).hexdigest()
        accepted = False
        if digest != rev.sha256:
            if not accept_new_hash:
                raise SchemaLoadError(
                    f"{source}: {pin_advice(rev.name, digest, rev.sha256)}, "
                    "then review the diff",
                    revision=rev.name,
                )
            manifest = manifest.with_hash(rev.name, digest)
            accepted = True
        target = schema_path(schema_dir, rev.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        results.append(SyncResult(rev.name, digest, source, accepted))
    if any(result.accepted_new_hash for result in results):
        manifest.save()
    return manifest, results


def _fetch(rev: PinnedRevision, source_dir: Path | None) -> tuple[bytes, str]:
    if source_dir is not None:
        path = schema_path(source_dir, rev.name)
        try:
            return path.read_bytes(), str(path)
        except OSError as exc:
            raise SchemaLoadError(
                f"cannot read {path}: {exc}", revision=rev.name
            ) from exc
    try:
        with urllib.request.urlopen(rev.url, timeout=30) as response:
            return response.read(), rev.url
    except OSError as exc:
        raise SchemaLoadError(
            f"cannot fetch {rev.url}: {exc}; pass --from DIR to sync from a local copy",
            revision=rev.name,
        ) from exc

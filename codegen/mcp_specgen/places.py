"""Where the generator reads and writes, from any folder.

- The manifest: `--manifest PATH`; else `schema/manifest.toml` in the current
  folder or the nearest parent holding one (a project's own, like this
  repository's); else the manifest shipped with mcp-specgen. Its folder holds
  the overrides and the extensions' schemas.
- The synced schemas (`<rev>/schema.json`): `--schema-dir DIR`; else beside a
  project's manifest; else, for the shipped manifest, the user cache
  (`$MCP_CODEGEN_CACHE`, else `$XDG_CACHE_HOME/mcp-codegen/schemas`, else
  `~/.cache/mcp-codegen/schemas`).
- The generated package: `--out DIR`; else `generated/` beside a project's
  `schema/` folder. With the shipped manifest, `--out` must be given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import CodegenError
from .manifest import MANIFEST_NAME

CACHE_ENV = "MCP_CODEGEN_CACHE"
"""Environment variable naming the folder synced schemas go to (shipped manifest)."""

PROJECT_MANIFEST = Path("schema") / MANIFEST_NAME
"""Where a project keeps its own manifest, relative to the project's root."""


@dataclass(frozen=True)
class Places:
    """The manifest file, the synced schemas' folder, and whose manifest it is."""

    manifest: Path
    schema_dir: Path
    shipped: bool

    def out_dir(self, out: Path | None) -> Path:
        """`out`, else the project's `generated/` folder.

        Raises:
            CodegenError: no `out` and the manifest is the shipped one.
        """
        if out is not None:
            return out
        if self.shipped:
            raise CodegenError(
                "no project here (no schema/manifest.toml in this folder or above): "
                "say where the package goes with --out DIR"
            )
        return self.manifest.parent.parent / "generated"

    def refuse_changes(self) -> None:
        """Stop a command that would rewrite the shipped manifest.

        Raises:
            CodegenError: the manifest is the shipped one.
        """
        if self.shipped:
            raise CodegenError(
                f"the manifest shipped with mcp-specgen ({self.manifest}) is not "
                "yours to change: copy it (with its overrides/ and extensions/) "
                "into schema/ of your project, or pass --manifest PATH"
            )


def shipped_schema_dir() -> Path:
    """The manifest's folder shipped in the wheel, or the checkout's `schema/`."""
    shipped = Path(str(resources.files("mcp_specgen"))) / "schema"
    if (shipped / MANIFEST_NAME).is_file():
        return shipped
    return Path(__file__).resolve().parents[2] / "schema"


def user_cache_dir() -> Path:
    """Where `schema sync` puts the schemas of the shipped manifest."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcp-codegen" / "schemas"


def find_project_manifest(start: Path) -> Path | None:
    """`schema/manifest.toml` in `start` or the nearest parent that has one."""
    for folder in (start, *start.parents):
        candidate = folder / PROJECT_MANIFEST
        if candidate.is_file():
            return candidate
    return None


def locate(
    manifest: Path | None = None,
    schema_dir: Path | None = None,
    cwd: Path | None = None,
) -> Places:
    """Resolve the places of one command from its options (see the module doc).

    A `schema_dir` holding a `manifest.toml` is a project's schema folder: its
    manifest is used unless `manifest` is given.
    """
    if manifest is None and schema_dir is not None:
        if (schema_dir / MANIFEST_NAME).is_file():
            manifest = schema_dir / MANIFEST_NAME
    if manifest is None:
        manifest = find_project_manifest((cwd or Path.cwd()).resolve())
    if manifest is not None:
        return Places(manifest, schema_dir or manifest.parent, shipped=False)
    shipped = shipped_schema_dir() / MANIFEST_NAME
    return Places(shipped, schema_dir or user_cache_dir(), shipped=True)

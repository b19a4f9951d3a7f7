"""The schema manifest (`schema/manifest.toml`): pinned revisions, in protocol
order, and the extensions whose schemas the project keeps under `schema/`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from .errors import SchemaLoadError

if TYPE_CHECKING:
    from pathlib import Path

MANIFEST_NAME = "manifest.toml"

Era = Literal["legacy", "modern"]


@dataclass(frozen=True)
class PinnedRevision:
    """One revision's pin: where it comes from and what its bytes hash to."""

    name: str
    url: str
    sha256: str
    dialect: str
    era: Era

    @property
    def module(self) -> str:
        """The Python module name of this revision (`v2025_06_18`, `draft`)."""
        if self.name[:1].isdigit():
            return "v" + self.name.replace("-", "_")
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class PinnedExtension:
    """One extension's schema: committed under `schema/` (not synced), since
    the specification publishes none for it, with the source it was written
    from.

    Attributes:
        id: the extension identifier (`io.modelcontextprotocol/tasks`).
        version: the core revision the schema was written against.
        path: the schema file, relative to the schema folder.
        source: where its content comes from (a SEP, a schema.ts).
    """

    id: str
    version: str
    path: str
    sha256: str
    dialect: str
    source: str

    @property
    def name(self) -> str:
        """The label used in errors and headers (`id@version`)."""
        return f"{self.id}@{self.version}"

    @property
    def module(self) -> str:
        """The Python module name (`io_modelcontextprotocol_tasks`)."""
        return "".join(c if c.isalnum() else "_" for c in self.id.lower())

    def as_revision_pin(self) -> PinnedRevision:
        """The pin the revision loader checks (extensions are modern-era)."""
        return PinnedRevision(
            name=self.name,
            url=self.source,
            sha256=self.sha256,
            dialect=self.dialect,
            era="modern",
        )


@dataclass(frozen=True)
class Manifest:
    """All pinned revisions, oldest first, and the extensions' schemas."""

    path: Path
    revisions: tuple[PinnedRevision, ...]
    extensions: tuple[PinnedExtension, ...] = ()

    @property
    def folder(self) -> Path:
        """The folder of the manifest file: its overrides and extensions are there."""
        return self.path.parent

    @property
    def names(self) -> tuple[str, ...]:
        """Revision names in protocol order."""
        return tuple(rev.name for rev in self.revisions)

    def get(self, name: str) -> PinnedRevision:
        """Return the pin of revision `name`.

        Raises:
            SchemaLoadError: the manifest has no such revision.
        """
        for rev in self.revisions:
            if rev.name == name:
                return rev
        known = ", ".join(self.names)
        raise SchemaLoadError(f"unknown revision {name!r}; the manifest has {known}")

    def select(self, names: tuple[str, ...] | list[str]) -> tuple[PinnedRevision, ...]:
        """Return the named revisions (all of them when `names` is empty)."""
        if not names:
            return self.revisions
        return tuple(self.get(name) for name in names)

    def with_hash(self, name: str, sha256: str) -> Manifest:
        """Return a copy of the manifest with a new pin for `name`."""
        revisions = tuple(
            replace(rev, sha256=sha256) if rev.name == name else rev
            for rev in self.revisions
        )
        return replace(self, revisions=revisions)

    def save(self) -> None:
        """Rewrite the pins in place, keeping the file's leading comments."""
        text = self.path.read_text(encoding="utf-8")
        header = text.split("[[revision]]", 1)[0]
        blocks = [
            "[[revision]]\n"
            f"name = {_toml_str(rev.name)}\n"
            f"url = {_toml_str(rev.url)}\n"
            f"sha256 = {_toml_str(rev.sha256)}\n"
            f"dialect = {_toml_str(rev.dialect)}\n"
            f"era = {_toml_str(rev.era)}\n"
            for rev in self.revisions
        ]
        blocks += [
            "[[extension]]\n"
            f"id = {_toml_str(ext.id)}\n"
            f"version = {_toml_str(ext.version)}\n"
            f"path = {_toml_str(ext.path)}\n"
            f"sha256 = {_toml_str(ext.sha256)}\n"
            f"dialect = {_toml_str(ext.dialect)}\n"
            f"source = {_toml_str(ext.source)}\n"
            for ext in self.extensions
        ]
        self.path.write_text(header + "\n".join(blocks), encoding="utf-8")


def pin_advice(name: str, digest: str, pinned: str) -> str:
    """What to tell a user whose file of `name` hashes to `digest`, not `pinned`.

    The manifest pins each schema file's SHA-256 digest, so a schema that changes
    upstream is never taken silently; this says how to pin the file at hand.
    """
    if "@" in name:  # an extension: its schema is a committed file
        how = f'paste `sha256 = "{digest}"` into its [[extension]] entry'
    else:
        how = (
            f"run `mcp-codegen schema pin {name}` (with --from DIR if you sync "
            f'from a folder), or paste `sha256 = "{digest}"` into its [[revision]] '
            "entry of schema/manifest.toml"
        )
    found = (
        f"the manifest pins sha256 {pinned}"
        if pinned
        else "the manifest pins no sha256 for it yet"
    )
    return (
        f"the file's sha256 (its SHA-256 digest) is {digest}, but {found}; "
        f"if this is the schema you mean, {how}"
    )


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def load_manifest(schema_dir: Path) -> Manifest:
    """Read `schema_dir/manifest.toml` (see `read_manifest`)."""
    return read_manifest(schema_dir / MANIFEST_NAME)


def read_manifest(path: Path) -> Manifest:
    """Read the manifest file `path`.

    Raises:
        SchemaLoadError: the file is missing or malformed.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SchemaLoadError(f"cannot read the schema manifest {path}: {exc}") from exc
    revisions: list[PinnedRevision] = []
    for entry in data.get("revision", []):
        try:
            era = entry["era"]
            if era not in ("legacy", "modern"):
                raise SchemaLoadError(f"era must be legacy or modern, not {era!r}")
            revisions.append(
                PinnedRevision(
                    name=entry["name"],
                    url=entry["url"],
                    sha256=entry.get("sha256", ""),
                    dialect=entry["dialect"],
                    era=era,
                )
            )
        except KeyError as exc:
            raise SchemaLoadError(f"{path}: a revision lacks {exc}") from exc
    if not revisions:
        raise SchemaLoadError(f"{path} pins no revision")
    extensions: list[PinnedExtension] = []
    for entry in data.get("extension", []):
        try:
            extensions.append(
                PinnedExtension(
                    id=entry["id"],
                    version=entry["version"],
                    path=entry["path"],
                    sha256=entry["sha256"],
                    dialect=entry["dialect"],
                    source=entry["source"],
                )
            )
        except KeyError as exc:
            raise SchemaLoadError(f"{path}: an extension lacks {exc}") from exc
    return Manifest(path=path, revisions=tuple(revisions), extensions=tuple(extensions))

"""The generator pipeline: manifest -> schema -> overrides -> IR (revisions and
extensions)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import msgspec

from .build import build_revision
from .errors import SchemaLoadError
from .load import from_document, load_schema, parse_schema
from .manifest import Era, Manifest, PinnedExtension, PinnedRevision, load_manifest
from .overrides import apply_patches, check_inherited, load_rules

if TYPE_CHECKING:
    from pathlib import Path

    from . import ir


def load_revision(
    schema_dir: Path, pin: PinnedRevision, manifest: Manifest | None = None
) -> ir.Revision:
    """Load, check, patch and build one revision.

    The schema file is read from `schema_dir`; the overrides from the folder
    of `manifest` (default: the manifest in `schema_dir`).

    Raises:
        CodegenError: any problem, naming the revision and JSON pointer.
    """
    schema = load_schema(schema_dir, pin)
    if manifest is None:
        manifest = load_manifest(schema_dir)
    order = manifest.names
    rules = load_rules(manifest.folder, order)
    check_inherited(schema.document, rules, pin.name, order)
    patches = tuple(rule for rule in rules if rule.applies_to(pin.name, order))
    document = apply_patches(schema.document, patches, pin.name)
    return build_revision(schema, document[schema.definitions_key])


def load_extension(schema_dir: Path, pin: PinnedExtension) -> ir.Revision:
    """Load, check and build an extension's committed schema (no overrides).

    `schema_dir` is the manifest's folder: `pin.path` is relative to it.

    Raises:
        CodegenError: any problem, naming the extension and JSON pointer.
    """
    path = schema_dir / pin.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SchemaLoadError(f"{path} is missing", revision=pin.name) from exc
    schema = parse_schema(data, pin.as_revision_pin(), str(path))
    rev = build_revision(schema, schema.definitions)
    return msgspec.structs.replace(
        rev, module=pin.module, extension=pin.id, source=pin.path
    )


def revision_from_document(
    document: dict[str, Any],
    name: str = "test",
    *,
    era: Era = "legacy",
) -> ir.Revision:
    """Build the IR of an in-memory schema (tests, synthetic cases); no pin check.

    Raises:
        CodegenError: the schema is invalid or unsupported.
    """
    raw = json.dumps(document, sort_keys=True).encode()
    dialect = document.get("$schema", "https://json-schema.org/draft/2020-12/schema")
    pin = PinnedRevision(
        name=name,
        url="",
        sha256=hashlib.sha256(raw).hexdigest(),
        dialect=dialect,
        era=era,
    )
    schema = from_document(document, pin, pin.sha256)
    return build_revision(schema, schema.definitions)

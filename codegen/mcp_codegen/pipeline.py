"""The generator pipeline: manifest -> schema -> overrides -> IR."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from .build import build_revision
from .load import from_document, load_schema
from .manifest import Era, PinnedRevision
from .overrides import apply_patches, load_patches

if TYPE_CHECKING:
    from pathlib import Path

    from . import ir


def load_revision(schema_dir: Path, pin: PinnedRevision) -> ir.Revision:
    """Load, check, patch and build one revision.

    Raises:
        CodegenError: any problem, naming the revision and JSON pointer.
    """
    schema = load_schema(schema_dir, pin)
    patches = load_patches(schema_dir, pin.name)
    document = apply_patches(schema.document, patches, pin.name)
    return build_revision(schema, document[schema.definitions_key])


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

"""The generator pipeline: manifest -> schema -> overrides -> IR."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .build import build_revision
from .load import load_schema
from .overrides import apply_patches, load_patches

if TYPE_CHECKING:
    from pathlib import Path

    from . import ir
    from .manifest import PinnedRevision


def load_revision(schema_dir: Path, pin: PinnedRevision) -> ir.Revision:
    """Load, check, patch and build one revision.

    Raises:
        CodegenError: any problem, naming the revision and JSON pointer.
    """
    schema = load_schema(schema_dir, pin)
    patches = load_patches(schema_dir, pin.name)
    document = apply_patches(schema.document, patches, pin.name)
    return build_revision(schema, document[schema.definitions_key])

"""Load a synced schema: check its pin, parse it, validate it against its dialect."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import jsonschema.validators

from .errors import SchemaLoadError
from .jsondata import is_object
from .manifest import pin_advice
from .sync import schema_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from jsonschema.protocols import Validator

    from .manifest import PinnedRevision

DEFINITION_KEYS = ("$defs", "definitions")


@dataclass(frozen=True)
class LoadedSchema:
    """A parsed, validated schema with its definitions merged into one dict."""

    pin: PinnedRevision
    sha256: str
    document: dict[str, Any]
    definitions: dict[str, Any]
    definitions_key: str

    @property
    def revision(self) -> str:
        """The revision name."""
        return self.pin.name

    def pointer(self, name: str) -> str:
        """The JSON pointer of definition `name`."""
        return f"#/{self.definitions_key}/{name}"


def load_schema(schema_dir: Path, pin: PinnedRevision) -> LoadedSchema:
    """Read `schema_dir/<rev>/schema.json` and check it.

    Raises:
        SchemaLoadError: the file is missing (not synced), differs from its pin,
            is not JSON, or is not a valid schema of its dialect.
    """
    path = schema_path(schema_dir, pin.name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SchemaLoadError(
            f"{path} is missing; run `mcp-codegen schema sync {pin.name}` first",
            revision=pin.name,
        ) from exc
    return parse_schema(data, pin, str(path))


def parse_schema(data: bytes, pin: PinnedRevision, origin: str) -> LoadedSchema:
    """Check and parse the bytes of a schema file (see `load_schema`)."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise SchemaLoadError(
            f"{origin}: {pin_advice(pin.name, digest, pin.sha256)}; to restore the "
            f"pinned file instead, run `mcp-codegen schema sync {pin.name}`",
            revision=pin.name,
        )
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise SchemaLoadError(
            f"{origin} is not JSON: {exc}", revision=pin.name
        ) from exc
    return from_document(document, pin, digest)


def from_document(document: Any, pin: PinnedRevision, sha256: str) -> LoadedSchema:
    """Validate an already parsed schema document against its meta-schema."""
    if not is_object(document):
        raise SchemaLoadError("the schema is not a JSON object", revision=pin.name)
    dialect = document.get("$schema", pin.dialect)
    if dialect.rstrip("#") != pin.dialect.rstrip("#"):
        raise SchemaLoadError(
            f"the schema declares dialect {dialect!r}, the manifest {pin.dialect!r}",
            revision=pin.name,
        )
    validator = _validator_class(document)
    if validator is None:
        raise SchemaLoadError(
            f"unknown JSON Schema dialect {dialect!r}", revision=pin.name
        )
    try:
        validator.check_schema(document)
    except jsonschema.SchemaError as exc:
        pointer = "#/" + "/".join(str(part) for part in exc.path)
        raise SchemaLoadError(
            f"not a valid {dialect} schema: {exc.message}",
            revision=pin.name,
            pointer=pointer,
        ) from exc
    present = [key for key in DEFINITION_KEYS if key in document]
    if len(present) != 1:
        raise SchemaLoadError(
            "the schema must hold its types in exactly one of $defs or definitions",
            revision=pin.name,
        )
    key = present[0]
    return LoadedSchema(
        pin=pin,
        sha256=sha256,
        document=document,
        definitions=document[key],
        definitions_key=key,
    )


def _validator_class(document: dict[str, Any]) -> type[Validator] | None:
    """The validator class of the document's `$schema`.

    None when the document declares no `$schema` or one jsonschema does not know.
    """
    # validator_for returns `default` for a missing or unknown `$schema`, but
    # annotates `default` as a validator class only: None asks for "unknown".
    validator_for = cast(
        "Callable[..., type[Validator] | None]", jsonschema.validators.validator_for
    )
    return validator_for(document, default=None)

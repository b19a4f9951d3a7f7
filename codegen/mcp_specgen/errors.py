"""Errors raised by the generator.

    CodegenError
    ├── SchemaLoadError        the schema is missing, malformed or has the wrong hash
    ├── UnsupportedSchemaError a construct the generator cannot map exactly
    ├── NameCollisionError     two schema names map to one Python name
    └── OverrideError          an override does not apply to the schema it names

Each error names the revision and the JSON pointer it concerns, so the CLI can
report every problem at once.
"""

from __future__ import annotations


class CodegenError(Exception):
    """Base class of every generator error."""

    def __init__(self, message: str, *, revision: str = "", pointer: str = "") -> None:
        self.message = message
        self.revision = revision
        self.pointer = pointer
        where = ", ".join(part for part in (revision, pointer) if part)
        super().__init__(f"{where}: {message}" if where else message)


class SchemaLoadError(CodegenError):
    """The schema could not be read, parsed, validated or hash-checked."""


class UnsupportedSchemaError(CodegenError):
    """The schema uses a construct that has no exact Python mapping."""


class NameCollisionError(CodegenError):
    """Two schema names produce the same Python name."""


class OverrideError(CodegenError):
    """An override is malformed or no longer matches the schema."""

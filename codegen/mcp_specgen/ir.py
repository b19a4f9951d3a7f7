"""The intermediate representation: one `Revision` per schema revision.

The IR is plain data (frozen msgspec Structs, no Python source text). `build.py`
produces it from a loaded schema; every emitter reads it and nothing else.

Type expressions (`TypeExpr`) describe the shape of a value; declarations
(`Decl`) give a name to a shape: a struct, a union or an alias.
"""

from __future__ import annotations

from typing import Literal as TypingLiteral

import msgspec


class Frozen(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """Base of all IR nodes: immutable, compared by value, tagged by kind.

    Subclasses repeat `frozen=True`: msgspec would inherit it, but type checkers
    only read the flags a class states itself.
    """


# --- type expressions ---------------------------------------------------------

PrimitiveName = TypingLiteral["str", "int", "number", "bool", "null", "any"]


class Primitive(Frozen, frozen=True, tag="primitive"):
    """A JSON scalar or an unconstrained JSON value (`any`)."""

    name: PrimitiveName
    minimum: int | float | None = None
    maximum: int | float | None = None


class LiteralType(Frozen, frozen=True, tag="literal"):
    """One or more constant values (`const` or `enum`)."""

    values: tuple[str | int | bool | None, ...]


class Ref(Frozen, frozen=True, tag="ref"):
    """A reference to a named declaration of the same revision."""

    name: str


class ArrayOf(Frozen, frozen=True, tag="array"):
    """A JSON array whose items all have one type."""

    items: TypeExpr
    min_items: int | None = None
    max_items: int | None = None


class MapOf(Frozen, frozen=True, tag="map"):
    """A JSON object used as a string-keyed map."""

    values: TypeExpr


class UnionOf(Frozen, frozen=True, tag="union"):
    """An inline union of simple members (no more than one struct)."""

    members: tuple[TypeExpr, ...]


TypeExpr = Primitive | LiteralType | Ref | ArrayOf | MapOf | UnionOf


# --- declarations -------------------------------------------------------------


class Field(Frozen, frozen=True, tag="field"):
    """One property of a struct."""

    wire_name: str
    py_name: str
    type: TypeExpr
    required: bool
    default: str | int | bool | None = None
    description: str = ""


class StructDecl(Frozen, frozen=True, tag="struct"):
    """A JSON object with named properties.

    `open` objects keep properties the schema does not name (JSON Schema's
    default); `closed` ones (`additionalProperties: false`) reject them.
    A struct that takes part in a tagged union carries the tag property as
    `tag_field`/`tag_value` instead of a field.
    """

    name: str
    pointer: str
    fields: tuple[Field, ...]
    open: bool = True
    tag_field: str | None = None
    tag_value: str | None = None
    description: str = ""


class UnionDecl(Frozen, frozen=True, tag="union_decl"):
    """A named union.

    `tagged` unions are decoded by msgspec in one pass using `tag_field`.
    `structural` unions have no discriminator: the runtime picks the most
    specific member that accepts the value. Members are listed in the order
    the runtime tries them.
    """

    name: str
    pointer: str
    members: tuple[TypeExpr, ...]
    strategy: TypingLiteral["tagged", "structural"]
    tag_field: str | None = None
    description: str = ""


class AliasDecl(Frozen, frozen=True, tag="alias"):
    """A name for a type expression (scalars, enums, arrays, maps, refs).

    `recursive` aliases (JSONValue and friends) are JSON values at run time
    and a recursive alias for type checkers.
    """

    name: str
    pointer: str
    target: TypeExpr
    recursive: bool = False
    description: str = ""


Decl = StructDecl | UnionDecl | AliasDecl


# --- methods ------------------------------------------------------------------

Direction = TypingLiteral["client_to_server", "server_to_client", "both"]


class Method(Frozen, frozen=True, tag="method"):
    """A JSON-RPC method defined by the revision."""

    name: str
    py_name: str
    direction: Direction
    message: TypingLiteral["request", "notification"]
    message_type: str
    params_type: str | None
    params_required: bool
    result_type: str | None


class Constant(Frozen, frozen=True, tag="constant"):
    """A protocol constant: a `_meta` key or an error code."""

    name: str
    value: str | int
    doc: str = ""


class Revision(Frozen, frozen=True, tag="revision"):
    """Everything the emitters need to know about one protocol revision."""

    name: str
    module: str
    sha256: str
    dialect: str
    era: TypingLiteral["legacy", "modern"]
    decls: tuple[Decl, ...]
    methods: tuple[Method, ...]
    definition_names: tuple[str, ...]
    meta_keys: tuple[Constant, ...] = ()
    error_codes: tuple[Constant, ...] = ()
    extension: str = ""
    """The extension identifier when this is an extension's schema, else ""."""
    source: str = ""
    """The schema file, relative to the schema folder ("" for `<name>/schema.json`)."""

    def decl(self, name: str) -> Decl:
        """Return the declaration called `name`."""
        for decl in self.decls:
            if decl.name == name:
                return decl
        raise KeyError(name)

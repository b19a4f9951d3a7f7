"""Schema -> IR: names, fields, unions, methods. Every schema problem is raised here."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeGuard

import msgspec

from . import ir
from .constants import error_codes, meta_keys
from .errors import NameCollisionError, UnsupportedSchemaError
from .jsondata import is_array, is_object
from .methods import extract_methods
from .naming import field_name, inline_type_name
from .tsdoc import render_tsdoc
from .unions import classify_unions

if TYPE_CHECKING:
    from collections.abc import Callable

    from .load import LoadedSchema

# Keywords that only annotate a schema: they never change what it accepts
# (jsonschema does not assert `format` by default, and neither do we).
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "format",
        "$comment",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "default",
        "$schema",
    }
)
PYTHON_DEFAULT = "x-python-default"
"""Override keyword: the Python default of an optional property (e.g. `resultType`)."""


class Builder:
    """Builds the IR of one revision; see `build_revision`."""

    def __init__(self, schema: LoadedSchema, definitions: dict[str, Any]) -> None:
        self.schema = schema
        self.definitions = definitions
        self.ref_prefix = f"#/{schema.definitions_key}/"
        self.decls: dict[str, ir.Decl] = {}
        self.pending_unions: dict[str, tuple[str, tuple[ir.TypeExpr, ...], str]] = {}
        self.exclusive_unions: set[str] = set()
        """`oneOf` unions: exactly one member may match."""

    def describe(self, node: object) -> str:
        """The node's description, its TSDoc markup rendered as plain text."""
        text: str = node.get("description", "") if is_object(node) else ""
        return render_tsdoc(text, self.definitions) if "@" in text else text

    # -- errors -----------------------------------------------------------------

    def unsupported(self, message: str, pointer: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(
            message, revision=self.schema.revision, pointer=pointer
        )

    def claim(self, name: str, pointer: str) -> None:
        """Reserve a type name; two schema places wanting one name is an error."""
        taken = name in self.decls or name in self.pending_unions
        if taken or (name in self.definitions and pointer != self.schema.pointer(name)):
            raise NameCollisionError(
                f"type name {name!r} is wanted twice; add an override renaming one",
                revision=self.schema.revision,
                pointer=pointer,
            )

    # -- definitions ------------------------------------------------------------

    def define(self, name: str, node: Any, pointer: str) -> None:
        """Turn the named schema `node` into a declaration called `name`."""
        node = self.flatten_all_of(node, pointer)
        description = self.describe(node)
        if _is_struct(node):
            self.struct(name, node, pointer)
        elif is_object(node) and ("anyOf" in node or "oneOf" in node):
            self.union(name, node, pointer)
        else:
            self.claim(name, pointer)
            target = self.type_of(node, name, pointer)
            self.decls[name] = ir.AliasDecl(
                name=name, pointer=pointer, target=target, description=description
            )

    def struct(self, name: str, node: dict[str, Any], pointer: str) -> ir.Ref:
        self.claim(name, pointer)
        self._check_keywords(
            node, {"type", "properties", "required", "additionalProperties"}, pointer
        )
        properties: dict[str, Any] = node.get("properties", {})
        required = node.get("required", [])
        for wire in required:
            if wire not in properties:
                raise self.unsupported(
                    f"required property {wire!r} is not defined", pointer
                )
        extra = node.get("additionalProperties", True)
        if extra not in (True, False, {}):
            raise self.unsupported(
                "typed additionalProperties beside properties", pointer
            )
        # Reserve the name before descending, so recursive references resolve.
        self.decls[name] = ir.StructDecl(name=name, pointer=pointer, fields=())
        fields: list[ir.Field] = []
        seen: dict[str, str] = {}
        for wire, prop in properties.items():
            prop_pointer = f"{pointer}/properties/{_escape(wire)}"
            py_name = field_name(wire)
            if py_name in seen:
                raise NameCollisionError(
                    f"properties {seen[py_name]!r} and {wire!r} both map to "
                    f"{py_name!r}",
                    revision=self.schema.revision,
                    pointer=prop_pointer,
                )
            seen[py_name] = wire
            default = prop.get(PYTHON_DEFAULT) if is_object(prop) else None
            fields.append(
                ir.Field(
                    wire_name=wire,
                    py_name=py_name,
                    type=self.type_of(prop, inline_type_name(name, wire), prop_pointer),
                    required=wire in required,
                    default=default,
                    description=self.describe(prop),
                )
            )
        decl = ir.StructDecl(
            name=name,
            pointer=pointer,
            fields=tuple(fields),
            open=extra is not False,
            description=self.describe(node),
        )
        self.decls[name] = decl
        return ir.Ref(name=name)

    def union(self, name: str, node: dict[str, Any], pointer: str) -> ir.Ref:
        self.claim(name, pointer)
        keyword = "anyOf" if "anyOf" in node else "oneOf"
        self._check_keywords(node, {keyword}, pointer)
        options = node[keyword]
        members = tuple(
            self.type_of(option, f"{name}Option{index}", f"{pointer}/{keyword}/{index}")
            for index, option in enumerate(options)
        )
        self.pending_unions[name] = (pointer, members, self.describe(node))
        if keyword == "oneOf":
            self.exclusive_unions.add(name)
        return ir.Ref(name=name)

    # -- type expressions -------------------------------------------------------

    def type_of(self, node: Any, inline_name: str, pointer: str) -> ir.TypeExpr:
        """The type of a schema node; inline objects and unions become named decls."""
        if node is True:
            return ir.Primitive(name="any")
        if not is_object(node):
            raise self.unsupported(f"schema {node!r} accepts nothing", pointer)
        node = self.flatten_all_of(node, pointer)
        if "$ref" in node:
            self._check_keywords(node, {"$ref"}, pointer)
            return ir.Ref(name=self.ref_name(node["$ref"], pointer))
        if "const" in node:
            self._check_keywords(node, {"const", "type"}, pointer)
            return self.literal((node["const"],), pointer)
        if "enum" in node:
            self._check_keywords(node, {"enum", "type"}, pointer)
            return self.literal(tuple(node["enum"]), pointer)
        if "anyOf" in node or "oneOf" in node:
            return self.union(inline_name, node, pointer)
        if _is_struct(node):
            return self.struct(inline_name, node, pointer)
        kind = node.get("type")
        if kind is None:
            self._check_keywords(node, set(), pointer)
            return ir.Primitive(name="any")
        if is_array(kind):
            self._check_keywords(node, {"type"}, pointer)
            return ir.UnionOf(
                members=tuple(
                    self.type_of({"type": k}, inline_name, pointer) for k in kind
                )
            )
        if kind == "object":
            self._check_keywords(
                node, {"type", "additionalProperties", "properties"}, pointer
            )
            values = node.get("additionalProperties", True)
            if values is False:
                raise self.unsupported("an object that accepts no property", pointer)
            if values is True:
                values = {}
            value_type = self.type_of(
                values, inline_name + "Value", pointer + "/additionalProperties"
            )
            return ir.MapOf(values=value_type)
        if kind == "array":
            self._check_keywords(
                node, {"type", "items", "minItems", "maxItems"}, pointer
            )
            items = self.type_of(
                node.get("items", True), inline_name + "Item", pointer + "/items"
            )
            return ir.ArrayOf(
                items=items,
                min_items=node.get("minItems"),
                max_items=node.get("maxItems"),
            )
        if kind in ("integer", "number"):
            self._check_keywords(node, {"type", "minimum", "maximum"}, pointer)
            for bound in ("minimum", "maximum"):
                if bound in node and not math.isfinite(node[bound]):
                    raise self.unsupported(
                        f"{bound} {node[bound]!r} is not finite", pointer
                    )
            return ir.Primitive(
                name="int" if kind == "integer" else "number",
                minimum=node.get("minimum"),
                maximum=node.get("maximum"),
            )
        primitives: dict[str, ir.PrimitiveName] = {
            "string": "str",
            "boolean": "bool",
            "null": "null",
        }
        if kind in primitives:
            self._check_keywords(node, {"type"}, pointer)
            return ir.Primitive(name=primitives[kind])
        raise self.unsupported(f"unknown type {kind!r}", pointer)

    def literal(self, values: tuple[Any, ...], pointer: str) -> ir.LiteralType:
        """A `Literal` type; only strings, integers, booleans and null fit one."""
        for value in values:
            if isinstance(value, float | dict | list):
                raise self.unsupported(
                    f"constant {value!r} cannot be a typing.Literal value", pointer
                )
        return ir.LiteralType(values=values)

    def ref_name(self, ref: str, pointer: str) -> str:
        if not ref.startswith(self.ref_prefix):
            raise self.unsupported(
                f"only local references are supported, not {ref!r}", pointer
            )
        name = ref.removeprefix(self.ref_prefix)
        if name not in self.definitions:
            raise self.unsupported(f"reference to an undefined type {name!r}", pointer)
        return name

    def flatten_all_of(self, node: Any, pointer: str) -> Any:
        """Merge `allOf` parts (referenced or inline objects) into one object schema.

        The node's own keywords are merged last, so its description wins.
        """
        if not is_object(node) or "allOf" not in node:
            return node
        merged: dict[str, Any] = {}
        own = {k: v for k, v in node.items() if k != "allOf"}
        parts = [(f"{pointer}/allOf/{i}", p) for i, p in enumerate(node["allOf"])]
        for part_pointer, part in [*parts, (pointer, own)]:
            while is_object(part) and "$ref" in part:
                part = self.definitions[self.ref_name(part["$ref"], part_pointer)]
            part = self.flatten_all_of(part, part_pointer)
            if part is own and not set(own) - ANNOTATIONS:
                merged.update({k: v for k, v in own.items() if k in ANNOTATIONS})
                continue
            if not _is_struct(part):
                raise self.unsupported(
                    "allOf of something other than objects", part_pointer
                )
            if (
                part.get("additionalProperties", True) not in (True, {})
                and len(parts) > 1
            ):
                # Each part would judge "additional" by its own properties only.
                raise self.unsupported(
                    "additionalProperties inside an allOf part", part_pointer
                )
            merged = _merge_objects(merged, part, self.unsupported, part_pointer)
        return merged

    def _check_keywords(
        self, node: dict[str, Any], allowed: set[str], pointer: str
    ) -> None:
        unknown = sorted(set(node) - allowed - ANNOTATIONS - {PYTHON_DEFAULT})
        if unknown:
            raise self.unsupported(
                f"unsupported keyword(s) {', '.join(unknown)}", pointer
            )


def build_revision(schema: LoadedSchema, definitions: dict[str, Any]) -> ir.Revision:
    """Build the IR of one revision from its (patched) definitions.

    Raises:
        UnsupportedSchemaError: a construct has no exact mapping.
        NameCollisionError: two schema names map to one Python name.
    """
    builder = Builder(schema, definitions)
    for name in sorted(definitions):
        builder.define(name, definitions[name], schema.pointer(name))
    decls = classify_unions(
        builder.decls, builder.pending_unions, schema.revision, builder.exclusive_unions
    )
    decls = mark_recursive(decls)
    methods = extract_methods(decls, definitions, schema)
    names = tuple(sorted(definitions))
    return ir.Revision(
        name=schema.revision,
        module=schema.pin.module,
        sha256=schema.sha256,
        dialect=schema.pin.dialect,
        era=schema.pin.era,
        decls=tuple(decls[name] for name in sorted(decls)),
        methods=methods,
        definition_names=names,
        meta_keys=meta_keys(decls, schema.revision),
        error_codes=error_codes(decls, names, schema.revision),
    )


def _is_struct(node: object) -> TypeGuard[dict[str, Any]]:
    """True for an object schema with properties (a struct, not a map)."""
    return (
        is_object(node)
        and bool(node.get("properties"))
        and node.get("type", "object") == "object"
    )


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _merge_objects(
    a: dict[str, Any],
    b: dict[str, Any],
    error: Callable[[str, str], UnsupportedSchemaError],
    pointer: str,
) -> dict[str, Any]:
    """The intersection of two object schemas, where one side refines the other."""
    merged = {
        **a,
        **{k: v for k, v in b.items() if k not in ("properties", "required")},
    }
    properties = dict(a.get("properties", {}))
    for name, schema in b.get("properties", {}).items():
        properties[name] = (
            _narrower(properties[name], schema, error, pointer)
            if name in properties
            else schema
        )
    merged["type"] = "object"
    merged["properties"] = properties
    merged["required"] = sorted(set(a.get("required", [])) | set(b.get("required", [])))
    return merged


def _narrower(
    a: Any, b: Any, error: Callable[[str, str], UnsupportedSchemaError], pointer: str
) -> Any:
    """Of two property schemas, the one that refines the other."""
    core_a = {k: v for k, v in a.items() if k not in ANNOTATIONS}
    core_b = {k: v for k, v in b.items() if k not in ANNOTATIONS}
    if core_a.items() <= core_b.items():
        return b
    if core_b.items() <= core_a.items():
        return a
    raise error(f"allOf parts disagree on a property: {core_a} vs {core_b}", pointer)


def mark_recursive(decls: dict[str, ir.Decl]) -> dict[str, ir.Decl]:
    """Flag aliases that reach themselves through other aliases (JSONValue & co)."""
    from .pytypes import references

    def alias_refs(name: str) -> set[str]:
        decl = decls[name]
        if isinstance(decl, ir.AliasDecl):
            return {
                r for r in references(decl.target) if isinstance(decls[r], ir.AliasDecl)
            }
        return set()

    result = dict(decls)
    for name, decl in decls.items():
        if not isinstance(decl, ir.AliasDecl):
            continue
        seen: set[str] = set()
        stack = list(alias_refs(name))
        while stack:
            current = stack.pop()
            if current == name:
                result[name] = msgspec.structs.replace(decl, recursive=True)
                break
            if current not in seen:
                seen.add(current)
                stack.extend(alias_refs(current))
    return result

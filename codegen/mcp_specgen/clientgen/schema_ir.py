"""Tool schemas -> the generator's IR.

Every tool's `inputSchema` and `outputSchema` become definitions of one
synthetic JSON Schema document (`<Tool>Params`, `<Tool>Result`, and each
schema's own `$defs` as `<Tool><Name>`), which goes through the same
pipeline as the protocol's schema (`revision_from_document`): the generated
Structs come from the same builder and templates.

Validation-only keywords that do not change a value's shape (`minLength`,
`pattern`, `exclusiveMinimum`...) are dropped: the server still enforces
them, and a Python type could not. A schema using `LOOSE` keywords is typed
loosely instead (`Any`; at the top the keywords are dropped), with a warning
from `loose_spots`. Anything else the builder cannot map is an error naming
the tool and the keyword.
"""

from __future__ import annotations

import copy
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_specgen.errors import CodegenError
from mcp_specgen.jsondata import is_array, is_object
from mcp_specgen.pipeline import revision_from_document

from .inspect import ClientGenError
from .names import NameClashWarning

if TYPE_CHECKING:
    from mcp_specgen import ir

    from .inspect import Listing

DIALECT = "https://json-schema.org/draft/2020-12/schema"

DROPPED = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "minLength",
        "maxLength",
        "pattern",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "contentEncoding",
        "contentMediaType",
    }
)
"""Keywords removed before building: annotations or assertions the server checks."""

LOOSE = frozenset({"patternProperties", "if", "then", "else", "prefixItems"})
"""Keywords with no Python shape: their schema becomes `Any` (the server
still validates)."""

_KEPT_WHEN_LOOSE = ("title", "description")

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
)


@dataclass(frozen=True)
class ToolTypes:
    """The declarations made for one tool (None: the tool has none)."""

    params: str | None
    result: str | None


@dataclass(frozen=True)
class ClientIR:
    """The IR of a server's tools and, per tool name, its declarations."""

    revision: ir.Revision
    tools: dict[str, ToolTypes]


def pascal(name: str) -> str:
    """`get-sum` -> `GetSum`; a leading digit gets a `T` in front."""
    parts = re.split(r"[^0-9a-zA-Z]+", name)
    text = "".join(part[:1].upper() + part[1:] for part in parts if part)
    if not text:
        return "Tool"
    return "T" + text if text[0].isdigit() else text


def clean(node: Any) -> Any:
    """A copy of a schema without the `DROPPED` keywords, at every depth."""
    if is_array(node):
        return [clean(item) for item in node]  # draft-07 tuple `items`
    if not is_object(node):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DROPPED:
            continue
        if key in _SCHEMA_MAPS and is_object(value):
            out[key] = {name: clean(schema) for name, schema in value.items()}
        elif key in _SCHEMA_LISTS and is_array(value):
            out[key] = [clean(schema) for schema in value]
        elif key in _SCHEMA_VALUES:
            out[key] = clean(value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def loosen(node: Any, found: list[tuple[str, list[str]]], at: str = "") -> Any:
    """A copy of a schema where each subschema using a `LOOSE` keyword is
    `Any` (only those keywords dropped at the top); each spot is appended to
    `found` as (JSON pointer, keywords)."""
    if is_array(node):
        return [loosen(item, found, f"{at}/{i}") for i, item in enumerate(node)]
    if not is_object(node):
        return node
    odd = sorted(set(node) & LOOSE)
    if odd:
        found.append((at or "/", odd))
        if at:
            return {k: v for k, v in node.items() if k in _KEPT_WHEN_LOOSE}
        node = {k: v for k, v in node.items() if k not in LOOSE}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and is_object(value):
            out[key] = {
                name: loosen(schema, found, f"{at}/{key}/{name}")
                for name, schema in value.items()
            }
        elif key in (*_SCHEMA_LISTS, *_SCHEMA_VALUES):
            out[key] = loosen(value, found, f"{at}/{key}")
        else:
            out[key] = value
    return out


def loose_spots(listing: Listing) -> list[str]:
    """One warning line per place a tool schema is typed loosely."""
    lines: list[str] = []
    for tool in sorted(listing.tools, key=lambda t: str(t.get("name", ""))):
        for part in ("inputSchema", "outputSchema"):
            found: list[tuple[str, list[str]]] = []
            loosen(tool.get(part, {}), found)
            lines += [
                f"tool {tool.get('name', '')!r} {part} at {at}: unsupported "
                f"keyword(s) {', '.join(odd)}, typed loosely (the server validates it)"
                for at, odd in found
            ]
    return lines


def _rename_refs(node: Any, root: str, names: dict[str, str]) -> Any:
    """Point `#`, `#/$defs/X` and `#/definitions/X` at the document's names."""
    if is_array(node):
        return [_rename_refs(item, root, names) for item in node]
    if not is_object(node):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = _target(value, root, names)
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value
        else:
            out[key] = _rename_refs(value, root, names)
    return out


def _target(ref: str, root: str, names: dict[str, str]) -> str:
    if ref == "#":
        return f"#/$defs/{root}"
    for prefix in ("#/$defs/", "#/definitions/"):
        name = ref.removeprefix(prefix)
        if ref.startswith(prefix) and name in names:
            return f"#/$defs/{names[name]}"
    return ref


class _Document:
    """The synthetic document under construction, and where each name came from."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}
        self.origin: dict[str, str] = {}
        """Definition name -> "tool 'x' inputSchema" (for error messages)."""

    def add_schema(self, tool: str, part: str, root: str, schema: Any) -> str | None:
        """Add one tool schema as `root` (None when it has no properties)."""
        schema = clean(loosen(schema, []))
        if not is_object(schema):
            raise ClientGenError(f"tool {tool!r} {part}: not a JSON object")
        nested: dict[str, Any] = {}
        for key in ("$defs", "definitions"):
            nested.update(schema.pop(key, None) or {})
        stem = pascal(tool)
        names = {name: self._free(stem + pascal(name), root) for name in nested}
        for name, body in nested.items():
            self._put(names[name], _rename_refs(body, root, names), tool, part)
        if not schema.get("properties") and "$ref" not in schema:
            if schema.get("type", "object") != "object" or not _plain_object(schema):
                raise ClientGenError(
                    f"tool {tool!r} {part}: a schema without properties is "
                    f"supported only as a plain object schema, not {schema!r}"
                )
            return None
        if "description" not in schema:
            what = "arguments" if part == "inputSchema" else "structured result"
            schema["description"] = f"The {what} of the tool `{tool}`."
        self._put(root, _rename_refs(schema, root, names), tool, part)
        return root

    def _free(self, name: str, root: str) -> str:
        """`name`, or with `Def` appended while taken or equal to the root."""
        while name in self.defs or name == root:
            name += "Def"
        return name

    def _put(self, name: str, body: Any, tool: str, part: str) -> None:
        if name in self.defs:
            raise ClientGenError(
                f"tool {tool!r} {part}: the type name {name!r} is also wanted by "
                f"{self.origin[name]}"
            )
        self.defs[name] = body
        self.origin[name] = f"tool {tool!r} {part}"


def _plain_object(schema: dict[str, Any]) -> bool:
    """An object schema that names no property: a tool without parameters
    (closed), or whose parameters are not described (open)."""
    extra = schema.get("additionalProperties", True)
    keys = {"type", "properties", "required", "title", "description"}
    return (
        extra in (True, {}, False)
        and not schema.get("required")
        and not set(schema) - keys - {"additionalProperties"}
    )


def build_client_ir(listing: Listing) -> ClientIR:
    """The IR of every tool's parameters and structured result.

    Raises:
        ClientGenError: a schema the generator cannot take, naming the tool,
            the place in its schema and the keyword.
    """
    document = _Document()
    tools: dict[str, ToolTypes] = {}
    stems: dict[str, str] = {}
    for tool in sorted(listing.tools, key=lambda t: str(t.get("name", ""))):
        name = str(tool.get("name", ""))
        stem = _free_stem(pascal(name), name, stems)
        params = document.add_schema(
            name, "inputSchema", stem + "Params", tool.get("inputSchema", {})
        )
        result = None
        if "outputSchema" in tool:
            result = document.add_schema(
                name, "outputSchema", stem + "Result", tool["outputSchema"]
            )
            if result is None:
                raise ClientGenError(
                    f"tool {name!r} outputSchema: names no property, so it "
                    "cannot be a typed result"
                )
        tools[name] = ToolTypes(params=params, result=result)
    body = {"$schema": DIALECT, "$defs": document.defs}
    try:
        revision = revision_from_document(body, name=listing.revision or "server")
    except CodegenError as exc:
        raise ClientGenError(_located(exc, document.origin)) from exc
    return ClientIR(revision=revision, tools=tools)


def _free_stem(wanted: str, tool: str, stems: dict[str, str]) -> str:
    """`wanted`, or numbered (`ListItems2`) when an earlier tool took it."""
    stem, number = wanted, 2
    while stem in stems:
        stem = f"{wanted}{number}"
        number += 1
    if stem != wanted:
        warnings.warn(
            f"tool {tool!r} and tool {stems[wanted]!r} both want the type names "
            f"{wanted}*: tool {tool!r} gets {stem}*",
            NameClashWarning,
            stacklevel=2,
        )
    stems[stem] = tool
    return stem


def _located(exc: CodegenError, origin: dict[str, str]) -> str:
    """The error's message with its pointer told as a tool and a place."""
    pointer = exc.pointer.removeprefix("#/$defs/")
    name, _, rest = pointer.partition("/")
    where = origin.get(name)
    if where is None:
        return exc.message
    place = f" at /{rest}" if rest else ""
    return f"{where}{place}: {exc.message}"

"""Tool schemas -> IR: names, dropped keywords, nested definitions, errors."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_specgen import ir
from mcp_specgen.clientgen.inspect import ClientGenError, Listing
from mcp_specgen.clientgen.names import NameClashWarning
from mcp_specgen.clientgen.schema_ir import (
    build_client_ir,
    clean,
    loose_spots,
    pascal,
)


def listing(*tools: dict[str, Any]) -> Listing:
    return Listing("s", "1", "2025-11-25", tools=list(tools))


def struct(rev: ir.Revision, name: str) -> ir.StructDecl:
    decl = rev.decl(name)
    assert isinstance(decl, ir.StructDecl)
    return decl


def test_names() -> None:
    assert pascal("get-sum") == "GetSum"
    assert pascal("3d_render") == "T3dRender"
    assert pascal("--") == "Tool"


def test_params_and_result_become_structs() -> None:
    built = build_client_ir(
        listing(
            {
                "name": "get-sum",
                "inputSchema": {
                    "type": "object",
                    "properties": {"a": {"type": "number", "minLength": 1}},
                    "required": ["a"],
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "additionalProperties": False,
                },
            },
            {"name": "ping", "inputSchema": {"type": "object"}},
            {
                "name": "none",
                "inputSchema": {
                    "type": "object",
                    "properties": {},
                    "required": [],
                    "additionalProperties": False,
                },
            },
        )
    )
    assert built.tools["get-sum"].params == "GetSumParams"
    assert built.tools["get-sum"].result == "GetSumResult"
    assert built.tools["ping"].params is None
    assert built.tools["none"].params is None
    params = struct(built.revision, "GetSumParams")
    assert [(f.wire_name, f.required) for f in params.fields] == [("a", True)]
    assert params.description == "The arguments of the tool `get-sum`."
    assert not struct(built.revision, "GetSumResult").open


def test_nested_definitions_are_prefixed_and_references_follow() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"where": {"$ref": "#/definitions/Place"}},
        "definitions": {
            "Place": {"type": "object", "properties": {"city": {"type": "string"}}}
        },
    }
    built = build_client_ir(listing({"name": "go", "inputSchema": schema}))
    (where,) = struct(built.revision, "GoParams").fields
    assert where.type == ir.Ref(name="GoPlace")
    assert struct(built.revision, "GoPlace").fields[0].wire_name == "city"


def test_clean_keeps_values_that_look_like_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "pattern": "x+"}},
        "enum": [{"pattern": 1}],
    }
    assert clean(schema) == {
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "enum": [{"pattern": 1}],
    }


def test_an_unsupported_keyword_names_the_tool_and_the_place() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "not": {"const": 3}}},
    }
    with pytest.raises(ClientGenError) as caught:
        build_client_ir(listing({"name": "pick", "inputSchema": schema}))
    message = str(caught.value)
    assert "tool 'pick' inputSchema at /properties/n" in message
    assert "not" in message


def test_an_output_schema_without_properties_is_refused() -> None:
    tool = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
    }
    with pytest.raises(ClientGenError, match="tool 't' outputSchema"):
        build_client_ir(listing(tool))


def test_an_input_schema_of_another_kind_is_refused() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "required": ["x"]}}
    with pytest.raises(ClientGenError, match="tool 't' inputSchema"):
        build_client_ir(listing(tool))


LOOSE_CASES = [
    (
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        "patternProperties",
    ),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, "prefixItems"),
    (
        {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}},
        "if, then",
    ),
]


@pytest.mark.parametrize(("inner", "keywords"), LOOSE_CASES)
def test_a_property_with_an_unsupported_keyword_is_typed_loosely(
    inner: dict[str, Any], keywords: str
) -> None:
    schema = {
        "type": "object",
        "properties": {"odd": inner, "n": {"type": "integer"}},
        "required": ["n"],
    }
    tools = listing({"name": "pick", "inputSchema": schema}, {"name": "other"})
    built = build_client_ir(tools)
    fields = {f.wire_name: f for f in struct(built.revision, "PickParams").fields}
    assert fields["odd"].type == ir.Primitive(name="any")
    assert fields["n"].required
    assert loose_spots(tools) == [
        f"tool 'pick' inputSchema at /properties/odd: unsupported keyword(s) "
        f"{keywords}, typed loosely (the server validates it)"
    ]


def test_an_unsupported_keyword_at_the_top_loosens_the_parameters() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "if": {"required": ["a"]},
        "then": {"required": ["b"]},
    }
    tools = listing({"name": "t", "inputSchema": schema})
    built = build_client_ir(tools)
    assert built.tools["t"].params == "TParams"
    assert [f.wire_name for f in struct(built.revision, "TParams").fields] == ["a"]
    assert loose_spots(tools) == [
        "tool 't' inputSchema at /: unsupported keyword(s) if, then, "
        "typed loosely (the server validates it)"
    ]


def test_tools_whose_type_names_clash_get_numbered_in_wire_name_order() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tools = listing(
        {"name": "list_items", "inputSchema": schema},
        {"name": "list.items", "inputSchema": schema},
    )
    with pytest.warns(NameClashWarning, match="'list_items'.*ListItems2"):
        built = build_client_ir(tools)
    assert built.tools["list.items"].params == "ListItemsParams"
    assert built.tools["list_items"].params == "ListItems2Params"

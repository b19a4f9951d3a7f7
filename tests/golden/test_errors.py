"""Error tests: constructs the generator cannot map exactly are refused, loudly.

Every error is a `CodegenError` naming the revision and the JSON pointer of
the offending schema node, so the CLI can report all problems at once.
"""

from __future__ import annotations

from typing import Any

import pytest
from golden_support import document

from mcp_specgen.errors import (
    CodegenError,
    NameCollisionError,
    UnsupportedSchemaError,
)
from mcp_specgen.pipeline import revision_from_document

REVISION = "rev-errors"


def build(defs: dict[str, Any], *, definitions_key: str = "$defs") -> None:
    doc = document(defs)
    if definitions_key != "$defs":
        doc = {
            "$schema": "http://json-schema.org/draft-07/schema#",
            definitions_key: defs,
        }
    revision_from_document(doc, REVISION)


def an_object(prop: Any) -> dict[str, Any]:
    """An object definition whose property `x` has the schema `prop`."""
    return {"type": "object", "properties": {"x": prop}}


UNSUPPORTED = [
    pytest.param(
        {"A": {"type": "string", "pattern": "x"}},
        "#/$defs/A",
        "pattern",
        id="pattern",
    ),
    pytest.param(
        {"A": an_object({"type": "string", "pattern": "^[a-z]+$"})},
        "#/$defs/A/properties/x",
        "pattern",
        id="pattern-in-property",
    ),
    pytest.param(
        {"A": {"not": {"type": "string"}}},
        "#/$defs/A",
        "not",
        id="not",
    ),
    pytest.param(
        {"A": an_object({"if": {"type": "string"}, "then": {"minLength": 1}})},
        "#/$defs/A/properties/x",
        "if, then",
        id="if-then",
    ),
    pytest.param(
        {"A": an_object({"$ref": "https://example.com/other.json#/$defs/B"})},
        "#/$defs/A/properties/x",
        "only local references are supported",
        id="external-ref",
    ),
    pytest.param(
        {"A": an_object({"$ref": "#/$defs/Missing"})},
        "#/$defs/A/properties/x",
        "undefined type 'Missing'",
        id="undefined-ref",
    ),
    pytest.param(
        {"A": {"type": "object", "additionalProperties": False}},
        "#/$defs/A",
        "an object that accepts no property",
        id="closed-object-without-properties",
    ),
    pytest.param(
        {"A": an_object({"type": "object", "additionalProperties": False})},
        "#/$defs/A/properties/x",
        "an object that accepts no property",
        id="closed-object-without-properties-in-property",
    ),
    pytest.param(
        {
            "A": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "additionalProperties": {"type": "string"},
            }
        },
        "#/$defs/A",
        "typed additionalProperties beside properties",
        id="typed-additional-properties-beside-properties",
    ),
    pytest.param(
        {
            "A": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "required": ["y"],
            }
        },
        "#/$defs/A",
        "required property 'y' is not defined",
        id="required-but-undefined",
    ),
    pytest.param(
        {"A": an_object(False)},
        "#/$defs/A/properties/x",
        "accepts nothing",
        id="false-schema",
    ),
    pytest.param(
        {"A": an_object({"type": "string", "minLength": 1})},
        "#/$defs/A/properties/x",
        "minLength",
        id="minLength",
    ),
    pytest.param(
        {"A": an_object({"type": "number", "exclusiveMinimum": 0})},
        "#/$defs/A/properties/x",
        "exclusiveMinimum",
        id="exclusiveMinimum",
    ),
    pytest.param(
        {"A": an_object({"type": "integer", "multipleOf": 2})},
        "#/$defs/A/properties/x",
        "multipleOf",
        id="multipleOf",
    ),
    pytest.param(
        {"A": {"type": "object", "patternProperties": {"^x": {}}}},
        "#/$defs/A",
        "patternProperties",
        id="patternProperties",
    ),
    pytest.param(
        {"A": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
        "#/$defs/A",
        "uniqueItems",
        id="uniqueItems",
    ),
    pytest.param(
        {"A": {"type": "array", "prefixItems": [{"type": "string"}]}},
        "#/$defs/A",
        "prefixItems",
        id="prefixItems",
    ),
    pytest.param(
        {
            "A": an_object({"$ref": "#/$defs/B", "description": "ok", "minimum": 1}),
            "B": {"type": "integer"},
        },
        "#/$defs/A/properties/x",
        "minimum",
        id="ref-with-sibling-constraint",
    ),
    pytest.param(
        {
            "B": {"type": "object", "properties": {"x": {"type": "string"}}},
            "A": {
                "allOf": [
                    {"$ref": "#/$defs/B"},
                    {"properties": {"x": {"type": "integer"}}},
                ]
            },
        },
        "#/$defs/A/allOf/1",
        "allOf parts disagree on a property",
        id="allOf-parts-disagree",
    ),
    pytest.param(
        {"A": {"allOf": [{"type": "string"}]}},
        "#/$defs/A/allOf/0",
        "allOf of something other than objects",
        id="allOf-of-non-object",
    ),
    pytest.param(
        {"A": an_object({"type": "object", "unevaluatedProperties": False})},
        "#/$defs/A/properties/x",
        "unevaluatedProperties",
        id="unevaluatedProperties",
    ),
]


@pytest.mark.parametrize(("defs", "pointer", "words"), UNSUPPORTED)
def test_unsupported_construct(defs: dict[str, Any], pointer: str, words: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        build(defs)
    error = info.value
    assert error.pointer == pointer
    assert error.revision == REVISION
    assert words in error.message
    # the text names both, for the CLI's report
    assert str(error).startswith(f"{REVISION}, {pointer}: ")


def test_unsupported_in_draft07_names_definitions_pointer() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        build(
            {"A": an_object({"type": "string", "pattern": "x"})},
            definitions_key="definitions",
        )
    assert info.value.pointer == "#/definitions/A/properties/x"


def test_draft07_reference_must_use_definitions() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        build(
            {"A": an_object({"$ref": "#/$defs/B"}), "B": {"type": "string"}},
            definitions_key="definitions",
        )
    assert info.value.pointer == "#/definitions/A/properties/x"
    assert "only local references" in info.value.message


def test_nested_pointer_is_escaped() -> None:
    defs = {
        "A": {
            "type": "object",
            "properties": {
                "io.example/deep~x": {
                    "type": "object",
                    "properties": {"inner": {"not": {}}},
                }
            },
        }
    }
    with pytest.raises(UnsupportedSchemaError) as info:
        build(defs)
    assert (
        info.value.pointer
        == "#/$defs/A/properties/io.example~1deep~0x/properties/inner"
    )


def test_union_classification_error_names_pointer() -> None:
    defs = {
        "A": {
            "anyOf": [
                {"enum": ["a", 1]},
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {"type": "string"}}},
            ]
        }
    }
    with pytest.raises(UnsupportedSchemaError) as info:
        build(defs)
    assert info.value.pointer.startswith("#/$defs/A")


@pytest.mark.parametrize(
    "prop",
    [
        pytest.param({"const": 1.5}, id="float-const"),
        pytest.param({"enum": [0.5, 1.5]}, id="float-enum"),
        pytest.param({"const": {"a": 1}}, id="object-const"),
        pytest.param({"const": [1]}, id="array-const"),
    ],
)
def test_const_without_literal_form_is_unsupported(prop: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        build({"A": an_object(prop)})
    assert info.value.pointer == "#/$defs/A/properties/x"


# --- name collisions ------------------------------------------------------------


def test_definition_and_inline_object_collide() -> None:
    defs = {
        "FooBar": {"type": "object", "properties": {"a": {"type": "string"}}},
        "Foo": {
            "type": "object",
            "properties": {
                "bar": {"type": "object", "properties": {"b": {"type": "string"}}}
            },
        },
    }
    with pytest.raises(NameCollisionError) as info:
        build(defs)
    error = info.value
    assert error.pointer == "#/$defs/Foo/properties/bar"
    assert error.revision == REVISION
    assert "'FooBar'" in error.message
    assert isinstance(error, CodegenError)


def test_definition_and_inline_union_collide() -> None:
    defs = {
        "FooBar": {"type": "string"},
        "Foo": {
            "type": "object",
            "properties": {"bar": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        },
    }
    with pytest.raises(NameCollisionError) as info:
        build(defs)
    assert info.value.pointer == "#/$defs/Foo/properties/bar"


def test_two_inline_objects_collide() -> None:
    # A.bC and AB.c both want the name `ABC`; the second one met is reported.
    defs = {
        "A": {
            "type": "object",
            "properties": {"bC": {"type": "object", "properties": {"q": {}}}},
        },
        "AB": {
            "type": "object",
            "properties": {"c": {"type": "object", "properties": {"q": {}}}},
        },
    }
    with pytest.raises(NameCollisionError) as info:
        build(defs)
    assert info.value.pointer == "#/$defs/AB/properties/c"
    assert "'ABC'" in info.value.message


def test_two_properties_collide() -> None:
    defs = {
        "A": {
            "type": "object",
            "properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}},
        }
    }
    with pytest.raises(NameCollisionError) as info:
        build(defs)
    assert info.value.pointer == "#/$defs/A/properties/foo_bar"
    assert "'fooBar'" in info.value.message
    assert "'foo_bar'" in info.value.message


def test_inline_map_or_array_needs_no_name() -> None:
    # Only structs and unions get names: an inline map called like a
    # definition is not a collision.
    build(
        {
            "FooBar": {"type": "string"},
            "Foo": {
                "type": "object",
                "properties": {
                    "bar": {"type": "object", "additionalProperties": {}},
                    "baz": {"type": "array", "items": {"type": "string"}},
                },
            },
            "FooBaz": {"type": "integer"},
        }
    )

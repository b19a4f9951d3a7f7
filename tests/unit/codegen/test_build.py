"""Schema -> IR on tiny inline schemas."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_specgen import ir
from mcp_specgen.errors import NameCollisionError, UnsupportedSchemaError
from mcp_specgen.pipeline import revision_from_document

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def build(defs: dict[str, Any]) -> ir.Revision:
    return revision_from_document({"$schema": DIALECT, "$defs": defs})


def test_object_becomes_struct_with_fields() -> None:
    rev = build(
        {
            "Thing": {
                "type": "object",
                "description": "A thing.",
                "properties": {
                    "_meta": {"type": "object", "additionalProperties": {}},
                    "count": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "How many.",
                    },
                    "ratio": {"type": "number"},
                },
                "required": ["count"],
            }
        }
    )
    assert rev.decl("Thing") == ir.StructDecl(
        name="Thing",
        pointer="#/$defs/Thing",
        description="A thing.",
        fields=(
            ir.Field(
                wire_name="_meta",
                py_name="meta",
                type=ir.MapOf(values=ir.Primitive(name="any")),
                required=False,
            ),
            ir.Field(
                wire_name="count",
                py_name="count",
                type=ir.Primitive(name="int", minimum=0),
                required=True,
                description="How many.",
            ),
            ir.Field(
                wire_name="ratio",
                py_name="ratio",
                type=ir.Primitive(name="number"),
                required=False,
            ),
        ),
    )


def test_additional_properties_false_closes_the_struct() -> None:
    rev = build(
        {
            "Closed": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": False,
            }
        }
    )
    decl = rev.decl("Closed")
    assert isinstance(decl, ir.StructDecl)
    assert decl.open is False


def test_inline_object_gets_owner_and_property_name() -> None:
    rev = build(
        {
            "Caps": {
                "type": "object",
                "properties": {
                    "roots": {
                        "type": "object",
                        "properties": {"listChanged": {"type": "boolean"}},
                    }
                },
            }
        }
    )
    assert isinstance(rev.decl("CapsRoots"), ir.StructDecl)
    caps = rev.decl("Caps")
    assert isinstance(caps, ir.StructDecl)
    assert caps.fields[0].type == ir.Ref(name="CapsRoots")


def _typed(name: str, tag: str, **extra_props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"type": {"type": "string", "const": tag}, **extra_props},
        "required": ["type"],
    }


def test_union_with_const_discriminator_is_tagged() -> None:
    rev = build(
        {
            "A": _typed("A", "a", x={"type": "string"}),
            "B": _typed("B", "b", y={"type": "string"}),
            "AB": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
        }
    )
    union = rev.decl("AB")
    assert isinstance(union, ir.UnionDecl)
    assert (union.strategy, union.tag_field) == ("tagged", "type")
    a = rev.decl("A")
    assert isinstance(a, ir.StructDecl)
    assert (a.tag_field, a.tag_value) == ("type", "a")
    assert [f.wire_name for f in a.fields] == ["x"]


def test_union_without_discriminator_is_structural_most_specific_first() -> None:
    rev = build(
        {
            "Loose": {
                "type": "object",
                "properties": {"uri": {"type": "string"}},
                "required": ["uri"],
            },
            "Text": {
                "type": "object",
                "properties": {"uri": {"type": "string"}, "text": {"type": "string"}},
                "required": ["uri", "text"],
            },
            "Either": {"anyOf": [{"$ref": "#/$defs/Loose"}, {"$ref": "#/$defs/Text"}]},
        }
    )
    union = rev.decl("Either")
    assert isinstance(union, ir.UnionDecl)
    assert union.strategy == "structural"
    assert union.members == (ir.Ref(name="Text"), ir.Ref(name="Loose"))


def test_scalar_union_stays_an_alias() -> None:
    rev = build({"Id": {"type": ["string", "integer"]}})
    assert rev.decl("Id") == ir.AliasDecl(
        name="Id",
        pointer="#/$defs/Id",
        target=ir.UnionOf(members=(ir.Primitive(name="str"), ir.Primitive(name="int"))),
    )


def test_recursive_aliases_are_flagged() -> None:
    rev = build(
        {
            "Value": {
                "anyOf": [
                    {"$ref": "#/$defs/Obj"},
                    {"type": "array", "items": {"$ref": "#/$defs/Value"}},
                    {"type": "string"},
                ]
            },
            "Obj": {
                "type": "object",
                "additionalProperties": {"$ref": "#/$defs/Value"},
            },
        }
    )
    for name in ("Value", "Obj"):
        decl = rev.decl(name)
        assert isinstance(decl, ir.AliasDecl)
        assert decl.recursive


def test_all_of_merges_and_refines() -> None:
    rev = build(
        {
            "Error": {
                "type": "object",
                "properties": {
                    "code": {"type": "integer"},
                    "message": {"type": "string"},
                },
                "required": ["code", "message"],
            },
            "Mismatch": {
                "type": "object",
                "properties": {
                    "error": {
                        "allOf": [
                            {"$ref": "#/$defs/Error"},
                            {
                                "type": "object",
                                "properties": {
                                    "code": {"type": "integer", "const": -32020}
                                },
                                "required": ["code"],
                            },
                        ]
                    }
                },
            },
        }
    )
    inner = rev.decl("MismatchError")
    assert isinstance(inner, ir.StructDecl)
    code = next(f for f in inner.fields if f.wire_name == "code")
    assert code.type == ir.LiteralType(values=(-32020,))
    assert code.required


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"X": {"type": "string", "pattern": "^a"}}, "#/$defs/X"),
        (
            {"X": {"type": "object", "properties": {"a": {"not": {"type": "string"}}}}},
            "#/$defs/X/properties/a",
        ),
        ({"X": {"$ref": "other.json#/Y"}}, "#/$defs/X"),
        (
            {
                "X": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "required": ["b"],
                }
            },
            "#/$defs/X",
        ),
    ],
)
def test_unsupported_constructs_name_the_pointer(
    schema: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(UnsupportedSchemaError) as caught:
        build(schema)
    assert caught.value.pointer == pointer
    assert caught.value.revision == "test"


def test_name_collision_is_an_error() -> None:
    with pytest.raises(NameCollisionError):
        build(
            {
                "FooBar": {"type": "string"},
                "Foo": {
                    "type": "object",
                    "properties": {
                        "bar": {
                            "type": "object",
                            "properties": {"x": {"type": "string"}},
                        }
                    },
                },
            }
        )


def test_property_names_colliding_in_python_is_an_error() -> None:
    with pytest.raises(NameCollisionError, match="both map to 'mime_type'"):
        build(
            {
                "X": {
                    "type": "object",
                    "properties": {
                        "mimeType": {"type": "string"},
                        "mime_type": {"type": "string"},
                    },
                }
            }
        )


def test_methods_come_from_role_unions() -> None:
    request = {
        "type": "object",
        "properties": {
            "jsonrpc": {"type": "string", "const": "2.0"},
            "id": {"type": "integer"},
            "method": {"type": "string", "const": "things/get"},
            "params": {"$ref": "#/$defs/GetThingRequestParams"},
        },
        "required": ["jsonrpc", "id", "method", "params"],
    }
    rev = build(
        {
            "GetThingRequest": request,
            "GetThingRequestParams": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
            },
            "GetThingResult": {
                "type": "object",
                "properties": {"thing": {"type": "string"}},
            },
            "ClientRequest": {"anyOf": [{"$ref": "#/$defs/GetThingRequest"}]},
        }
    )
    assert rev.methods == (
        ir.Method(
            name="things/get",
            py_name="things_get",
            direction="client_to_server",
            message="request",
            message_type="GetThingRequest",
            params_type="GetThingRequestParams",
            params_required=True,
            result_type="GetThingResult",
        ),
    )

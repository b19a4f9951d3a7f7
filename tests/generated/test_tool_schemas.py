"""A tool's parameters read the same way in every revision.

2026-07-28 (and the draft) let `Tool.inputSchema`/`outputSchema` carry any
JSON Schema keyword, so the schema names only `$schema` and `type`;
`schema/overrides/tool-schema-keywords.toml` types `properties` and `required`
as optional fields, as 2025-11-25 does. These tests pin that: the fields are typed (not
unknown keys) on the specification's examples, the wire stays exact, values
that are no JSON Schema are refused, and a Tool converted between 2025-11-25
and 2026-07-28 keeps them typed both ways. The real servers' listings are in
`tests/peers/test_client_interop.py`.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_specgen_runtime import decode, encode, extra
from mcp_specgen_runtime.codec.wire import UNSET, ValidationError
from mcp_specgen_types import (
    MODERN_VERSIONS,
    MODULES,
    v2025_11_25 as legacy,
    v2026_07_28 as modern,
)
from mcp_specgen_types.conversions import convert
from tests.conftest import SHARED_SCHEMAS

MODERN = {
    revision: importlib.import_module(MODULES[revision])
    for revision in sorted(MODERN_VERSIONS, key=list(MODULES).index)
}
"""Every stateless-era revision: each gets the typed `properties`/`required`."""
EXAMPLES = [
    (revision, path)
    for revision in MODERN
    for path in sorted((SHARED_SCHEMAS / revision / "examples" / "Tool").glob("*.json"))
]


def wire_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


@pytest.mark.parametrize(
    ("revision", "path"), EXAMPLES, ids=lambda v: v.stem if isinstance(v, Path) else v
)
def test_properties_and_required_are_typed_on_the_spec_examples(
    revision: str, path: Path
) -> None:
    package: ModuleType = MODERN[revision]
    wire = wire_of(path)
    tool = decode(path.read_bytes(), package.Tool)
    for key, schema in (
        ("inputSchema", tool.input_schema),
        ("outputSchema", tool.output_schema),
    ):
        sent = wire.get(key)
        if sent is None:
            assert schema is UNSET
            continue
        assert schema.properties == sent.get("properties", UNSET)
        assert schema.required == sent.get("required", UNSET)
        assert "properties" not in extra(schema)
        assert "required" not in extra(schema)
    assert json.loads(encode(tool)) == wire


def test_the_examples_do_exercise_both_keywords() -> None:
    """Guard: the parametrized test above must meet real values, not only UNSET."""
    seen = {
        (key, keyword)
        for _, path in EXAMPLES
        for key in ("inputSchema", "outputSchema")
        for keyword in ("properties", "required")
        if keyword in wire_of(path).get(key, {})
    }
    assert seen == {
        ("inputSchema", "properties"),
        ("inputSchema", "required"),
        ("outputSchema", "properties"),
        ("outputSchema", "required"),
    }


@pytest.mark.parametrize("package", list(MODERN.values()), ids=list(MODERN))
def test_a_parameter_list_reads_without_unknown_keys(package: ModuleType) -> None:
    raw = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "any": True},
        "required": ["city"],
        "additionalProperties": False,
    }
    schema = decode(json.dumps(raw), package.ToolInputSchema)
    assert schema.properties == {"city": {"type": "string"}, "any": True}
    assert schema.required == ["city"]
    assert extra(schema) == {"additionalProperties": False}
    assert json.loads(encode(schema)) == raw

    bare = decode(b'{"type": "object"}', package.ToolInputSchema)
    assert bare.properties is UNSET and bare.required is UNSET
    assert json.loads(encode(bare)) == {"type": "object"}


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "object", "properties": 5},
        {"type": "object", "properties": ["a"]},
        {"type": "object", "required": "a"},
        {"type": "object", "required": [1]},
    ],
)
def test_a_value_that_is_no_json_schema_keyword_is_refused(raw: Any) -> None:
    """The one place the override is stricter than the schema text (which took
    these as unknown keys): JSON Schema 2020-12 itself rejects them."""
    with pytest.raises(ValidationError):
        decode(json.dumps(raw), modern.ToolInputSchema)


def test_a_tool_converts_between_the_eras_with_both_keywords_typed() -> None:
    wire = {
        "name": "weather",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"celsius": {"type": "number"}},
            "required": ["celsius"],
        },
    }
    old = decode(json.dumps(wire), legacy.Tool)
    up = convert(old, "2026-07-28")
    # 2026 output schemas need not be objects, so `type` is not a field there.
    assert up.dropped == ()
    assert [d.path for d in up.unknown] == ["$.outputSchema.type"]
    assert isinstance(up.value, modern.Tool)
    assert up.value.input_schema.properties == {"city": {"type": "string"}}
    assert up.value.input_schema.required == ["city"]
    assert up.value.output_schema.properties == {"celsius": {"type": "number"}}
    assert up.value.output_schema.required == ["celsius"]
    assert json.loads(encode(up.value)) == wire

    down = convert(up.value, "2025-11-25")
    assert down.dropped == down.unknown == ()
    assert isinstance(down.value, legacy.Tool)
    assert down.value.input_schema.properties == {"city": {"type": "string"}}
    assert down.value.input_schema.required == ["city"]
    assert json.loads(encode(down.value)) == wire

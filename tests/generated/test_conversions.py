"""Cross-revision conversion on the specification examples, across every adjacent step.

Each 2026-07-28 example walks down one revision at a time while its type exists,
and back up. At every step: the result is valid against the target revision's
schema (jsonschema), and every piece of the source missing from the result was
reported as dropped (nothing is lost silently).
"""

from __future__ import annotations

import importlib
import itertools
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp_specgen_runtime import decode, encode, extra
from mcp_specgen_runtime.codec.conversion import ConversionError, Converted
from mcp_specgen_types import KNOWN_VERSIONS, MODULES
from mcp_specgen_types.conversions import DROPPED, convert
from tests.conftest import SCHEMA_DIR, SHARED_SCHEMAS

EXAMPLES = sorted((SHARED_SCHEMAS / "2026-07-28" / "examples").glob("*/*.json"))
DATED = [v for v in KNOWN_VERSIONS if v != "draft"]


@cache
def validator(revision: str, name: str) -> jsonschema.protocols.Validator | None:
    """The target's schema for `name`; None for an inline type (no definition)."""
    document = json.loads((SCHEMA_DIR / revision / "schema.json").read_text())
    key = "$defs" if "$defs" in document else "definitions"
    if name not in document[key]:
        return None
    schema = dict(document, **{"$ref": f"#/{key}/{name}"})
    return jsonschema.validators.validator_for(document)(schema)


def key_paths(value: Any, path: str = "$") -> set[str]:
    """Every object member and list item, as a JSON path."""
    found = {path}
    if isinstance(value, dict):
        for key, item in value.items():
            found |= key_paths(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found |= key_paths(item, f"{path}[{index}]")
    return found


def check_step(source: Any, result: Converted[Any], target: str) -> None:
    name = type(source).__name__
    out = json.loads(encode(result.value))
    schema = validator(target, name)
    if schema is not None:
        errors = [e.message for e in schema.iter_errors(out)]
        assert errors == [], f"{name} converted to {target} is invalid: {errors}"
    before = key_paths(json.loads(encode(source)))
    lost = before - key_paths(out)
    reported = [d.path for d in result.dropped]
    unreported = {
        p
        for p in lost
        if not any(p == r or p.startswith((r + ".", r + "[")) for r in reported)
    }
    # A list item dropped in the middle shifts later indices; compare by what was kept.
    unreported = {p for p in unreported if not _shifted(p, reported)}
    assert unreported == set(), f"{name} lost {sorted(unreported)} silently"


def _shifted(path: str, reported: list[str]) -> bool:
    return any(
        r.endswith("]") and path.startswith(r.rsplit("[", 1)[0] + "[") for r in reported
    )


def walk(value: Any, revisions: list[str]) -> list[tuple[str, Converted[Any]]]:
    steps = []
    for target in revisions:
        try:
            result = convert(value, target)
        except ConversionError:
            break
        check_step(value, result, target)
        steps.append((target, result))
        value = result.value
    return steps


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_walks_down_and_up_every_adjacent_step(example: Path) -> None:
    module = importlib.import_module(MODULES["2026-07-28"])
    value = decode(example.read_bytes(), getattr(module, example.parent.name))
    down = walk(value, list(reversed(DATED[:-1])))
    if down:
        lowest_value = down[-1][1].value
        lowest = DATED.index(down[-1][0])
        walk(lowest_value, DATED[lowest + 1 :])


def test_title_and_icons_are_kept_as_unknown_keys_for_2024_11_05() -> None:
    from mcp_specgen_types import v2025_11_25 as n

    tool = n.Tool(
        name="x",
        title="X",
        icons=[n.Icon(src="https://example.com/i.png")],
        input_schema=n.ToolInputSchema(type="object"),
    )
    result = convert(n.ListToolsResult(tools=[tool]), "2024-11-05")
    assert result.dropped == ()
    assert [d.path for d in result.unknown] == ["$.tools[0].title", "$.tools[0].icons"]
    assert result.unknown[0].reason == (
        "2025-03-26 -> 2024-11-05: Tool has no `title`; kept as an unknown key"
    )
    old_tool = result.value.tools[0]
    assert extra(old_tool) == {
        "title": "X",
        "icons": [{"src": "https://example.com/i.png"}],
    }
    assert json.loads(encode(result.value)) == {
        "tools": [
            {
                "name": "x",
                "inputSchema": {"type": "object"},
                "title": "X",
                "icons": [{"src": "https://example.com/i.png"}],
            }
        ]
    }


def test_a_tool_input_schema_keeps_its_keywords_across_the_eras() -> None:
    from mcp_specgen_types import v2025_11_25 as old, v2026_07_28 as new

    schema = {
        "type": "object",
        "properties": {"m": {"type": "string"}},
        "required": ["m"],
        "title": "t",
    }
    up = convert(decode(json.dumps(schema).encode(), old.ToolInputSchema), "2026-07-28")
    assert json.loads(encode(up.value)) == schema
    down = convert(
        decode(json.dumps(schema).encode(), new.ToolInputSchema), "2024-11-05"
    )
    assert json.loads(encode(down.value)) == schema
    assert up.dropped == down.dropped == ()


def test_result_type_between_2025_11_25_and_2026_07_28() -> None:
    from mcp_specgen_types import v2025_11_25 as old, v2026_07_28 as new

    up = convert(old.CallToolResult(content=[old.TextContent(text="a")]), "2026-07-28")
    assert up.dropped == ()
    assert up.value.result_type == "complete"
    down = convert(
        new.CallToolResult(content=[new.TextContent(text="a")]), "2025-11-25"
    )
    assert down.dropped == ()
    assert [(d.path, d.reason) for d in down.unknown] == [
        (
            "$.resultType",
            "2026-07-28 -> 2025-11-25: CallToolResult has no `resultType`"
            " (generated table); kept as an unknown key",
        )
    ]


def test_audio_content_is_dropped_for_2024_11_05() -> None:
    from mcp_specgen_types import v2025_03_26 as n

    result = convert(
        n.CallToolResult(
            content=[
                n.TextContent(text="a"),
                n.AudioContent(data="AA", mime_type="audio/wav"),
            ]
        ),
        "2024-11-05",
    )
    assert [d.path for d in result.dropped] == ["$.content[1]"]
    assert json.loads(encode(result.value)) == {
        "content": [{"type": "text", "text": "a"}]
    }


def test_a_type_the_target_lacks_is_an_error() -> None:
    from mcp_specgen_types import v2026_07_28 as new

    with pytest.raises(ConversionError, match="has no DiscoverResult"):
        convert(
            new.DiscoverResult(
                cache_scope="public",
                capabilities=new.ServerCapabilities(),
                supported_versions=["2026-07-28"],
                ttl_ms=0,
            ),
            "2025-11-25",
        )


def test_generated_table_lists_only_properties_the_target_lacks() -> None:
    assert set(DROPPED) == {
        pair for a, b in itertools.pairwise(KNOWN_VERSIONS) for pair in ((a, b), (b, a))
    }
    for (source, target), types in DROPPED.items():
        src = importlib.import_module(MODULES[source])
        dst = importlib.import_module(MODULES[target])
        for name, wires in types.items():
            assert wires <= set(getattr(src, name).__struct_encode_fields__) | {
                getattr(src, name).__struct_config__.tag_field
            }
            assert not wires & set(getattr(dst, name).__struct_encode_fields__)
    assert DROPPED[("2025-03-26", "2024-11-05")]["Tool"] == frozenset({"annotations"})


def test_fill_supplies_what_a_newer_revision_requires() -> None:
    legacy = importlib.import_module(MODULES["2025-11-25"])
    params = legacy.CallToolRequestParams(name="echo")
    with pytest.raises(ConversionError, match="_meta"):
        convert(params, "2026-07-28")
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    converted = convert(params, "2026-07-28", fill={"_meta": envelope})
    assert json.loads(encode(converted.value)) == {"_meta": envelope, "name": "echo"}
    result = legacy.ListToolsResult(tools=[])
    filled = convert(result, "2026-07-28", fill={"cacheScope": "private", "ttlMs": 0})
    assert (filled.value.cache_scope, filled.value.ttl_ms) == ("private", 0)


def test_fit_goes_straight_to_the_target_type() -> None:
    from mcp_specgen_runtime.codec.conversion import fit

    modern = importlib.import_module(MODULES["2026-07-28"])
    oldest = importlib.import_module(MODULES["2024-11-05"])
    value = modern.CallToolResult(
        content=[modern.TextContent(text="x")], structured_content={"a": 1}
    )
    fitted = fit(value, oldest.CallToolResult, label="test")
    assert isinstance(fitted.value, oldest.CallToolResult)
    assert fitted.dropped == ()
    assert {d.path for d in fitted.unknown} == {"$.structuredContent", "$.resultType"}


def test_fit_without_unknown_keys_drops_them_but_meta() -> None:
    from mcp_specgen_runtime.codec.conversion import fit

    oldest = importlib.import_module(MODULES["2024-11-05"])
    params = {"progressToken": 1, "progress": 1, "message": "m", "_meta": {"k": 1}}
    fitted = fit(
        params, oldest.ProgressNotificationParams, label="test", keep_unknown=False
    )
    assert json.loads(encode(fitted.value)) == {
        "progressToken": 1,
        "progress": 1,
        "_meta": {"k": 1},
    }
    assert [d.path for d in fitted.dropped] == ["$.message"]
    assert [d.path for d in fitted.unknown] == ["$._meta"]

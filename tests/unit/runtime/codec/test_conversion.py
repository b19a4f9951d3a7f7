"""The fast path of `fit` and `convert_across`: a value whose every key the
target names goes through msgspec in one call, with the same result, drops and
unknown keys as the walk; anything else still takes the walk and is reported.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import msgspec
import pytest

from mcp_specgen_runtime import decode, encode, extra
from mcp_specgen_runtime.codec import conversion
from mcp_specgen_runtime.codec.conversion import ConversionError, Converted, fit
from mcp_specgen_types import (
    KNOWN_VERSIONS,
    MODULES,
    v2024_11_05 as v1105,
    v2025_06_18 as v0618,
    v2025_11_25 as v1125,
    v2026_07_28 as v0728,
)
from mcp_specgen_types.conversions import convert
from tests.conftest import SHARED_SCHEMAS

EXAMPLES = sorted((SHARED_SCHEMAS / "2026-07-28" / "examples").glob("*/*.json"))
DATED = [v for v in KNOWN_VERSIONS if v != "draft"]


@pytest.fixture
def no_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the walk fail loudly: only the fast path may answer."""

    def refuse(*_args: Any) -> Any:
        raise AssertionError("walked")

    for step in ("struct", "items", "mapping", "union"):
        monkeypatch.setattr(conversion._Fitter, step, refuse)


def _outcome(converted: Converted[Any]) -> tuple[type, Any, list[Any], list[Any]]:
    return (
        type(converted.value),
        json.loads(encode(converted.value)),
        [(d.path, d.reason) for d in converted.dropped],
        [(d.path, d.reason) for d in converted.unknown],
    )


def test_a_text_call_result_takes_the_fast_path(no_walk: None) -> None:
    source = v1125.CallToolResult(content=[v1125.TextContent(text="hi")])
    fitted = fit(source, v0618.CallToolResult, label="test")
    assert type(fitted.value) is v0618.CallToolResult
    assert type(fitted.value.content[0]) is v0618.TextContent
    assert fitted.value.content[0].text == "hi"
    assert fitted.dropped == fitted.unknown == ()
    assert encode(fitted.value) == encode(source)


def test_a_plain_tools_list_takes_the_fast_path(no_walk: None) -> None:
    schema = v1125.ToolInputSchema(
        type="object", properties={"m": {"type": "string"}}, required=["m"]
    )
    tools = [
        v1125.Tool(name=f"t{i}", description="d", input_schema=schema) for i in range(3)
    ]
    source = v1125.ListToolsResult(tools=tools)
    fitted = fit(source, v0618.ListToolsResult, label="test")
    assert all(type(tool) is v0618.Tool for tool in fitted.value.tools)
    assert json.loads(encode(fitted.value)) == json.loads(encode(source))
    assert fitted.dropped == fitted.unknown == ()


def test_only_the_part_that_holds_an_unknown_key_is_walked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[type] = []
    struct = conversion._Fitter.struct

    def spy(self: Any, obj: dict[str, Any], tp: type, path: str) -> Any:
        walked.append(tp)
        return struct(self, obj, tp, path)

    monkeypatch.setattr(conversion._Fitter, "struct", spy)
    schema = decode(
        b'{"type":"object","additionalProperties":false}', v1125.ToolInputSchema
    )
    notes = v1125.ToolAnnotations(read_only_hint=True)
    tools = [
        v1125.Tool(name=f"t{i}", input_schema=schema, annotations=notes)
        for i in range(3)
    ]
    fitted = fit(v1125.ListToolsResult(tools=tools), v0618.ListToolsResult, label="t")
    assert walked.count(v0618.ToolInputSchema) == 3
    assert v0618.ToolAnnotations not in walked  # taken whole, beside the walk
    assert fitted.value.tools[2].annotations == v0618.ToolAnnotations(
        read_only_hint=True
    )
    assert [d.path for d in fitted.unknown] == [
        f"$.tools[{i}].inputSchema.additionalProperties" for i in range(3)
    ]
    assert all(type(tool) is v0618.Tool for tool in fitted.value.tools)


def test_a_key_the_target_lacks_is_kept_and_reported() -> None:
    tool = v1125.Tool(
        name="x",
        icons=[v1125.Icon(src="https://example.com/i.png")],
        input_schema=v1125.ToolInputSchema(type="object"),
    )
    fitted = fit(v1125.ListToolsResult(tools=[tool]), v0618.ListToolsResult, label="t")
    assert [d.path for d in fitted.unknown] == ["$.tools[0].icons"]
    assert extra(fitted.value.tools[0]) == {
        "icons": [{"src": "https://example.com/i.png"}]
    }
    assert fitted.dropped == ()


def test_what_the_target_cannot_hold_is_dropped_and_reported() -> None:
    source = v0618.CallToolResult(
        content=[
            v0618.TextContent(text="a"),
            v0618.AudioContent(data="AA", mime_type="audio/wav"),
        ]
    )
    fitted = fit(source, v1105.CallToolResult, label="t")
    assert [d.path for d in fitted.dropped] == ["$.content[1]"]
    assert json.loads(encode(fitted.value)) == {
        "content": [{"type": "text", "text": "a"}]
    }


def test_unknown_keys_of_the_source_are_carried_and_reported() -> None:
    raw = b'{"content":[{"type":"text","text":"a","future":1}],"later":true}'
    source = decode(raw, v1125.CallToolResult)
    fitted = fit(source, v0618.CallToolResult, label="t")
    assert json.loads(encode(fitted.value)) == json.loads(raw)
    assert {d.path for d in fitted.unknown} == {"$.later", "$.content[0].future"}


def test_a_missing_required_property_is_still_filled() -> None:
    fill = {"cacheScope": "private", "ttlMs": 0, "resultType": "complete"}
    fitted = fit(
        v1125.ListToolsResult(tools=[]), v0728.ListToolsResult, label="t", fill=fill
    )
    assert (fitted.value.cache_scope, fitted.value.ttl_ms) == ("private", 0)
    with pytest.raises(ConversionError, match="ListToolsResult cannot be expressed"):
        fit(v1125.ListToolsResult(tools=[]), v0728.ListToolsResult, label="t")


def _examples() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for path in EXAMPLES:
        name = path.parent.name
        modern_type = getattr(v0728, name, None)
        if modern_type is None:
            continue
        try:
            found.append((name, decode(path.read_bytes(), modern_type)))
        except msgspec.ValidationError:
            continue
    return found


def _fit_everywhere(
    values: list[tuple[str, Any]], list_unknown: bool = True
) -> list[Any]:
    outcomes: list[Any] = []
    for name, value in values:
        for revision in DATED:
            target = getattr(importlib.import_module(MODULES[revision]), name, None)
            if target is None:
                continue
            try:
                fitted = fit(value, target, label="t", list_unknown=list_unknown)
                outcomes.append(_outcome(fitted))
            except ConversionError as exc:
                outcomes.append(str(exc))
    return outcomes


def test_the_fast_path_answers_as_the_walk_does_on_every_example(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = _examples()
    assert len(values) > 50
    fast = _fit_everywhere(values)
    monkeypatch.setattr(conversion, "_exactly", lambda _obj, _tp: conversion._MISS)
    assert fast == _fit_everywhere(values)


def test_convert_across_takes_it_at_every_step(no_walk: None) -> None:
    source = v1125.CallToolResult(content=[v1125.TextContent(text="a")])
    down = convert(source, "2024-11-05")
    assert type(down.value) is v1105.CallToolResult
    assert down.value.content[0].text == "a"
    assert down.dropped == down.unknown == ()


def test_unlisted_unknown_keys_are_kept_in_one_pass(no_walk: None) -> None:
    schema = decode(
        b'{"type":"object","additionalProperties":false}', v1125.ToolInputSchema
    )
    source = v1125.ListToolsResult(tools=[v1125.Tool(name="t", input_schema=schema)])
    fitted = fit(source, v0618.ListToolsResult, label="t", list_unknown=False)
    assert extra(fitted.value.tools[0].input_schema) == {"additionalProperties": False}
    assert type(fitted.value.tools[0].input_schema) is v0618.ToolInputSchema
    assert fitted.dropped == fitted.unknown == ()


def test_unlisted_unknown_keys_still_report_drops() -> None:
    source = v0618.CallToolResult(
        content=[
            v0618.TextContent(text="a"),
            v0618.AudioContent(data="AA", mime_type="audio/wav"),
        ]
    )
    fitted = fit(source, v1105.CallToolResult, label="t", list_unknown=False)
    assert [d.path for d in fitted.dropped] == ["$.content[1]"]


def test_unlisted_unknown_keys_answer_as_the_walk_does_on_every_example(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = _examples()
    fast = _fit_everywhere(values, list_unknown=False)
    monkeypatch.setattr(conversion, "_exactly", lambda _obj, _tp: conversion._MISS)
    monkeypatch.setattr(conversion, "_keeping_unknown", lambda _o, _t: conversion._MISS)
    walked = [
        outcome if isinstance(outcome, str) else (*outcome[:3], [])
        for outcome in _fit_everywhere(values)
    ]
    assert [
        outcome if isinstance(outcome, str) else (*outcome[:3], []) for outcome in fast
    ] == walked

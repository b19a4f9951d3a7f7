"""The wire codec on messages with many unknown keys (the one-pass slow path)."""

from __future__ import annotations

import gc
import json
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import pytest

from mcp_specgen_runtime import (
    UNSET,
    OpenStruct,
    UnsetType,
    convert,
    decode,
    encode,
    extra,
    structural_union,
    to_builtins,
    with_extra,
)
from mcp_specgen_runtime.codec import wire
from mcp_specgen_types import v2025_11_25 as rev
from tests.unit.runtime.codec.wire_support import (
    BlobContents,
    Image,
    Strict,
    Text,
    TextContents,
)

if TYPE_CHECKING:
    Contents = TextContents | BlobContents
else:
    Contents = structural_union("Contents", __name__, "TextContents", "BlobContents")


class Page(OpenStruct, kw_only=True):
    items: list[Text | Image]
    contents: list[Contents] | UnsetType = UNSET
    strict: Strict | UnsetType = UNSET
    by_name: dict[str, Text] | UnsetType = UNSET
    data: Any = UNSET


class Checked(OpenStruct, kw_only=True):
    """A type with `__post_init__`: `encode` must not make copies of it."""

    item: Text
    made: ClassVar[int] = 0

    def __post_init__(self) -> None:
        type(self).made += 1


class A(OpenStruct, kw_only=True):
    x: int


class B(OpenStruct, kw_only=True):
    x: int


def tools_result(count: int, extra_key: bool) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    for index in range(count):
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        }
        if extra_key:
            schema["additionalProperties"] = False
        tools.append({"name": f"t{index}", "inputSchema": schema})
    return {"tools": tools}


def test_every_tool_keeps_its_unknown_keys() -> None:
    raw = tools_result(50, extra_key=True)
    values: list[rev.ListToolsResult] = [
        convert(raw, rev.ListToolsResult),
        decode(json.dumps(raw), rev.ListToolsResult),
    ]
    for value in values:
        assert all(
            extra(tool.input_schema) == {"additionalProperties": False}
            for tool in value.tools
        )
        assert all(extra(tool) == {} for tool in value.tools)
        assert json.loads(encode(value)) == raw
        assert to_builtins(value) == raw


def test_unknown_keys_at_every_level_of_a_list_round_trip() -> None:
    raw: dict[str, Any] = {
        "items": [
            (
                {"type": "text", "text": str(index), f"x-{index}": [index, {"y": None}]}
                if index % 2
                else {"type": "image", "data": "AA", "z": index}
            )
            for index in range(20)
        ],
        "by_name": {"a": {"type": "text", "text": "a", "w": 1}},
        "top": True,
    }
    value: Page = decode(json.dumps(raw), Page)
    assert [extra(item) for item in value.items] == [
        {f"x-{i}": [i, {"y": None}]} if i % 2 else {"z": i} for i in range(20)
    ]
    assert isinstance(value.by_name, dict)
    assert extra(value.by_name["a"]) == {"w": 1}
    assert extra(value) == {"top": True}
    assert json.loads(encode(value)) == raw
    assert to_builtins(value) == raw
    assert convert(raw, Page) == value


def test_unknown_keys_keep_their_order() -> None:
    raw = {"type": "text", "text": "a", "z": 1, "a": 2, "m": 3}
    value: Text = decode(json.dumps(raw), Text)
    assert list(json.loads(encode(value))) == ["type", "text", "z", "a", "m"]


def test_a_struct_in_a_typed_place_under_a_list_is_written_with_its_keys() -> None:
    # The page itself has no unknown keys: only a Struct inside its list does.
    inner = Text(text="b")
    with_extra(inner, {"vendor": 1})
    page = Page(items=[Text(text="a"), inner])
    assert extra(page) == {}
    written = {
        "items": [
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b", "vendor": 1},
        ]
    }
    assert json.loads(encode(page)) == written
    assert to_builtins(page) == written
    # The value given is left as it was.
    assert page.items[1] is inner


def test_a_struct_with_post_init_is_written_as_a_dict() -> None:
    inner = Text(text="a")
    with_extra(inner, {"vendor": 1})
    checked = Checked(item=inner)
    made = Checked.made
    assert json.loads(encode(checked)) == {
        "item": {"type": "text", "text": "a", "vendor": 1}
    }
    assert Checked.made == made


def test_structs_in_untyped_containers_are_searched() -> None:
    text = with_extra(Text(text="a"), {"vendor": 1})
    assert json.loads(encode({"result": [text]})) == {
        "result": [{"type": "text", "text": "a", "vendor": 1}]
    }


def test_values_of_any_type_are_written_as_they_are() -> None:
    raw: dict[str, Any] = {
        "items": [{"type": "text", "text": "a", "u": 1}],
        "data": {"k": [{}]},
    }
    value: Page = convert(raw, Page)
    assert value.data == {"k": [{}]}
    assert json.loads(encode(value)) == raw


def test_structural_unions_keep_unknown_keys_inside_lists() -> None:
    raw = {
        "items": [],
        "contents": [
            {"uri": "u", "blob": "AA", "b": 1},
            {"uri": "u", "text": "t", "t": 2},
        ],
    }
    value: Page = decode(json.dumps(raw), Page)
    assert isinstance(value.contents, list)
    assert [type(c).__name__ for c in value.contents] == [
        "BlobContents",
        "TextContents",
    ]
    assert [extra(c) for c in value.contents] == [{"b": 1}, {"t": 2}]
    assert json.loads(encode(value)) == raw


@pytest.mark.parametrize("decoding", [True, False])
def test_an_invalid_item_after_items_with_unknown_keys_is_located(
    decoding: bool,
) -> None:
    items: list[Any] = [
        {"type": "text", "text": str(index), "x": index} for index in range(5)
    ]
    items.append({"type": "text", "text": 5, "x": 5})
    raw = {"items": items}
    with pytest.raises(msgspec.ValidationError) as caught:
        if decoding:
            decode(json.dumps(raw), Page)
        else:
            convert(raw, Page)
    assert str(caught.value) == "Expected `str`, got `int` - at `$.items[5].text`"


def test_a_closed_struct_with_unknown_keys_after_open_ones_is_located() -> None:
    raw = {
        "items": [{"type": "text", "text": "a", "x": 1}],
        "strict": {"a": 1, "b": 2},
    }
    with pytest.raises(msgspec.ValidationError) as caught:
        convert(raw, Page)
    assert str(caught.value) == "Object contains unknown field `b` - at `$.strict`"


def test_an_unknown_tag_after_items_with_unknown_keys_is_located() -> None:
    raw = {"items": [{"type": "text", "text": "a", "x": 1}, {"type": "video"}]}
    with pytest.raises(msgspec.ValidationError) as caught:
        decode(json.dumps(raw), Page)
    assert str(caught.value) == "Invalid value 'video' - at `$.items[1].type`"


def test_an_invalid_tool_among_tools_with_unknown_keys_is_located() -> None:
    raw = tools_result(5, extra_key=True)
    raw["tools"][3]["inputSchema"]["type"] = "array"
    with pytest.raises(msgspec.ValidationError) as caught:
        convert(raw, rev.ListToolsResult)
    assert str(caught.value) == (
        "Invalid enum value 'array' - at `$.tools[3].inputSchema.type`"
    )


def test_union_members_are_tried_in_their_declared_order() -> None:
    value = {"x": 1, "other": 2}
    first: Any = A | B
    second: Any = B | A
    assert type(convert(value, first)) is A
    assert type(convert(value, second)) is B
    assert extra(convert(value, second)) == {"other": 2}


def test_live_extras_count_while_any_object_of_a_conversion_lives() -> None:
    gc.collect()
    before = wire._live_extras.count
    value: Page = convert(
        {"items": [{"type": "text", "text": str(i), "x": i} for i in range(3)]}, Page
    )
    assert wire._live_extras.count > before
    kept = value.items[1]
    del value
    gc.collect()
    assert wire._live_extras.count > before
    assert json.loads(encode(kept)) == {"type": "text", "text": "1", "x": 1}
    del kept
    gc.collect()
    assert wire._live_extras.count == before

"""The wire codec on small hand-written types (no generated code involved)."""

from __future__ import annotations

import gc
import json
from typing import TYPE_CHECKING, Any, Literal

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
    recursive_alias,
    structural_union,
    to_builtins,
    with_extra,
)
from mcp_specgen_runtime.codec import wire
from tests.unit.runtime.codec.wire_support import (
    BlobContents,
    Image,
    Strict,
    Text,
    TextContents,
)


class Base(OpenStruct, kw_only=True):
    uri: str


if TYPE_CHECKING:
    Contents = TextContents | BlobContents | Base
    Value = dict[str, "Value"] | list["Value"] | str | int
else:
    Contents = structural_union(
        "Contents", __name__, "TextContents", "BlobContents", "Base"
    )
    Value = recursive_alias(
        "Value", __name__, "dict[str, Value] | list[Value] | str | int"
    )


class Envelope(OpenStruct, kw_only=True):
    content: list[Text | Image]
    contents: list[Contents] | UnsetType = UNSET
    strict: Strict | UnsetType = UNSET
    value: Value | UnsetType = UNSET
    number: int | float | UnsetType = UNSET
    kind: Literal["a", "b"] | UnsetType = UNSET


def roundtrip(raw: dict[str, Any]) -> Envelope:
    value = decode(json.dumps(raw), Envelope)
    assert json.loads(encode(value)) == raw
    assert to_builtins(value) == raw
    assert convert(raw, Envelope) == value
    return value


def test_plain_message_decodes_on_the_fast_path() -> None:
    value = roundtrip({"content": [{"type": "text", "text": "hi"}]})
    assert value.content == [Text(text="hi")]
    assert extra(value) == {}


def test_unknown_keys_are_kept_at_any_depth() -> None:
    raw = {
        "content": [{"type": "text", "text": "hi", "x-new": {"deep": [1, 2.5]}}],
        "topLevel": None,
        "contents": [{"uri": "u", "text": "t", "also": 1}],
    }
    value = roundtrip(raw)
    assert extra(value) == {"topLevel": None}
    assert extra(value.content[0]) == {"x-new": {"deep": [1, 2.5]}}
    assert isinstance(value.contents, list)
    assert isinstance(value.contents[0], TextContents)
    assert extra(value.contents[0]) == {"also": 1}


def test_closed_structs_reject_unknown_keys_with_the_path() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"unknown field `b`.*\$\.strict"):
        decode(b'{"content": [], "strict": {"a": 1, "b": 2}}', Envelope)


def test_structural_union_prefers_an_exact_member() -> None:
    value = roundtrip(
        {
            "content": [],
            "contents": [
                {"uri": "u", "blob": "AA"},
                {"uri": "u"},
                {"uri": "u", "text": "t"},
            ],
        }
    )
    assert isinstance(value.contents, list)
    assert [type(c) for c in value.contents] == [BlobContents, Base, TextContents]


def test_structural_union_falls_back_to_a_member_with_extras() -> None:
    value = roundtrip({"content": [], "contents": [{"uri": "u", "other": 1}]})
    assert isinstance(value.contents, list)
    assert type(value.contents[0]) is Base
    assert extra(value.contents[0]) == {"other": 1}


def test_structural_union_error_says_where_and_why() -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        decode(b'{"content": [], "contents": [{"text": "t"}]}', Envelope)
    message = str(caught.value)
    assert "no member of Contents accepts the value" in message
    assert "TextContents: Object missing required field `uri`" in message
    assert "$.contents[0]" in message


def test_recursive_alias_validates_every_level() -> None:
    value = roundtrip({"content": [], "value": {"a": [1, "x", {"b": []}]}})
    assert value.value == {"a": [1, "x", {"b": []}]}
    with pytest.raises(msgspec.ValidationError, match=r"\$\.value"):
        decode(b'{"content": [], "value": {"a": [1.5]}}', Envelope)


def test_numbers_keep_int_or_float() -> None:
    assert type(roundtrip({"content": [], "number": 50}).number) is int
    assert type(roundtrip({"content": [], "number": 0.5}).number) is float


def test_tagged_union_errors_name_the_bad_tag() -> None:
    with pytest.raises(
        msgspec.ValidationError,
        match=r"Invalid value 'video' - at `\$\.content\[0\]\.type`",
    ):
        decode(b'{"content": [{"type": "video"}]}', Envelope)


@pytest.mark.parametrize(
    "message",
    [
        {"text": "a"},  # no tag: the schema requires it
        {"type": "image", "text": "a"},  # another member's tag
        {"type": "\x00 never a tag"},  # the guard's own tag
        {"type": "\x00 never a tag", "never": 1},
    ],
)
def test_a_tagged_struct_on_its_own_requires_its_tag(message: dict[str, Any]) -> None:
    raw = json.dumps(message).encode()
    with pytest.raises(msgspec.ValidationError, match=r"type|never"):
        decode(raw, Text)
    with pytest.raises(msgspec.ValidationError):
        convert({**message, "extra": 1}, Text)


def test_invalid_json_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        decode(b'{"content": [', Envelope)


def test_with_extra_adds_keys_and_refuses_own_fields() -> None:
    text = with_extra(Text(text="a"), {"vendor": 1})
    assert json.loads(encode(text)) == {"type": "text", "text": "a", "vendor": 1}
    with pytest.raises(ValueError, match="already defines text, type"):
        with_extra(Text(text="a"), {"text": "b", "type": "x"})


def test_live_extras_counter_returns_to_zero() -> None:
    gc.collect()
    before = wire._live_extras.count
    value = decode(b'{"content": [], "unknown": 1}', Envelope)
    assert wire._live_extras.count == before + 1
    del value
    gc.collect()
    assert wire._live_extras.count == before


def test_union_errors_name_the_accepted_kinds_and_the_inner_location() -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        decode(b'{"content": [], "value": {"a": [1, 2.5]}}', Envelope)
    assert str(caught.value) == (
        "Expected `int | str | object | array`, got `float` "
        "(at `$[...][1]` inside) - at `$.value`"
    )


@pytest.mark.parametrize(
    "data",
    [
        b'{"uri":"\xff","text":""}',  # a field
        b'{"uri":"u","text":"","extra":"\xff"}',  # an unknown key: the slow way
        b'{"uri":"u","text":"","extra":' + b"[" * 5000 + b"]" * 5000 + b"}",
    ],
)
def test_what_msgspec_reports_with_python_errors_is_a_decode_error(
    data: bytes,
) -> None:
    with pytest.raises(msgspec.DecodeError, match=r"UTF-8|nested too deeply"):
        decode(data, TextContents)

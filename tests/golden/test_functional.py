"""Functional tests: import each case's generated `types.py` and use it on the wire.

Each test renders a case (or a small inline schema), writes it into a fresh
package under tmp_path, imports it and decodes/encodes JSON with the runtime
codec. The golden tests say *what* the generator writes; these say that what
it writes behaves as the schema means.

Tests marked `xfail(strict=True)` document the correct behaviour where the
generator (or the runtime) is known to be wrong today; each names the bug.
"""

from __future__ import annotations

import ast
import keyword
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from golden_support import case_schema, document, render_case, render_defs

from mcp_specgen import naming
from mcp_specgen.emit import render_types
from mcp_specgen.errors import UnsupportedSchemaError
from mcp_specgen.naming import field_name
from mcp_specgen.pipeline import revision_from_document
from mcp_specgen.tsdoc import render_tsdoc
from mcp_specgen_runtime import (
    ValidationError,
    convert,
    decode,
    encode,
    extra,
    to_builtins,
    with_extra,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    LoadCase = Callable[[str], ModuleType]
    ImportSource = Callable[[str, str], ModuleType]


PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

# --- helpers ---------------------------------------------------------------------


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON, with int, float and bool told apart (50 is not 50.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(
            same_json(x, y) for x, y in zip(a, b, strict=True)
        )
    return bool(a == b)


def wire(value: Any) -> bytes:
    return msgspec.json.encode(value)


def round_trip(value: Any, tp: Any) -> Any:
    """Decode `value` as `tp`, check that encoding gives the same JSON back."""
    decoded = decode(wire(value), tp)
    encoded = msgspec.json.decode(encode(decoded))
    assert same_json(encoded, value), f"{encoded!r} != {value!r}"
    assert same_json(to_builtins(decoded), value)
    return decoded


def rejects(value: Any, tp: Any) -> str:
    """Decode `value` as `tp`, expecting a ValidationError; return its text."""
    with pytest.raises(ValidationError) as info:
        decode(wire(value), tp)
    return str(info.value)


# --- tagged unions ----------------------------------------------------------------


def test_tagged_union_picks_member_by_tag(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    text = round_trip({"type": "text", "text": "hi"}, t.ContentBlock)
    image = round_trip(
        {"type": "image", "data": "AAA=", "mimeType": "image/png"}, t.ContentBlock
    )
    audio = round_trip(
        {"type": "audio", "data": "x", "mimeType": "audio/wav", "seconds": 50},
        t.ContentBlock,
    )
    assert type(text) is t.TextContent
    assert type(image) is t.ImageContent
    assert image.mime_type == "image/png"
    assert type(audio) is t.AudioContent
    # ints stay ints and floats stay floats
    assert type(audio.seconds) is int
    assert audio.seconds == 50
    half = decode(
        b'{"type":"audio","data":"x","mimeType":"a","seconds":2.5}', t.ContentBlock
    )
    assert type(half.seconds) is float


def test_tag_is_struct_config_not_a_field(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    assert "type" not in t.TextContent.__struct_fields__
    assert t.TextContent.__struct_config__.tag_field == "type"
    assert t.TextContent.__struct_config__.tag == "text"
    assert t.ShapeOption0.__struct_config__.tag_field == "kind"
    # the tag is written on encode, although it is not a field
    assert msgspec.json.decode(encode(t.TextContent(text="x"))) == {
        "type": "text",
        "text": "x",
    }


def test_tagged_union_rejects_unknown_and_missing_tag(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    message = rejects({"role": "user", "content": {"type": "video"}}, t.Message)
    assert "'video'" in message
    assert "$.content.type" in message
    message = rejects({"role": "user", "content": {"text": "no tag"}}, t.Message)
    assert "missing required field `type`" in message
    assert "$.content" in message
    message = rejects(
        {"role": "user", "content": {"type": "image", "data": "x"}}, t.Message
    )
    assert "missing required field `mimeType`" in message


def test_nested_tagged_union_is_spread(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    audio = round_trip({"type": "audio", "data": "x", "mimeType": "a"}, t.NestedContent)
    assert type(audio) is t.AudioContent
    text = round_trip({"type": "text", "text": "x"}, t.NestedContent)
    assert type(text) is t.TextContent


def test_tagged_union_with_null(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    assert decode(b"null", t.OptionalContent) is None
    assert type(decode(b'{"type":"text","text":"a"}', t.OptionalContent)) is (
        t.TextContent
    )
    rejects({"type": "audio", "data": "x", "mimeType": "a"}, t.OptionalContent)


def test_tagged_members_keep_or_reject_unknown_keys(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    message = round_trip(
        {
            "role": "user",
            "content": {"type": "text", "text": "x", "annotations": {"a": 1}},
            "shape": {"kind": "circle", "radius": 2, "color": "red"},
            "attachments": [{"type": "image", "data": "d", "mimeType": "m"}],
        },
        t.Message,
    )
    assert extra(message.content) == {"annotations": {"a": 1}}
    assert type(message.shape) is t.ShapeOption0
    assert extra(message.shape) == {"color": "red"}
    # the square is closed (additionalProperties: false)
    text = rejects(
        {
            "role": "user",
            "content": {"type": "text", "text": "x"},
            "shape": {"kind": "square", "side": 2, "color": "red"},
        },
        t.Message,
    )
    assert "unknown field `color`" in text


def test_tagged_member_alone_requires_its_tag(load_case: LoadCase) -> None:
    t = load_case("tagged_unions")
    # JSON Schema: TextContent requires "type": "text".
    rejects({"text": "hi"}, t.TextContent)


# --- structural unions ------------------------------------------------------------


def test_structural_union_picks_matching_member(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    text = round_trip({"uri": "u", "text": "t"}, s.ResourceContents)
    blob = round_trip({"uri": "u", "blob": "Zm9v", "mimeType": "x"}, s.ResourceContents)
    assert type(text) is s.TextResourceContents
    assert type(blob) is s.BlobResourceContents
    assert blob.mime_type == "x"
    assert isinstance(text, s.ResourceContents)
    assert isinstance(blob, s.ResourceContents)
    assert not isinstance("text", s.ResourceContents)


def test_structural_union_tries_most_specific_first(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    assert type(round_trip({"uri": "u", "text": "t"}, s.SpecificFirst)) is (
        s.TextResourceContents
    )
    assert type(round_trip({"uri": "u"}, s.SpecificFirst)) is s.Resource
    assert type(round_trip({"uri": "u", "name": "n"}, s.SpecificFirst)) is s.Resource


def test_structural_union_prefers_member_without_unknown_keys(
    load_case: LoadCase,
) -> None:
    s = load_case("structural_unions")
    # TextResourceContents fits exactly, the closed ResourceLink does not at all.
    link = round_trip({"uri": "u", "name": "n"}, s.AnyResource)
    assert type(link) is s.ResourceLink
    text = round_trip({"uri": "u", "text": "t"}, s.AnyResource)
    assert type(text) is s.TextResourceContents
    # Only the open TextResourceContents accepts `name` as an unknown key.
    both = round_trip({"uri": "u", "name": "n", "text": "t"}, s.AnyResource)
    assert type(both) is s.TextResourceContents
    assert extra(both) == {"name": "n"}


def test_structural_union_keeps_unknown_keys(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    value = round_trip({"uri": "u", "text": "t", "z": [1, 2.5]}, s.ResourceContents)
    assert type(value) is s.TextResourceContents
    assert extra(value) == {"z": [1, 2.5]}
    converted = convert({"uri": "u", "blob": "b", "z": 1}, s.ResourceContents)
    assert type(converted) is s.BlobResourceContents
    assert extra(converted) == {"z": 1}


def test_structural_union_error_names_each_member(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    message = rejects({"uri": "u"}, s.ResourceContents)
    assert "no member of ResourceContents accepts the value" in message
    assert "TextResourceContents: Object missing required field `text`" in message
    assert "BlobResourceContents: Object missing required field `blob`" in message


def test_structural_union_error_says_where(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    message = rejects({"contents": [], "primary": {"uri": 1}}, s.ReadResourceResult)
    assert message.endswith("- at `$.primary`"), message
    assert "no member of ResourceContents" in message
    assert "TextResourceContents: Expected `str`, got `int` - at `$.uri`" in message
    assert "BlobResourceContents: Expected `str`, got `int` - at `$.uri`" in message
    message = rejects(
        {"contents": [{"uri": "u", "text": "t"}, {"uri": "u"}]}, s.ReadResourceResult
    )
    assert message.endswith("- at `$.contents[1]`"), message
    assert "TextResourceContents: Object missing required field `text`" in message
    assert "BlobResourceContents: Object missing required field `blob`" in message


def test_structural_union_inside_array(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    result = round_trip(
        {
            "contents": [
                {"uri": "a", "text": "t"},
                {"uri": "b", "blob": "Zg=="},
            ]
        },
        s.ReadResourceResult,
    )
    assert [type(c) for c in result.contents] == [
        s.TextResourceContents,
        s.BlobResourceContents,
    ]


def test_union_of_object_and_array(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    # plain alias: msgspec tells an object from an array itself
    one = round_trip({"uri": "u", "text": "t"}, s.ContentsOrList)
    assert type(one) is s.TextResourceContents
    many = round_trip([{"uri": "u", "text": "t"}], s.ContentsOrList)
    assert [type(x) for x in many] == [s.TextResourceContents]
    # structural: two objects, a bounded array and null
    assert decode(b"null", s.ContentsOrBatch) is None
    batch = round_trip([{"uri": "u", "blob": "b"}], s.ContentsOrBatch)
    assert [type(x) for x in batch] == [s.BlobResourceContents]
    assert type(round_trip({"uri": "u", "blob": "b"}, s.ContentsOrBatch)) is (
        s.BlobResourceContents
    )
    message = rejects([{"uri": "u", "blob": "b"}] * 3, s.ContentsOrBatch)
    assert "length <= 2" in message


def test_union_of_object_and_map(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    labels = round_trip({"contents": [], "extra": {"a": "b"}}, s.ReadResourceResult)
    assert labels.extra == {"a": "b"}
    link = round_trip(
        {"contents": [], "extra": {"uri": "u", "name": "n", "size": 3}},
        s.ReadResourceResult,
    )
    assert type(link.extra) is s.ResourceLink
    assert link.extra.size == 3
    message = rejects({"contents": [], "extra": {"a": 1}}, s.ReadResourceResult)
    assert "no member of LinkOrLabels" in message
    assert "ResourceLink: Object contains unknown field `a`" in message
    assert "Expected `str`, got `int`" in message


def test_structural_union_error_location_on_slow_path(load_case: LoadCase) -> None:
    s = load_case("structural_unions")
    message = rejects({"contents": [], "extra": {"a": 1}}, s.ReadResourceResult)
    assert message.endswith("- at `$.extra`"), message


def test_one_of_rejects_value_matching_two_members(
    import_source: ImportSource,
) -> None:
    defs = {
        "Text": {
            "type": "object",
            "properties": {"uri": {"type": "string"}, "text": {"type": "string"}},
            "required": ["uri", "text"],
        },
        "Blob": {
            "type": "object",
            "properties": {"uri": {"type": "string"}, "blob": {"type": "string"}},
            "required": ["uri", "blob"],
        },
        "Either": {"oneOf": [{"$ref": "#/$defs/Text"}, {"$ref": "#/$defs/Blob"}]},
    }
    try:
        source = render_defs(defs, "one_of")
    except UnsupportedSchemaError:
        return  # refusing the construct is correct too
    m = import_source(source, "one_of")
    rejects({"uri": "u", "text": "t", "blob": "b"}, m.Either)


# --- open and closed objects -------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["OpenByDefault", "OpenWithEmptySchema", "OpenWithTrue"]
)
def test_open_objects_keep_unknown_keys(load_case: LoadCase, name: str) -> None:
    o = load_case("open_and_closed_objects")
    tp = getattr(o, name)
    value = round_trip({"name": "a", "x": {"y": [1, 2.5, None]}, "n": 50}, tp)
    assert value.name == "a"
    assert extra(value) == {"x": {"y": [1, 2.5, None]}, "n": 50}
    assert type(extra(value)["n"]) is int


def test_closed_object_rejects_unknown_key(load_case: LoadCase) -> None:
    o = load_case("open_and_closed_objects")
    message = rejects({"name": "a", "surprise": 1}, o.Closed)
    assert "unknown field `surprise`" in message
    with pytest.raises(ValidationError, match="surprise"):
        convert({"name": "a", "surprise": 1}, o.Closed)
    nested = rejects(
        {"labels": {}, "nested": {"deep": {"flag": True, "other": 1}}}, o.Container
    )
    assert "unknown field `other`" in nested


def test_open_object_inside_closed_one(load_case: LoadCase) -> None:
    o = load_case("open_and_closed_objects")
    value = round_trip({"name": "a", "inner": {"value": 50, "more": "x"}}, o.Closed)
    assert extra(value) == {}
    assert value.inner.value == 50
    assert extra(value.inner) == {"more": "x"}


def test_map_objects(load_case: LoadCase) -> None:
    o = load_case("open_and_closed_objects")
    assert round_trip({"a": "b"}, o.StringMap) == {"a": "b"}
    message = rejects({"a": 1}, o.StringMap)
    assert "Expected `str`, got `int`" in message
    assert round_trip({"a": [1, {"b": None}]}, o.AnyMap) == {"a": [1, {"b": None}]}
    assert round_trip({}, o.EmptyProperties) == {}
    by_name = round_trip({"x": {"name": "n"}}, o.ClosedMap)
    assert type(by_name["x"]) is o.Closed
    message = rejects({"x": {"name": "n", "bad": 1}}, o.ClosedMap)
    assert "unknown field `bad`" in message


def test_container_of_maps_and_objects(load_case: LoadCase) -> None:
    o = load_case("open_and_closed_objects")
    value = round_trip(
        {
            "labels": {"a": [1, 2], "b": []},
            "headers": {"h": "v"},
            "byName": {"k": {"name": "n"}},
            "anything": [1, "two", {"three": 3.0}],
            "settings": {"s": True},
            "open": {"name": "o", "kept": 1},
            "nested": {"deep": {"flag": False}, "shallow": 1},
            "unknown": "kept",
        },
        o.Container,
    )
    assert value.labels == {"a": [1, 2], "b": []}
    assert type(value.by_name["k"]) is o.Closed
    assert extra(value) == {"unknown": "kept"}
    assert extra(value.open) == {"kept": 1}
    assert extra(value.nested) == {"shallow": 1}
    message = rejects({"labels": {"a": ["x"]}}, o.Container)
    assert "Expected `int`, got `str`" in message
    assert "$.labels" in message


def test_with_extra_on_open_object(load_case: LoadCase) -> None:
    o = load_case("open_and_closed_objects")
    value = with_extra(o.OpenByDefault(name="a"), {"x": 1})
    assert msgspec.json.decode(encode(value)) == {"name": "a", "x": 1}
    with pytest.raises(ValueError, match="name"):
        with_extra(o.OpenByDefault(name="a"), {"name": "b"})


# --- keywords and renames ---------------------------------------------------------

RENAMED = {
    "_meta": "meta",
    "$schema": "schema",
    "class": "class_",
    "from": "from_",
    "type": "type",
    "match": "match",
    "io.example/fooBar": "foo_bar",
    "camelCase": "camel_case",
    "URLValue": "url_value",
    "already_snake": "already_snake",
    "2fa": "f_2fa",
    "kebab-case-name": "kebab_case_name",
}


def test_fields_keep_wire_names(load_case: LoadCase) -> None:
    k = load_case("keywords_and_renames")
    fields = dict(
        zip(
            k.Renamed.__struct_encode_fields__, k.Renamed.__struct_fields__, strict=True
        )
    )
    assert fields == RENAMED
    for py_name in RENAMED.values():
        assert py_name.isidentifier()
        assert not keyword.iskeyword(py_name)


def test_renamed_fields_round_trip(load_case: LoadCase) -> None:
    k = load_case("keywords_and_renames")
    data = {
        "_meta": {"progressToken": "p"},
        "$schema": "s",
        "class": "c",
        "from": 50,
        "type": "t",
        "match": True,
        "io.example/fooBar": "f",
        "camelCase": "cc",
        "URLValue": "url",
        "already_snake": "a",
        "2fa": False,
        "kebab-case-name": "k",
    }
    value = round_trip(data, k.Renamed)
    assert value.class_ == "c"
    assert value.from_ == 50
    assert value.match is True
    assert value.meta.progress_token == "p"
    assert value.schema == "s"
    assert value.foo_bar == "f"
    assert value.type == "t"
    assert value.f_2fa is False
    assert extra(value) == {}
    # Python names are not wire names: on the wire they are unknown keys.
    odd = round_trip(
        {"_meta": {}, "class": "c", "from": 1, "camelCase": "x", "class_": "y"},
        k.Renamed,
    )
    assert odd.class_ == "c"
    assert extra(odd) == {"class_": "y"}
    message = rejects({"_meta": {}, "from": 1, "camelCase": "x"}, k.Renamed)
    assert "missing required field `class`" in message


def test_definition_named_like_typing_name(load_case: LoadCase) -> None:
    k = load_case("keywords_and_renames")
    assert isinstance(k.Literal, type)
    assert issubclass(k.Literal, msgspec.Struct)
    holder = round_trip({"literal": {"value": "a"}, "mode": "fast"}, k.Holder)
    assert type(holder.literal) is k.Literal
    assert "Invalid enum value 'c'" in rejects({"literal": {"value": "c"}}, k.Holder)
    assert "Invalid enum value 'slow'" in rejects(
        {"literal": {"value": "a"}, "mode": "slow"}, k.Holder
    )


def test_field_names_do_not_depend_on_python_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Python 3.12's soft keywords, whatever the running version.
    soft_312 = frozenset({"_", "case", "match", "type"})
    monkeypatch.setattr(naming.keyword, "issoftkeyword", soft_312.__contains__)
    assert field_name("type") == "type"


@pytest.mark.parametrize(
    ("properties", "value"),
    [
        pytest.param(
            {"str": {"type": "string"}, "name": {"type": "string"}},
            {"str": "s", "name": "n"},
            id="str",
        ),
        pytest.param(
            {"list": {"type": "array"}, "items": {"type": "array"}},
            {"list": [1], "items": []},
            id="list",
        ),
        pytest.param(
            {"msgspec": {"type": "string"}, "zName": {"type": "string"}},
            {"msgspec": "m", "zName": "z"},
            id="msgspec",
        ),
    ],
)
def test_property_named_like_builtin(
    import_source: ImportSource, properties: dict[str, Any], value: dict[str, Any]
) -> None:
    source = render_defs({"A": {"type": "object", "properties": properties}}, "bi")
    m = import_source(source, "builtin_names")
    round_trip(value, m.A)


# --- descriptions -----------------------------------------------------------------


def _docs(source: str) -> dict[str, str]:
    """Docstrings of the module: `Class`, `Class.field` and alias names."""
    docs: dict[str, str] = {}

    def scan(body: list[ast.stmt], prefix: str) -> None:
        previous: str | None = None
        for node in body:
            if isinstance(node, ast.ClassDef):
                doc = ast.get_docstring(node, clean=False)
                if doc is not None:
                    docs[node.name] = doc
                scan(node.body, node.name + ".")
            elif isinstance(node, ast.If):
                scan(node.body, prefix)
            elif (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and previous is not None
            ):
                docs[prefix + previous] = node.value.value
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                previous = node.target.id
            else:
                previous = None

    scan(ast.parse(source).body, "")
    return docs


def _words(text: str) -> list[str]:
    return text.split()


def test_descriptions_survive_escaping(load_case: LoadCase) -> None:
    source = render_case("descriptions")
    load_case("descriptions")  # imports: the escaping is valid Python
    docs = _docs(source)
    defs = case_schema("descriptions")["$defs"]
    checked = 0
    for name, definition in defs.items():
        if "description" in definition:
            written = render_tsdoc(definition["description"], defs)
            assert _words(docs[name]) == _words(written), name
            checked += 1
        for wire_name, prop in definition.get("properties", {}).items():
            key = f"{name}.{field_name(wire_name)}"
            if "description" in prop:
                assert _words(docs[key]) == _words(prop["description"]), key
                checked += 1
            else:
                assert key not in docs
    assert checked == 12
    # no title becomes a description
    assert docs["WithTitle"] == "The `WithTitle` object of the schema."


def test_description_details(load_case: LoadCase) -> None:
    d = load_case("descriptions")
    # backslashes are kept as written: `\n` is two characters, not a newline
    assert "backslash-n \\n is not" in d.Backslashes.__doc__
    assert "a doubled backslash \\\\ stays two" in d.Backslashes.__doc__
    assert d.Backslashes.__doc__.rstrip().endswith("ends with one \\")
    assert '"""triple quotes"""' in d.TripleQuotes.__doc__
    assert d.TripleQuotes.__doc__.rstrip().endswith('"done"')
    assert "日本語, emoji 😀" in d.Unicode.__doc__
    # long lines are wrapped to 88 columns, except unbreakable words
    for line in render_case("descriptions").splitlines():
        assert len(line) <= 88 or "https://example.com/" in line


def test_description_ending_with_triple_quotes(import_source: ImportSource) -> None:
    defs = {
        "A": {
            "type": "object",
            "description": 'Ends with """',
            "properties": {"x": {"type": "string"}},
        }
    }
    m = import_source(render_defs(defs, "tq"), "tq")
    assert m.A.__doc__.rstrip() == 'Ends with """'


def test_description_with_nul(import_source: ImportSource) -> None:
    defs = {
        "A": {
            "type": "object",
            "description": "nul \u0000 byte",
            "properties": {"x": {"type": "string"}},
        }
    }
    m = import_source(render_defs(defs, "nul"), "nul")
    assert m.A.__doc__ == "nul \u0000 byte"


# --- numbers and constraints ------------------------------------------------------

SETTINGS = {"count": 50, "ratio": 50, "jsonrpc": "2.0", "answer": 42}


def test_ints_and_floats_keep_their_form(load_case: LoadCase) -> None:
    n = load_case("numbers_and_constraints")
    value = round_trip(SETTINGS, n.Settings)
    assert type(value.ratio) is int
    assert value.ratio == 50
    assert encode(value) == b'{"answer":42,"count":50,"jsonrpc":"2.0","ratio":50}'
    value = round_trip({**SETTINGS, "ratio": 0.5, "temperature": 1.5}, n.Settings)
    assert type(value.ratio) is float
    assert type(value.temperature) is float
    value = round_trip({**SETTINGS, "priority": 1, "pair": [1, 2.5]}, n.Settings)
    assert type(value.priority) is int
    assert [type(x) for x in value.pair] == [int, float]
    assert "Expected `int`, got `float`" in rejects(
        {**SETTINGS, "count": 1.5}, n.Settings
    )
    assert "Expected `int`, got `bool`" in rejects(
        {**SETTINGS, "count": True}, n.Settings
    )


@pytest.mark.parametrize(
    ("key", "bad", "good", "reason"),
    [
        ("port", 0, 1, "`int` >= 1"),
        ("port", 65536, 65535, "`int` <= 65535"),
        ("retries", -1, 0, "`int` >= 0"),
        ("percent", 101, 100, "`int` <= 100"),
        ("priority", -0.1, 0.0, "`float` >= 0"),
        ("priority", 2, 1, "`int` <= 1"),
        ("temperature", 2.5, -2, "`float` <= 2"),
        ("temperature", -3, 2, "`int` >= -2"),
    ],
)
def test_minimum_and_maximum(
    load_case: LoadCase, key: str, bad: Any, good: Any, reason: str
) -> None:
    n = load_case("numbers_and_constraints")
    message = rejects({**SETTINGS, key: bad}, n.Settings)
    assert reason in message
    assert f"$.{key}" in message
    assert getattr(round_trip({**SETTINGS, key: good}, n.Settings), key) == good


def test_array_lengths(load_case: LoadCase) -> None:
    n = load_case("numbers_and_constraints")
    assert round_trip({**SETTINGS, "tags": ["a", "b", "c"]}, n.Settings).tags == [
        "a",
        "b",
        "c",
    ]
    assert "length >= 1 - at `$.tags`" in rejects({**SETTINGS, "tags": []}, n.Settings)
    assert "length <= 3 - at `$.tags`" in rejects(
        {**SETTINGS, "tags": ["a", "b", "c", "d"]}, n.Settings
    )
    assert "length >= 2" in rejects({**SETTINGS, "pair": [1]}, n.Settings)
    assert "length <= 2 - at `$.matrix[0]`" in rejects(
        {**SETTINGS, "matrix": [[1, 2, 3]]}, n.Settings
    )
    assert "`int` >= 0 - at `$.matrix[1][0]`" in rejects(
        {**SETTINGS, "matrix": [[1], [-1]]}, n.Settings
    )
    value = round_trip({**SETTINGS, "anyItems": [1, "a", None, [2.5]]}, n.Settings)
    assert value.any_items == [1, "a", None, [2.5]]


def test_enums_and_consts(load_case: LoadCase) -> None:
    n = load_case("numbers_and_constraints")
    value = round_trip(
        {
            **SETTINGS,
            "level": "warning",
            "code": -32601,
            "enabled": True,
            "mode": None,
            "token": "t",
        },
        n.Settings,
    )
    assert value.mode is None
    assert round_trip({**SETTINGS, "mode": "auto", "token": 7}, n.Settings).token == 7
    for key, bad in [
        ("level", "trace"),
        ("code", -32000),
        ("answer", 41),
        ("enabled", False),
        ("mode", "manual"),
        ("jsonrpc", "1.0"),
    ]:
        message = rejects({**SETTINGS, key: bad}, n.Settings)
        assert f"Invalid enum value {bad!r}" in message
        assert f"$.{key}" in message
    assert "got `float`" in rejects({**SETTINGS, "token": 1.5}, n.Settings)
    assert "got `int`" in rejects({**SETTINGS, "enabled": 1}, n.Settings)
    assert decode(b'"debug"', n.Level) == "debug"
    assert decode(b"100", n.Percent) == 100


def test_required_nullable_properties(load_case: LoadCase) -> None:
    n = load_case("numbers_and_constraints")
    value = round_trip({"count": None, "label": None}, n.Nullable)
    assert value.count is None
    assert value.label is None
    assert round_trip({"count": 50, "label": "x"}, n.Nullable).count == 50
    # nullable is not optional: the properties are still required
    assert "missing required field `label`" in rejects({"count": None}, n.Nullable)
    assert "Expected `int | null`, got `float`" in rejects(
        {"count": 1.5, "label": None}, n.Nullable
    )


def test_generated_code_is_ruff_clean(tmp_path: Path) -> None:
    defs = {
        "Item": {
            "type": "object",
            "properties": {
                "count": {"type": ["integer", "null"]},
                "label": {"type": ["null", "string"]},
            },
            "required": ["label"],
        }
    }
    source = render_types(revision_from_document(document(defs), "a-long-revision"))
    (tmp_path / "types.py").write_text(source, encoding="utf-8")
    ruff = Path(sys.executable).parent / "ruff"
    result = subprocess.run(
        [str(ruff), "check", "--no-cache", "--config", str(PYPROJECT), "types.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_fractional_bounds_on_number(import_source: ImportSource) -> None:
    defs = {
        "S": {
            "type": "object",
            "properties": {"t": {"type": "number", "minimum": -1.5, "maximum": 2.5}},
        }
    }
    m = import_source(render_defs(defs, "fb"), "fractional_bounds")
    assert type(round_trip({"t": 2}, m.S).t) is int
    assert round_trip({"t": 2.5}, m.S).t == 2.5
    rejects({"t": 3}, m.S)
    rejects({"t": -1.6}, m.S)


def test_schema_of_aliases_only(import_source: ImportSource) -> None:
    m = import_source(render_defs({"Cursor": {"type": "string"}}, "al"), "aliases")
    assert decode(b'"c"', m.Cursor) == "c"


# --- recursive aliases ------------------------------------------------------------


def test_recursive_alias_accepts_nested_json(load_case: LoadCase) -> None:
    r = load_case("recursive_alias")
    data = {
        "data": {"a": [1, 2.5, True, None, {"b": "c"}], "n": 50},
        "meta": {"x": [[]], "y": {"z": -1}},
        "tree": {"k": ["a", {"z": ["b", []]}]},
        "trees": ["s", [], {}],
        "children": [{"data": [1], "unknown": 2}],
    }
    value = round_trip(data, r.Document)
    assert type(value.data["n"]) is int
    assert type(value.children[0]) is r.Document
    assert extra(value.children[0]) == {"unknown": 2}
    assert same_json(round_trip([1, {"a": [2.0]}], r.JSONValue), [1, {"a": [2.0]}])
    assert round_trip({"a": 1}, r.JSONObject) == {"a": 1}
    assert round_trip([None], r.JSONArray) == [None]
    assert isinstance({"a": "b"}, r.StringTree)
    assert not isinstance(1, r.StringTree)


def test_recursive_alias_rejects_excluded_values(load_case: LoadCase) -> None:
    r = load_case("recursive_alias")
    message = rejects({"data": 1, "tree": 5}, r.Document)
    assert "got `int`" in message
    assert message.endswith("- at `$.tree`"), message
    message = rejects({"data": 1, "tree": {"k": ["a", {"z": 3}]}}, r.Document)
    assert "got `int`" in message
    assert "$.tree" in message
    message = rejects({"data": 1, "trees": ["a", [1.5]]}, r.Document)
    assert "got `float`" in message
    assert "$.trees[1]" in message
    assert "got `array`" in rejects({"data": 1, "meta": []}, r.Document)
    assert "got `int`" in rejects({"a": {"b": [1]}}, r.StringTree)


# --- draft-07 ---------------------------------------------------------------------


def test_draft07_case(load_case: LoadCase) -> None:
    d = load_case("draft07")
    value = round_trip(
        {
            "role": "assistant",
            "content": {"type": "text", "text": "t", "_meta": {"k": [1]}},
            "resource": {"uri": "u", "blob": "b"},
            "temperature": 1,
            "stopSequences": ["a"],
            "class": "c",
            "_meta": {"n": 50},
            "kept": True,
        },
        d.SamplingMessage,
    )
    assert type(value.content) is d.TextContent
    assert value.content.meta == {"k": [1]}
    assert type(value.resource) is d.BlobResourceContents
    assert type(value.temperature) is int
    assert value.class_ == "c"
    assert value.meta == {"n": 50}
    assert extra(value) == {"kept": True}
    image = round_trip(
        {"role": "user", "content": {"type": "image", "data": "d", "mimeType": "m"}},
        d.SamplingMessage,
    ).content
    assert type(image) is d.ImageContent
    message = rejects(
        {
            "role": "user",
            "content": {"type": "image", "data": "d", "mimeType": "m", "x": 1},
        },
        d.SamplingMessage,
    )
    assert "unknown field `x`" in message
    assert "Invalid enum value 'system'" in rejects(
        {"role": "system", "content": {"type": "text", "text": "t"}},
        d.SamplingMessage,
    )
    assert "length <= 4" in rejects(
        {
            "role": "user",
            "content": {"type": "text", "text": "t"},
            "stopSequences": ["a"] * 5,
        },
        d.SamplingMessage,
    )
    assert "no member of ResourceContents" in rejects(
        {"role": "user", "content": {"type": "text", "text": "t"}, "resource": {}},
        d.SamplingMessage,
    )


def test_union_members_rendered_once() -> None:
    source = render_case("draft07")
    assert "int | int" not in source


# --- allOf ------------------------------------------------------------------------


def test_all_of_merges_and_tags(load_case: LoadCase) -> None:
    a = load_case("all_of")
    ping = round_trip({"method": "ping"}, a.ClientRequest)
    assert type(ping) is a.PingRequest
    call = round_trip(
        {"method": "tools/call", "id": 50, "params": {"name": "n", "arguments": {}}},
        a.ClientRequest,
    )
    assert type(call) is a.CallToolRequest
    assert type(call.params) is a.CallToolRequestParams
    assert call.id == 50
    assert "missing required field `id`" in rejects(
        {"method": "tools/call", "params": {"name": "n"}}, a.ClientRequest
    )
    assert "missing required field `name`" in rejects(
        {"method": "tools/call", "id": 1, "params": {}}, a.ClientRequest
    )
    assert "Invalid value 'pong'" in rejects({"method": "pong"}, a.ClientRequest)
    envelope = round_trip(
        {"request": {"method": "ping"}, "ping": {"method": "ping", "params": {}}},
        a.Envelope,
    )
    assert type(envelope.ping) is a.EnvelopePing
    assert "Invalid enum value 'pong'" in rejects(
        {"request": {"method": "ping"}, "ping": {"method": "pong"}}, a.Envelope
    )
    # the base type itself is untouched by the refinement
    assert round_trip({"method": "anything"}, a.Request).method == "anything"


def test_all_of_keeps_own_description(import_source: ImportSource) -> None:
    defs = {
        "Base": {
            "description": "Base doc.",
            "type": "object",
            "properties": {"a": {"type": "string"}},
        },
        "Derived": {
            "description": "Derived doc.",
            "allOf": [
                {"$ref": "#/$defs/Base"},
                {"properties": {"b": {"type": "string"}}},
            ],
        },
    }
    m = import_source(render_defs(defs, "ad"), "all_of_doc")
    assert m.Derived.__doc__ == "Derived doc."


def test_all_of_closed_part_rejects_other_parts_properties(
    import_source: ImportSource,
) -> None:
    defs = {
        "Result": {"type": "object", "properties": {"_meta": {"type": "object"}}},
        "Message": {
            "allOf": [
                {"$ref": "#/$defs/Result"},
                {
                    "type": "object",
                    "properties": {"role": {"type": "string"}},
                    "required": ["role"],
                    "additionalProperties": False,
                },
            ]
        },
    }
    try:
        source = render_defs(defs, "ac")
    except UnsupportedSchemaError:
        return  # refusing the construct is correct too
    m = import_source(source, "all_of_closed")
    round_trip({"role": "user"}, m.Message)
    rejects({"role": "user", "_meta": {}}, m.Message)

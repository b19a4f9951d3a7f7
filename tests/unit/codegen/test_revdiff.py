"""The IR diff: each kind of change on tiny schemas, then the pinned revisions."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from mcp_specgen import ir
from mcp_specgen.pipeline import revision_from_document
from mcp_specgen.revdiff import (
    FieldChange,
    FieldSig,
    MethodSig,
    RevisionDiff,
    TypeEntry,
    diff_revisions,
    load_diff,
)
from tests.conftest import SCHEMA_DIR

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def build(defs: dict[str, Any], name: str) -> ir.Revision:
    return revision_from_document({"$schema": DIALECT, "$defs": defs}, name)


def diff(a: dict[str, Any], b: dict[str, Any]) -> RevisionDiff:
    return diff_revisions(build(a, "a"), build(b, "b"))


def obj(*required: str, closed: bool = False, **props: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        node["required"] = list(required)
    if closed:
        node["additionalProperties"] = False
    return node


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


STR = {"type": "string"}
INT = {"type": "integer"}


def tagged(tag: str, **props: Any) -> dict[str, Any]:
    return obj("type", type={"type": "string", "const": tag}, **props)


def request(method: str, params: str | None, *, params_required: bool = True) -> Any:
    props: dict[str, Any] = {
        "jsonrpc": {"type": "string", "const": "2.0"},
        "id": INT,
        "method": {"type": "string", "const": method},
    }
    required = ["jsonrpc", "id", "method"]
    if params is not None:
        props["params"] = ref(params)
        required += ["params"] if params_required else []
    return {"type": "object", "properties": props, "required": required}


# --- tiny schemas ---------------------------------------------------------------


def test_a_revision_against_itself_is_empty() -> None:
    defs = {"Thing": obj("a", a=STR), "Name": STR}
    result = diff(defs, defs)
    assert result.empty
    assert (result.a, result.b) == ("a", "b")
    assert result.types_unchanged == (
        TypeEntry(name="Name", kind="alias"),
        TypeEntry(name="Thing", kind="struct"),
    )
    assert result.type_change("Thing") is None
    assert result.fields_only_in_a("Thing") == ()


def test_types_added_and_removed_with_their_kind() -> None:
    result = diff(
        {"Kept": obj(a=STR), "Gone": obj(x=STR), "OldName": STR},
        {
            "Kept": obj(a=STR),
            "A": tagged("a"),
            "B": tagged("b"),
            "AB": {"anyOf": [ref("A"), ref("B")]},
        },
    )
    assert result.types_added == (
        TypeEntry(name="A", kind="struct"),
        TypeEntry(name="AB", kind="union"),
        TypeEntry(name="B", kind="struct"),
    )
    assert result.types_removed == (
        TypeEntry(name="Gone", kind="struct"),
        TypeEntry(name="OldName", kind="alias"),
    )
    assert result.type_changes == ()
    assert result.counts["types_added"] == 3
    assert result.counts["types_removed"] == 2


def test_fields_added_removed_and_changed() -> None:
    result = diff(
        {"Thing": obj("gone", "kept", gone=STR, kept=STR, retyped=INT, loose=STR)},
        {"Thing": obj("kept", "loose", kept=STR, retyped=STR, loose=STR, new=STR)},
    )
    change = result.type_change("Thing")
    assert change is not None
    assert (change.kind_a, change.kind_b, change.kind_changed) == (
        "struct",
        "struct",
        False,
    )
    assert change.fields_added == (
        FieldSig(wire_name="new", annotation="str", required=False),
    )
    assert change.fields_removed == (
        FieldSig(wire_name="gone", annotation="str", required=True),
    )
    assert change.fields_changed == (
        FieldChange(
            wire_name="loose",
            a=FieldSig(wire_name="loose", annotation="str", required=False),
            b=FieldSig(wire_name="loose", annotation="str", required=True),
        ),
        FieldChange(
            wire_name="retyped",
            a=FieldSig(wire_name="retyped", annotation="int", required=False),
            b=FieldSig(wire_name="retyped", annotation="str", required=False),
        ),
    )
    loose, retyped = change.fields_changed
    assert (loose.required_changed, loose.type_changed) == (True, False)
    assert (retyped.required_changed, retyped.type_changed) == (False, True)
    assert result.fields_only_in_a("Thing") == change.fields_removed
    assert result.fields_only_in_b("Thing") == change.fields_added


def test_a_changed_default_is_a_field_change() -> None:
    with_default = {"type": "string", "x-python-default": "complete"}
    result = diff(
        {"Result": obj("resultType", resultType=STR)},
        {"Result": obj(resultType=with_default)},
    )
    change = result.type_change("Result")
    assert change is not None
    (field,) = change.fields_changed
    assert (field.required_changed, field.default_changed) == (True, True)
    assert field.a.describe() == "str (required)"
    assert field.b.describe() == "str = 'complete'"


def test_field_descriptions() -> None:
    assert FieldSig(wire_name="x", annotation="str", required=True).describe() == (
        "str (required)"
    )
    optional = FieldSig(wire_name="icons", annotation="list[Icon]", required=False)
    assert optional.describe() == "list[Icon] | UnsetType (optional)"
    nullable = FieldSig(wire_name="x", annotation="str | None", required=False)
    assert nullable.describe() == "str | UnsetType | None (optional)"


def test_open_and_closed_structs() -> None:
    result = diff(
        {"Thing": obj(a=STR), "Same": obj(a=STR)},
        {"Thing": obj(a=STR, closed=True), "Same": obj(a=STR)},
    )
    change = result.type_change("Thing")
    assert change is not None
    assert (change.open_a, change.open_b, change.open_changed) == (True, False, True)
    assert result.type_change("Same") is None


def test_kind_change_keeps_a_shape_of_each_side() -> None:
    result = diff({"Thing": obj(b=STR, a=INT)}, {"Thing": STR})
    change = result.type_change("Thing")
    assert change is not None
    assert change.kind_changed
    assert (change.kind_a, change.kind_b) == ("struct", "alias")
    assert (change.shape_a, change.shape_b) == ("{a, b}", "str")
    assert change.fields_added == change.fields_removed == ()
    with pytest.raises(KeyError):
        result.fields_only_in_a("Thing")


def test_union_members_gained_and_lost() -> None:
    members = {"A": tagged("a"), "B": tagged("b"), "C": tagged("c")}
    result = diff(
        {**members, "U": {"anyOf": [ref("A"), ref("B")]}},
        {**members, "U": {"anyOf": [ref("C"), ref("B")]}},
    )
    change = result.type_change("U")
    assert change is not None
    assert (change.members_gained, change.members_lost) == (("C",), ("A",))
    # The members' const tag is compared as a field: no spurious change.
    assert [c.name for c in result.type_changes] == ["U"]


def test_union_member_order_is_not_a_change() -> None:
    members = {"A": tagged("a"), "B": tagged("b")}
    result = diff(
        {**members, "U": {"anyOf": [ref("A"), ref("B")]}},
        {**members, "U": {"anyOf": [ref("B"), ref("A")]}},
    )
    assert result.empty


def test_tag_counts_as_a_required_literal_field() -> None:
    """A struct tagged in A and a plain struct with the same const in B agree."""
    a_defs = {
        "A": tagged("a", x=STR),
        "B": tagged("b"),
        "AB": {"anyOf": [ref("A"), ref("B")]},
    }
    assert diff(a_defs, {"A": tagged("a", x=STR), "B": tagged("b")}).type_changes == ()
    retagged = diff(a_defs, {**a_defs, "A": tagged("z", x=STR)})
    change = retagged.type_change("A")
    assert change is not None
    (tag,) = change.fields_changed
    assert (tag.wire_name, tag.a.annotation, tag.b.annotation) == (
        "type",
        "Literal['a']",
        "Literal['z']",
    )
    assert tag.a.required and tag.b.required


def test_alias_target_change() -> None:
    result = diff(
        {"Id": STR, "Ids": {"type": "array", "items": STR}},
        {"Id": {"type": ["string", "integer"]}, "Ids": {"type": "array", "items": STR}},
    )
    change = result.type_change("Id")
    assert change is not None
    assert (change.target_a, change.target_b) == ("str", "str | int")
    assert change.target_changed
    assert result.type_change("Ids") is None


def test_unknown_names_raise_key_error() -> None:
    result = diff({"Old": obj(a=STR)}, {"New": obj(a=STR)})
    with pytest.raises(KeyError):
        result.type_change("Old")
    with pytest.raises(KeyError):
        result.fields_only_in_b("New")
    with pytest.raises(KeyError):
        result.method_change("ping")


def _methods(*requests: tuple[str, dict[str, Any]], role: str) -> dict[str, Any]:
    defs: dict[str, Any] = dict(requests)
    defs["P"] = obj(x=STR)
    defs["Q"] = obj(y=STR)
    defs["Result"] = obj(r=STR)
    defs["ThingResult"] = obj(t=STR)
    defs[role] = {"anyOf": [ref(name) for name, _ in requests]}
    return defs


def test_methods_added_removed_and_changed() -> None:
    result = diff(
        _methods(
            ("PingRequest", request("ping", None)),
            ("ThingRequest", request("thing", "P", params_required=False)),
            ("SameRequest", request("same", "P")),
            role="ClientRequest",
        ),
        _methods(
            ("ThingRequest", request("thing", "Q")),
            ("SameRequest", request("same", "P")),
            ("DiscoverRequest", request("server/discover", "P")),
            role="ClientRequest",
        ),
    )
    assert [m.name for m in result.methods_added] == ["server/discover"]
    assert result.methods_removed == (
        MethodSig(
            name="ping",
            direction="client_to_server",
            message="request",
            message_type="PingRequest",
            params_type=None,
            params_required=False,
            result_type="Result",
        ),
    )
    assert result.methods_unchanged == ("same",)
    change = result.method_change("thing")
    assert change is not None
    assert change.params_changed
    assert (change.a.params_type, change.b.params_type) == ("P", "Q")
    assert (change.a.params_required, change.b.params_required) == (False, True)
    assert not (change.direction_changed or change.result_changed)
    assert result.method_change("same") is None


def test_method_direction_change() -> None:
    requests = (("PingRequest", request("ping", None)),)
    result = diff(
        _methods(*requests, role="ClientRequest"),
        _methods(*requests, role="ServerRequest"),
    )
    change = result.method_change("ping")
    assert change is not None
    assert (change.a.direction, change.b.direction) == (
        "client_to_server",
        "server_to_client",
    )
    assert change.direction_changed
    assert not (change.params_changed or change.result_changed)


def test_everything_is_sorted() -> None:
    names = ["Zeta", "alpha", "Beta", "Mid"]
    unsorted = obj(z=STR, a=STR, m=STR)
    result = diff({}, dict.fromkeys(names, unsorted))
    assert [e.name for e in result.types_added] == sorted(names)
    gained = diff({"T": obj(b=STR)}, {"T": unsorted}).fields_only_in_b("T")
    assert [f.wire_name for f in gained] == ["a", "m", "z"]


# --- the pinned revisions -------------------------------------------------------


@functools.cache
def pinned(a: str, b: str) -> RevisionDiff:
    return load_diff(SCHEMA_DIR, a, b)


def test_2025_11_25_to_2026_07_28_methods() -> None:
    result = pinned("2025-11-25", "2026-07-28")
    removed = {m.name for m in result.methods_removed}
    added = {m.name for m in result.methods_added}
    assert {"initialize", "ping", "logging/setLevel"} <= removed
    assert {"tasks/get", "tasks/list", "tasks/cancel", "tasks/result"} <= removed
    assert {"resources/subscribe", "resources/unsubscribe"} <= removed
    assert {"notifications/initialized", "notifications/roots/list_changed"} <= removed
    assert added == {
        "server/discover",
        "subscriptions/listen",
        "notifications/subscriptions/acknowledged",
    }
    progress = result.method_change("notifications/progress")
    assert progress is not None
    assert (progress.a.direction, progress.b.direction) == ("both", "server_to_client")
    call = result.method_change("tools/call")
    assert call is not None
    assert call.result_changed
    assert call.b.result_type == "CallToolResultResponseResult"
    assert result.method_change("tools/list") is not None
    assert result.method_change("completion/complete") is None


def test_2025_11_25_to_2026_07_28_types() -> None:
    result = pinned("2025-11-25", "2026-07-28")
    (result_type,) = [
        f
        for f in result.fields_only_in_b("CallToolResult")
        if f.wire_name == "resultType"
    ]
    assert result_type.describe() == "str = 'complete'"
    assert [f.wire_name for f in result.fields_only_in_a("Tool")] == ["execution"]
    assert TypeEntry(name="InitializeResult", kind="struct") in result.types_removed
    assert TypeEntry(name="InputRequiredResult", kind="struct") in result.types_added
    client_result = result.type_change("ClientResult")
    assert client_result is not None
    assert (client_result.kind_a, client_result.kind_b) == ("union", "alias")
    # Request types are tagged by `method` in both revisions: no change reported.
    assert result.type_change("CallToolRequest") is None


def test_2024_11_05_to_2025_11_25_tool_gains_title_and_icons() -> None:
    result = pinned("2024-11-05", "2025-11-25")
    gained = {f.wire_name: f for f in result.fields_only_in_b("Tool")}
    assert {"title", "icons"} <= gained.keys()
    assert gained["icons"].describe() == "list[Icon] | UnsetType (optional)"
    assert result.fields_only_in_a("Tool") == ()


def test_2024_11_05_to_2025_03_26_counts() -> None:
    result = pinned("2024-11-05", "2025-03-26")
    assert result.counts == {
        "methods_added": 0,
        "methods_removed": 0,
        "methods_changed": 0,
        "methods_unchanged": 24,
        "types_added": 9,
        "types_removed": 7,
        "types_changed": 13,
        "types_unchanged": 113,
    }
    assert [f.wire_name for f in result.fields_only_in_b("Tool")] == ["annotations"]

"""`client_messages`: what the HTTP client reads off the messages it carries,
without any HTTP."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcp_specgen_runtime.transports.http.client_messages import (
    cancel_notice,
    describe,
    envelope_of,
    error_object,
    excerpt,
    json_object,
    negotiated_version,
    replies,
    reply_with,
)

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
MODERN = "2026-07-28"


def encode(message: dict[str, Any]) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", **message})


def test_a_legacy_request_has_its_method_and_id_and_no_version() -> None:
    post = describe(encode({"id": 3, "method": "tools/list", "params": {}}))
    assert (post.method, post.request_ids, post.version) == ("tools/list", {3}, None)
    assert post.headers == {}
    assert post.label == "tools/list"


def test_a_2026_tools_call_has_its_headers_tool_and_arguments() -> None:
    params = {
        "name": "where",
        "arguments": {"region": "eu"},
        "_meta": {VERSION_KEY: MODERN},
    }
    post = describe(encode({"id": "a", "method": "tools/call", "params": params}))
    assert post.version == MODERN
    assert post.tool == "where"
    assert msgspec.json.decode(post.arguments) == {"region": "eu"}
    assert post.headers["Mcp-Method"] == "tools/call"
    assert post.headers["Mcp-Name"] == "where"
    assert envelope_of(post.params) == {VERSION_KEY: MODERN}


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_a_2026_tasks_request_names_its_task_in_mcp_name(method: str) -> None:
    """SEP-2663 routes the tasks extension's requests by task id."""
    params = {"taskId": "t-1", "_meta": {VERSION_KEY: MODERN}}
    post = describe(encode({"id": 1, "method": method, "params": params}))
    assert post.headers["Mcp-Method"] == method
    assert post.headers["Mcp-Name"] == "t-1"


def test_a_task_id_names_nothing_for_other_methods() -> None:
    params = {"taskId": "t-1", "_meta": {VERSION_KEY: MODERN}}
    post = describe(encode({"id": 1, "method": "tools/list", "params": params}))
    assert "Mcp-Name" not in post.headers


@pytest.mark.parametrize(
    ("message", "ids", "label"),
    [
        (
            b"[" + encode({"id": 1, "method": "a"}) + b"," + encode({"id": 2}) + b"]",
            {1},
            "a batch",
        ),
        (encode({"id": 1, "result": {}}), set[Any](), "a reply"),
        (b"not json", set[Any](), "a reply"),
        (encode({"id": True, "method": "ping"}), set[Any](), "ping"),
    ],
)
def test_batches_replies_and_odd_messages(
    message: bytes, ids: set[Any], label: str
) -> None:
    post = describe(message)
    assert post.request_ids == ids
    assert post.label == label
    assert post.version is None


def test_a_cancellation_names_its_request() -> None:
    assert describe(cancel_notice(9)).cancels == 9
    assert msgspec.json.decode(cancel_notice("x"))["params"] == {
        "requestId": "x",
        "reason": "cancelled",
    }


def test_replies_skip_requests_and_read_the_negotiated_version() -> None:
    found = replies(
        b"["
        + encode({"id": 1, "result": {"protocolVersion": "2025-11-25"}})
        + b","
        + encode({"id": 2, "method": "ping"})
        + b"]"
    )
    assert [reply.id for reply in found] == [1]
    assert negotiated_version(found) == "2025-11-25"
    assert negotiated_version(replies(encode({"id": 1, "result": {}}))) is None
    assert replies(b"{") == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            encode({"id": 1, "error": {"code": -1, "message": "x"}}),
            {"code": -1, "message": "x"},
        ),
        (encode({"id": 1, "error": {"code": -1}}), {"code": -1, "message": ""}),
        (encode({"id": 1, "error": {"code": True, "message": "x"}}), None),
        (encode({"id": 1, "result": {}}), None),
        (b"[]", None),
        (b"<html>", None),
    ],
)
def test_error_object(body: bytes, expected: dict[str, Any] | None) -> None:
    assert error_object(body) == expected


def test_reply_with_json_object_and_excerpt() -> None:
    reply = reply_with(4, {"code": -2, "message": "m"})
    assert json_object(reply) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -2, "message": "m"},
    }
    assert json_object(b"[1]") is None
    assert excerpt(b"  short \n") == "short"
    assert excerpt(b"x" * 300, 10) == "xxxxxxx..."

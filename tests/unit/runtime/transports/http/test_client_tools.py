"""`client_tools.ToolHeaders`: the `Mcp-Param-*` headers of 2026 tool calls,
from the tool listings the HTTP client passes on, without any HTTP."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcp_specgen_runtime.transports.http.client_messages import (
    Post,
    describe,
    replies,
)
from mcp_specgen_runtime.transports.http.client_tools import ToolHeaders

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
MODERN = "2026-07-28"
REGION = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
}
BAD = {"type": "object", "properties": {"n": {"type": "object", "x-mcp-header": "N"}}}


def listing(*tools: dict[str, Any], cursor: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"tools": list(tools)}
    if cursor is not None:
        result["nextCursor"] = cursor
    return {"jsonrpc": "2.0", "id": 1, "result": result}


def call(tool: str, **arguments: Any) -> Post:
    params = {"name": tool, "arguments": arguments, "_meta": {VERSION_KEY: MODERN}}
    return describe(
        msgspec.json.encode(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        )
    )


def noted(tools: ToolHeaders, answer: dict[str, Any]) -> dict[str, Any]:
    message = msgspec.json.encode(answer)
    decoded: dict[str, Any] = msgspec.json.decode(
        tools.note_listing(message, replies(message))
    )
    return decoded


def test_listed_tools_give_their_calls_headers() -> None:
    tools = ToolHeaders()
    assert tools.headers_for(call("where", region="eu")) == {}
    kept = noted(tools, listing({"name": "where", "inputSchema": REGION}))
    assert [tool["name"] for tool in kept["result"]["tools"]] == ["where"]
    assert tools.headers_for(call("where", region="eu")) == {"Mcp-Param-Region": "eu"}
    assert tools.headers_for(call("where")) == {}


def test_a_tool_with_invalid_annotations_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tools = ToolHeaders()
    kept = noted(
        tools,
        listing(
            {"name": "bad", "inputSchema": BAD},
            {"name": "where", "inputSchema": REGION},
        ),
    )
    assert [tool["name"] for tool in kept["result"]["tools"]] == ["where"]
    assert "tool 'bad' dropped" in caplog.text
    assert tools.headers_for(call("bad", n={})) == {}


@pytest.mark.anyio
async def test_refresh_reads_every_page_with_the_calls_envelope() -> None:
    pages = [
        listing({"name": "echo", "inputSchema": {"type": "object"}}, cursor="c2"),
        listing({"name": "where", "inputSchema": REGION}),
    ]
    fetched: list[dict[str, Any]] = []

    async def fetch(message: bytes) -> dict[str, Any] | None:
        fetched.append(msgspec.json.decode(message))
        return pages[len(fetched) - 1]

    tools = ToolHeaders()
    assert await tools.refresh(call("where", region="eu"), fetch)
    assert [f["method"] for f in fetched] == ["tools/list", "tools/list"]
    assert [f["params"].get("cursor") for f in fetched] == [None, "c2"]
    assert all(f["params"]["_meta"] == {VERSION_KEY: MODERN} for f in fetched)
    assert all(isinstance(f["id"], str) for f in fetched)
    # Listed again, nothing changes: no reason to send the call again.
    fetched.clear()
    pages.pop(0)
    assert not await tools.refresh(call("where", region="eu"), fetch)


@pytest.mark.anyio
async def test_refresh_is_only_for_2026_tool_calls() -> None:
    async def fetch(message: bytes) -> dict[str, Any] | None:
        raise AssertionError("no listing expected")

    legacy = describe(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'
    )
    assert not await ToolHeaders().refresh(legacy, fetch)

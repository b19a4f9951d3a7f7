"""Drive a Streamable HTTP MCP server with the official Python SDK's client
(`mcp==2.3.0`).

Run it with the peer venv's python:

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_http_client.py \
        MODE URL MESSAGE

MODE is the SDK's `Client(mode=...)`: `legacy` (the initialize handshake, then
a session: `Mcp-Session-Id`, the standalone GET stream, DELETE at the end),
`auto` (probe `server/discover`, fall back to initialize) or a modern protocol
version (`2026-07-28`: adopt it without a probe; every request is its own
POST carrying `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`). `Client`
given a URL connects with the SDK's `streamable_http_client`.

The client lists the tools, calls `echo` with {"message": MESSAGE}, then takes
two error paths: a call of an unknown tool, and `prompts/list` (a method the
server does not serve). It prints one JSON object:

    {"protocol_version", "server_info", "tools", "echo": {"is_error", "texts",
     "structured"}, "unknown_tool", "list_prompts"}

where each error path is {"error": {"code", "message"}} (the `MCPError` the
SDK raised) or {"result": ...} when the request succeeded. When connecting
fails with an `MCPError` it prints {"connected": false, "error": {"code",
"message"}} and exits 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent


def summary(result: CallToolResult) -> dict[str, Any]:
    return {
        "is_error": bool(result.is_error),
        "texts": [c.text for c in result.content if isinstance(c, TextContent)],
        "structured": result.structured_content,
    }


async def outcome(request: Awaitable[Any]) -> dict[str, Any]:
    """The result of a request, or the JSON-RPC error it got."""
    try:
        result = await request
    except MCPError as exc:
        return {"error": {"code": exc.error.code, "message": exc.error.message}}
    if isinstance(result, CallToolResult):
        return {"result": summary(result)}
    return {"result": result.model_dump(mode="json", by_alias=True)}


async def run(mode: str, url: str, message: str) -> dict[str, Any]:
    async with Client(url, mode=mode, read_timeout_seconds=20) as client:
        tools = await client.list_tools()
        echo = await client.call_tool("echo", {"message": message})
        info = client.server_info
        return {
            "protocol_version": client.protocol_version,
            "server_info": None if info is None else info.model_dump(mode="json"),
            "tools": sorted(tool.name for tool in tools.tools),
            "echo": summary(echo),
            "unknown_tool": await outcome(client.call_tool("no-such-tool", {})),
            "list_prompts": await outcome(client.list_prompts()),
        }


def first_leaf(group: BaseExceptionGroup[MCPError]) -> MCPError:
    """The first error of a (possibly nested) exception group."""
    found = group.exceptions[0]
    return first_leaf(found) if isinstance(found, BaseExceptionGroup) else found


def main() -> None:
    args = sys.argv[1:]
    if len(args) != 3:
        sys.exit(__doc__)
    mode, url, message = args
    try:
        report = anyio.run(run, mode, url, message)
    except* MCPError as group:
        error = first_leaf(group)
        refused = {"code": error.error.code, "message": error.error.message}
        print(json.dumps({"connected": False, "error": refused}))
        sys.exit(2)
    print(json.dumps({"connected": True, **report}))


if __name__ == "__main__":
    main()

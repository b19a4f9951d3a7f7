"""Drive an stdio MCP server with the official Python SDK's client (`mcp==2.3.0`).

Run it with the peer venv's python:

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_client.py \
        MODE MESSAGE -- COMMAND [ARG ...]

MODE is the SDK's `Client(mode=...)`: `legacy` (the initialize handshake), `auto`
(probe `server/discover`, fall back to initialize) or a modern protocol version
(`2026-07-28`: adopt it without a probe). The client spawns COMMAND, lists the
tools, calls `echo` with {"message": MESSAGE} and prints one JSON object:
{"protocol_version", "server_info", "tools", "echo": {"is_error", "texts"}}.
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent


async def run(mode: str, message: str, command: list[str]) -> dict[str, object]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params, mode=mode, read_timeout_seconds=20) as client:
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"message": message})
        info = client.server_info
        return {
            "protocol_version": client.protocol_version,
            "server_info": None if info is None else info.model_dump(mode="json"),
            "tools": sorted(tool.name for tool in tools.tools),
            "echo": {
                "is_error": bool(result.is_error),
                "texts": [c.text for c in result.content if isinstance(c, TextContent)],
            },
        }


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 4 or args[2] != "--":
        sys.exit(__doc__)
    mode, message, command = args[0], args[1], args[3:]
    print(json.dumps(anyio.run(run, mode, message, command)))


if __name__ == "__main__":
    main()

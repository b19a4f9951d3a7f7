"""A dual-era MCP server over stdio: `echo` for 2025-06-18, 2025-11-25 and 2026-07-28.

Every revision serves one tool, `echo`, answering `arguments.message` as text
(and, where the revision has it, as `structuredContent: {"result": message}`).
The unit tests import the handler classes; run as a script it serves a
`ServerSession` with all three on stdin/stdout until stdin closes.

Usage: echo_session.py [VERSION ...]   (default: all three revisions)
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from mcp_codegen_runtime.jsonrpc import Connection
from mcp_codegen_runtime.session import ServerSession
from mcp_codegen_runtime.transports.stdio import stdio_server
from mcp_codegen_runtime.wire import convert
from mcp_codegen_types import v2025_06_18, v2025_11_25, v2026_07_28

NAME = "mcp-codegen-session-echo"
VERSION = "1.0.0"
INSTRUCTIONS = "Call echo with a message."
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


def _message(arguments: dict[str, Any] | Any) -> str:
    return str((arguments or {}).get("message", ""))


class Echo0618(v2025_06_18.ServerHandlers):
    async def tools_list(
        self, params: v2025_06_18.ListToolsRequestParams
    ) -> v2025_06_18.ListToolsResult:
        tool = v2025_06_18.Tool(
            name="echo",
            description="Echo a message",
            input_schema=convert(INPUT_SCHEMA, v2025_06_18.ToolInputSchema),
        )
        return v2025_06_18.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2025_06_18.CallToolRequestParams
    ) -> v2025_06_18.CallToolResult:
        text = _message(params.arguments)
        return v2025_06_18.CallToolResult(
            content=[v2025_06_18.TextContent(text=text)],
            structured_content={"result": text},
            is_error=False,
        )


class Echo1125(v2025_11_25.ServerHandlers):
    async def tools_list(
        self, params: v2025_11_25.PaginatedRequestParams
    ) -> v2025_11_25.ListToolsResult:
        tool = v2025_11_25.Tool(
            name="echo",
            description="Echo a message",
            input_schema=convert(INPUT_SCHEMA, v2025_11_25.ToolInputSchema),
        )
        return v2025_11_25.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        text = _message(params.arguments)
        return v2025_11_25.CallToolResult(
            content=[v2025_11_25.TextContent(text=text)],
            structured_content={"result": text},
            is_error=False,
        )


class Echo2026(v2026_07_28.ServerHandlers):
    async def tools_list(
        self, params: v2026_07_28.PaginatedRequestParams
    ) -> v2026_07_28.ListToolsResult:
        tool = v2026_07_28.Tool(
            name="echo",
            description="Echo a message",
            input_schema=convert(INPUT_SCHEMA, v2026_07_28.ToolInputSchema),
        )
        return v2026_07_28.ListToolsResult(tools=[tool], cache_scope="public", ttl_ms=0)

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        text = _message(params.arguments)
        return v2026_07_28.CallToolResult(
            content=[v2026_07_28.TextContent(text=text)],
            structured_content={"result": text},
            is_error=False,
        )


HANDLERS = {
    "2025-06-18": Echo0618,
    "2025-11-25": Echo1125,
    "2026-07-28": Echo2026,
}


def session(*versions: str) -> ServerSession:
    """A session serving the given revisions (all three when none are named)."""
    chosen = versions or tuple(HANDLERS)
    return ServerSession(
        [HANDLERS[version]() for version in chosen],
        name=NAME,
        version=VERSION,
        instructions=INSTRUCTIONS,
    )


async def main(versions: list[str]) -> None:
    served = session(*versions)
    async with (
        stdio_server() as transport,
        Connection(transport, served.handler()) as connection,
    ):
        await connection.wait_closed()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])

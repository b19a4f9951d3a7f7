"""A dual-era MCP server over stdio: `echo` for every revision from 2024-11-05.

Every revision serves one tool, `echo`, answering `arguments.message` as text
(and, where the revision has it, as `structuredContent: {"result": message}`);
any other tool name is refused with -32602 "Unknown tool: NAME". The unit tests
import the handler classes; run as a script it serves a `ServerSession` on
stdin/stdout until stdin closes.

Usage: echo_session.py [VERSION ...]
    (default: 2025-06-18, 2025-11-25 and 2026-07-28; any of `HANDLERS` may be named)
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from mcp_specgen_runtime.codec.wire import convert
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.stdio import stdio_server
from mcp_specgen_types import (
    v2024_11_05,
    v2025_03_26,
    v2025_06_18,
    v2025_11_25,
    v2026_07_28,
)

NAME = "mcp-codegen-session-echo"
VERSION = "1.0.0"
INSTRUCTIONS = "Call echo with a message."
TOOL = "echo"
DESCRIPTION = "Echo a message"
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


def _message(name: str, arguments: dict[str, Any] | Any) -> str:
    """The message to echo; -32602 when `name` is not the echo tool."""
    if name != TOOL:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {name}")
    return str((arguments or {}).get("message", ""))


class Echo1105(v2024_11_05.ServerHandlers):
    async def tools_list(
        self, params: v2024_11_05.ListToolsRequestParams
    ) -> v2024_11_05.ListToolsResult:
        tool = v2024_11_05.Tool(
            name=TOOL,
            description=DESCRIPTION,
            input_schema=convert(INPUT_SCHEMA, v2024_11_05.ToolInputSchema),
        )
        return v2024_11_05.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2024_11_05.CallToolRequestParams
    ) -> v2024_11_05.CallToolResult:
        text = _message(params.name, params.arguments)
        return v2024_11_05.CallToolResult(
            content=[v2024_11_05.TextContent(text=text)], is_error=False
        )


class Echo0326(v2025_03_26.ServerHandlers):
    async def tools_list(
        self, params: v2025_03_26.ListToolsRequestParams
    ) -> v2025_03_26.ListToolsResult:
        tool = v2025_03_26.Tool(
            name=TOOL,
            description=DESCRIPTION,
            input_schema=convert(INPUT_SCHEMA, v2025_03_26.ToolInputSchema),
        )
        return v2025_03_26.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2025_03_26.CallToolRequestParams
    ) -> v2025_03_26.CallToolResult:
        text = _message(params.name, params.arguments)
        return v2025_03_26.CallToolResult(
            content=[v2025_03_26.TextContent(text=text)], is_error=False
        )


class Echo0618(v2025_06_18.ServerHandlers):
    async def tools_list(
        self, params: v2025_06_18.ListToolsRequestParams
    ) -> v2025_06_18.ListToolsResult:
        tool = v2025_06_18.Tool(
            name=TOOL,
            description=DESCRIPTION,
            input_schema=convert(INPUT_SCHEMA, v2025_06_18.ToolInputSchema),
        )
        return v2025_06_18.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2025_06_18.CallToolRequestParams
    ) -> v2025_06_18.CallToolResult:
        text = _message(params.name, params.arguments)
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
            name=TOOL,
            description=DESCRIPTION,
            input_schema=convert(INPUT_SCHEMA, v2025_11_25.ToolInputSchema),
        )
        return v2025_11_25.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        text = _message(params.name, params.arguments)
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
            name=TOOL,
            description=DESCRIPTION,
            input_schema=convert(INPUT_SCHEMA, v2026_07_28.ToolInputSchema),
        )
        return v2026_07_28.ListToolsResult(tools=[tool], cache_scope="public", ttl_ms=0)

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        text = _message(params.name, params.arguments)
        return v2026_07_28.CallToolResult(
            content=[v2026_07_28.TextContent(text=text)],
            structured_content={"result": text},
            is_error=False,
        )


HANDLERS: dict[str, type[Any]] = {
    "2024-11-05": Echo1105,
    "2025-03-26": Echo0326,
    "2025-06-18": Echo0618,
    "2025-11-25": Echo1125,
    "2026-07-28": Echo2026,
}
"""Every revision the script can serve: version -> handler class."""

DEFAULT = ("2025-06-18", "2025-11-25", "2026-07-28")
"""The revisions served when none are named."""


def session(*versions: str) -> ServerSession:
    """A session serving the given revisions (`DEFAULT` when none are named)."""
    chosen = versions or DEFAULT
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

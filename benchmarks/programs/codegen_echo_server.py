"""A stdio MCP echo server built on our runtime, for the stdio benchmark's
`ours (ServerSession)` row: the runtime without the `App` layer the scaffold
server (row `ours`) is built on.

One tool, `echo` with input `{message: string}`, answering the message as one
text content block. Dual era: a `ServerSession` serving 2025-11-25 (the
`initialize` handshake) and 2026-07-28 (the per-request envelope), over
`stdio_server()` until stdin closes.

    .venv/bin/python benchmarks/programs/codegen_echo_server.py
"""

from __future__ import annotations

from typing import Any

import anyio

from mcp_specgen_runtime.codec.wire import convert
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.stdio import stdio_server
from mcp_specgen_types import v2025_11_25, v2026_07_28

NAME = "mcp-codegen-echo"
VERSION = "1.0.0"
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


def _message(arguments: dict[str, Any] | Any) -> str:
    return str((arguments or {}).get("message", ""))


class Echo1125(v2025_11_25.ServerHandlers):
    """The 2025-11-25 handlers: `tools/list` and `tools/call`."""

    async def tools_list(
        self, params: v2025_11_25.PaginatedRequestParams
    ) -> v2025_11_25.ListToolsResult:
        tool = v2025_11_25.Tool(
            name="echo",
            description="Return the message unchanged.",
            input_schema=convert(INPUT_SCHEMA, v2025_11_25.ToolInputSchema),
        )
        return v2025_11_25.ListToolsResult(tools=[tool])

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        text = _message(params.arguments)
        return v2025_11_25.CallToolResult(content=[v2025_11_25.TextContent(text=text)])


class Echo2026(v2026_07_28.ServerHandlers):
    """The 2026-07-28 handlers: `tools/list` and `tools/call`."""

    async def tools_list(
        self, params: v2026_07_28.PaginatedRequestParams
    ) -> v2026_07_28.ListToolsResult:
        tool = v2026_07_28.Tool(
            name="echo",
            description="Return the message unchanged.",
            input_schema=convert(INPUT_SCHEMA, v2026_07_28.ToolInputSchema),
        )
        return v2026_07_28.ListToolsResult(tools=[tool], cache_scope="public", ttl_ms=0)

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        text = _message(params.arguments)
        return v2026_07_28.CallToolResult(content=[v2026_07_28.TextContent(text=text)])


def session() -> ServerSession:
    """The session serving both revisions."""
    return ServerSession([Echo1125(), Echo2026()], name=NAME, version=VERSION)


async def main() -> None:
    """Serve one connection on stdin/stdout until stdin closes."""
    served = session()
    async with (
        stdio_server() as transport,
        Connection(transport, served.handler()) as connection,
    ):
        await connection.wait_closed()


if __name__ == "__main__":
    anyio.run(main)

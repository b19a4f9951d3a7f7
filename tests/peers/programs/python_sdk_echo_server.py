"""An stdio MCP server built with the official Python SDK (PyPI `mcp==2.3.0`).

Run it with the peer venv's python (`benchmarks.peers.ensure_python_peers()`):

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_echo_server.py

One tool, `echo(message: str) -> str`, answering the message unchanged. mcp 2.x
renamed FastMCP to `mcp.server.mcpserver.MCPServer` (importing
`mcp.server.fastmcp` raises ModuleNotFoundError with a migration hint). The
server serves both eras on one stdio connection: the initialize handshake
(2024-11-05 .. 2025-11-25) and the 2026-07-28 per-request envelope
(`server/discover`); the client's first request decides which.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-sdk-echo", version="1.0.0")


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


if __name__ == "__main__":
    server.run("stdio")

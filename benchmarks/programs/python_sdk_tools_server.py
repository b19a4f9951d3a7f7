"""A stdio MCP server of N tools built with the official Python SDK (PyPI
`mcp==2.3.0`), for the scaling benchmark.

Run it with the peer venv's python (`benchmarks.peers.ensure_python_peers()`):

    .cache/peers/venv/bin/python benchmarks/programs/python_sdk_tools_server.py N

Registers `N` tools with `MCPServer.add_tool`, `tool_0000` ... , each taking
`(message: str, count: int = 1)` and answering the message `count` times, with
a one-line description and `structured_output=False` (no `outputSchema`, as
the other contenders list none). The SDK does not paginate `tools/list`.

`mcp` is imported through importlib, typed `Any`: the project's virtualenv,
where the type checkers run, does not have it.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


def tool_name(index: int) -> str:
    """The name of tool `index`, as every scaling server spells it."""
    return f"tool_{index:04d}"


def repeat(message: str, count: int = 1) -> str:
    """Return the message, `count` times."""
    return message * count


def main(argv: list[str]) -> None:
    """Serve `N` tools (the only argument) on stdin/stdout."""
    if len(argv) != 1 or not argv[0].isdigit():
        sys.exit(__doc__)
    mcpserver: Any = importlib.import_module("mcp.server.mcpserver")
    server: Any = mcpserver.MCPServer("python-sdk-tools", version="1.0.0")
    for index in range(int(argv[0])):
        server.add_tool(
            repeat,
            name=tool_name(index),
            description=f"Tool {index}: return the message, count times.",
            structured_output=False,
        )
    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])

"""A stdio MCP server of N tools built with our `App`, for the scaling benchmark.

Registers `N` tools (the only argument), `tool_0000` ... , each taking
`{message: string, count?: integer}` and answering the message `count` times,
with a one-line description; `page_size` is left at None, so `tools/list`
answers every tool in one page. Served over stdio until stdin closes.

    .venv/bin/python benchmarks/programs/app_tools_server.py N
"""

from __future__ import annotations

import sys

from mcp_specgen_runtime.app import App


def tool_name(index: int) -> str:
    """The name of tool `index`, as every scaling server spells it."""
    return f"tool_{index:04d}"


async def repeat(message: str, count: int = 1) -> str:
    """Return the message, `count` times.

    `async def`, like the scaffold's `echo` and the TypeScript servers'
    handlers: a plain `def` would run in a worker thread (the App's default
    for code that may block), a 35-60 µs hop that measures the thread pool,
    not the protocol stack."""
    return message * count


def make_app(n: int) -> App:
    """The app with `n` tools, all listed in one page."""
    app = App("mcp-codegen-tools", version="1.0.0", page_size=None)
    for index in range(n):
        description = f"Tool {index}: return the message, count times."
        app.tool(tool_name(index), description=description)(repeat)
    return app


def main(argv: list[str]) -> None:
    """Serve `N` tools (the only argument) on stdin/stdout."""
    if len(argv) != 1 or not argv[0].isdigit():
        sys.exit(__doc__)
    make_app(int(argv[0])).run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])

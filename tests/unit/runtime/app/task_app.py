"""An `App` whose tools run as tasks (2025-11-25), for the task tests and the
TypeScript client's interop test.

Tools: `slow` (optional) sleeps `seconds` then echoes `text`; `must`
(required) answers "done"; `plain` (no task support) answers "plain";
`ask` (optional) elicits a name and greets it; `fail` (optional) is a tool
error (`isError: true`); `progress` (optional) reports progress twice.
Usage: task_app.py            (stdio)
       task_app.py http PORT  (Streamable HTTP at /mcp)
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from mcp_specgen_runtime.app import App, Context


def make_app(**options: Any) -> App:
    """The app, with `App` options (e.g. `task_options`)."""
    app = App("tasks", version="1.0.0", **options)

    @app.tool(task_support="optional")
    async def slow(text: str, seconds: float = 0.0) -> str:
        """Echo `text` after `seconds`."""
        await anyio.sleep(seconds)
        return text

    @app.tool(task_support="required")
    async def must() -> str:
        """Only runs as a task."""
        return "done"

    @app.tool()
    async def plain() -> str:
        """Never runs as a task."""
        return "plain"

    @app.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        """Ask the user's name, then greet them."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Your name?", schema)
        content = answer.get("content") or {}
        return f"hello {content.get('name')}"

    @app.tool(task_support="optional")
    async def fail() -> str:
        """A tool error."""
        raise ValueError("no luck")

    @app.tool(task_support="optional")
    async def progress(ctx: Context) -> str:
        """Report progress twice."""
        await ctx.report_progress(1, 2)
        await ctx.report_progress(2, 2)
        return "progressed"

    return app


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        make_app().run("http", port=int(sys.argv[2]))
    else:
        make_app().run()

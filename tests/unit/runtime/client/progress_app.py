"""An `App` with one tool reporting progress, speaking only the revisions
named (for the revision-pair tests); run as a program it serves stdio.

Usage: progress_app.py VERSION...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mcp_specgen_runtime.app import App, Context

STEPS = 3


def make_app(versions: Sequence[str], kind: type[App] = App) -> App:
    """The app (a `kind`), serving only `versions`."""
    app = kind("progress", version="1.0.0", versions=list(versions))

    @app.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Report progress `steps` times, then answer how many."""
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return f"counted {steps}"

    return app


if __name__ == "__main__":
    make_app(sys.argv[1:]).run("stdio")

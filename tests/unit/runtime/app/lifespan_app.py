"""An `App` with a lifespan, served by `app.run()` for the lifespan and
request-context tests.

Usage: lifespan_app.py LOG [stdio|http PORT]. The lifespan appends "enter"
and "exit" lines to LOG (with $LIFESPAN_FAIL set, it fails instead of
entering). Tools: `events` answers the LOG's lines as the call sees them,
`whoami` what `ctx.http` says (JSON, null over stdio).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from mcp_specgen_runtime.app import App, Context


@dataclass
class State:
    log: Path


@asynccontextmanager
async def lifespan(app: App) -> AsyncIterator[State]:
    log = Path(sys.argv[1])
    if os.environ.get("LIFESPAN_FAIL"):
        raise RuntimeError("the database is down")
    path = anyio.Path(log)
    async with await path.open("a") as out:
        await out.write("enter\n")
    try:
        yield State(log)
    finally:
        async with await path.open("a") as out:
            await out.write("exit\n")


app = App("lifespan-app", lifespan=lifespan)


@app.tool()
def events(ctx: Context[State]) -> str:
    """The lifespan's events so far."""
    return ",".join(ctx.lifespan.log.read_text().split())


@app.tool()
def whoami(ctx: Context) -> str:
    """What ctx.http says."""
    http = ctx.http
    if http is None:
        return "null"
    return json.dumps({"path": http.path, "tenant": http.headers.get("x-tenant")})


if __name__ == "__main__":
    if sys.argv[2:3] == ["http"]:
        app.run("http", port=int(sys.argv[3]))
    else:
        app.run()

"""An `App` keeping its tasks in an SQLite file, over Streamable HTTP, for
the restart tests (the test kills it with SIGKILL and starts another), or in
Redis, for the tests of several servers on one Redis.

Usage: task_restart_server.py DB|REDIS_URL#PREFIX PORT [CLOCK_OFFSET_S]

The caller is whoever the `x-test-user` header names (a stand-in for OAuth,
so a task's owner is the same before and after a restart). Tools, both
`task_support="optional"`: `finish(text)` answers at once; `hang()` never
answers. CLOCK_OFFSET_S moves the store's clock forward (expiry without
waiting).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_specgen_runtime.stores.sqlite_tasks import SQLiteTaskStore
from mcp_specgen_runtime.stores.tasks import TaskStore
from mcp_specgen_runtime.transports.http.auth import HttpRequest

path, port, *rest = sys.argv[1:]
offset = float(rest[0]) if rest else 0.0
store: TaskStore
if path.startswith("redis://"):
    url, _, prefix = path.partition("#")
    store = RedisTaskStore(url, prefix=prefix, clock=lambda: time.time() + offset)
else:
    store = SQLiteTaskStore(path, clock=lambda: time.time() + offset)
app = App("restart", version="1.0.0", task_store=store)


@app.tool(task_support="optional")
async def finish(text: str) -> str:
    """Answer at once."""
    return text


@app.tool(task_support="optional")
async def hang() -> str:
    """Never answer."""
    await anyio.sleep_forever()
    return ""


async def user(request: HttpRequest) -> Any:
    name = request.headers.get("x-test-user")
    return None if name is None else {"sub": name}


if __name__ == "__main__":
    app.run("http", port=int(port), authenticate=user)

"""What a task costs: a task-augmented `tools/call` (create, then
`tasks/result`) against a plain one, and the memory of one stored task.

    python -m benchmarks.task_cost [CALLS]

Both calls go to an `App` over the memory transport (2025-11-25), so the
figures are the runtime's own work, no I/O. Memory is measured with
tracemalloc over `CALLS` completed tasks kept in the in-memory store.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from typing import Any

import anyio

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports import memory_pair

Result = dict[str, Any]


def make_app() -> App:
    app = App("cost", task_options={"rate": None, "max_active_per_owner": None})

    @app.tool(task_support="optional", run_in_thread=False)
    def echo(text: str) -> str:
        return text

    return app


async def measure(calls: int) -> dict[str, float]:
    app = make_app()
    client_end, server_end = memory_pair()
    plain = {"name": "echo", "arguments": {"text": "hello"}}
    augmented = {**plain, "task": {}}
    async with (
        Connection(server_end, app.session().handler()),
        ClientSession(
            client_end, name="b", version="1", versions=["2025-11-25"]
        ) as session,
    ):
        request = session.connection.request
        for _ in range(200):  # warm up both paths
            await request("tools/call", plain, Result)
            created = await request("tools/call", augmented, Result)
            await request("tasks/result", {"taskId": created["task"]["taskId"]}, Result)
        start = time.perf_counter()
        for _ in range(calls):
            await request("tools/call", plain, Result)
        plain_s = (time.perf_counter() - start) / calls
        start = time.perf_counter()
        for _ in range(calls):
            created = await request("tools/call", augmented, Result)
            await request("tasks/result", {"taskId": created["task"]["taskId"]}, Result)
        task_s = (time.perf_counter() - start) / calls
        await app.tasks.store.aclose()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            created = await request("tools/call", augmented, Result)
            await request("tasks/result", {"taskId": created["task"]["taskId"]}, Result)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return {
        "plain_us": plain_s * 1e6,
        "task_us": task_s * 1e6,
        "bytes_per_task": (after - before) / calls,
    }


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    found = anyio.run(measure, calls)
    print(f"plain tools/call:               {found['plain_us']:8.1f} µs")
    print(f"task tools/call + tasks/result: {found['task_us']:8.1f} µs")
    added = found["task_us"] - found["plain_us"]
    print(f"added by the task:              {added:8.1f} µs")
    print(f"memory per stored task:         {found['bytes_per_task']:8.0f} bytes")


if __name__ == "__main__":
    main()

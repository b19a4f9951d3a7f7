"""What a 2026 task costs (the tasks extension, SEP-2663): a `tools/call`
answered with a task, then `tasks/get` until it is completed, against a plain
2026 `tools/call` of the same tool.

    python -m benchmarks.tasks_extension_cost [CALLS]

Both go to an `App` over the memory transport with raw 2026 requests (the
`_meta` envelope, the extension declared or not), so the figures are the
runtime's own work, no I/O. The tool answers at once, so one or two polls
reach `completed`; `polls` says how many it took on average.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio
import anyio.lowlevel

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.tasks.wire2026 import TASKS
from mcp_specgen_runtime.transports import memory_pair

Result = dict[str, Any]
MODERN = "2026-07-28"


def make_app() -> App:
    app = App("cost", task_options={"rate": None, "max_active_per_owner": None})

    @app.tool(task_support="optional", run_in_thread=False)
    def echo(text: str) -> str:
        return text

    return app


def call_params(*, tasks: bool) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"extensions": {TASKS: {}}} if tasks else {}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    return {"name": "echo", "arguments": {"text": "hello"}, "_meta": meta}


async def measure(calls: int) -> dict[str, float]:
    """Microseconds per plain call and per task (create and poll to the end),
    and the polls a task took."""
    app = make_app()
    client_end, server_end = memory_pair()
    plain, as_task = call_params(tasks=False), call_params(tasks=True)
    polls = 0

    async with (
        Connection(server_end, app.session().handler()),
        Connection(client_end) as client,
    ):

        async def run_task() -> None:
            nonlocal polls
            created = await client.request("tools/call", as_task, Result)
            get = {"taskId": created["taskId"], "_meta": as_task["_meta"]}
            while True:
                polls += 1
                task = await client.request("tasks/get", get, Result)
                if task["status"] == "completed":
                    return
                await anyio.lowlevel.checkpoint()

        for _ in range(100):  # warm up both paths
            await client.request("tools/call", plain, Result)
            await run_task()
        start = time.perf_counter()
        for _ in range(calls):
            await client.request("tools/call", plain, Result)
        plain_s = (time.perf_counter() - start) / calls
        polls = 0
        start = time.perf_counter()
        for _ in range(calls):
            await run_task()
        task_s = (time.perf_counter() - start) / calls
        await app.tasks.aclose()
    return {
        "plain_us": plain_s * 1e6,
        "task_us": task_s * 1e6,
        "polls": polls / calls,
    }


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    found = anyio.run(measure, calls)
    print(f"plain 2026 tools/call:            {found['plain_us']:8.1f} µs")
    print(f"task (create + tasks/get to end): {found['task_us']:8.1f} µs")
    print(f"polls per task:                   {found['polls']:8.2f}")


if __name__ == "__main__":
    main()

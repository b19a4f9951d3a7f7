"""Another process on a task store file, for the tests that need one.

Usage:
  sqlite_worker.py hold DB NOW
      create `running` (working) and `done` (completed) tasks created at
      NOW with a 60 s TTL, print "ready", then wait to be killed;
  sqlite_worker.py race DB NOW STATUS TASK_ID...
      wait for a line on stdin, then try to move each task to STATUS;
      print the JSON list of the ids this process moved.
"""

from __future__ import annotations

import json
import sys

import anyio

from mcp_specgen_runtime.stores.sqlite_tasks import SQLiteTaskStore
from mcp_specgen_runtime.stores.tasks import TaskRecord

RESULT = {"content": [{"type": "text", "text": "done"}], "isError": False}


def task(task_id: str, created_at: float) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        owner="alice",
        era="2025-11-25",
        method="tools/call",
        created_at=created_at,
        last_updated_at=created_at,
        ttl_ms=60_000,
        poll_interval_ms=1000,
    )


async def hold(store: SQLiteTaskStore, created_at: float) -> None:
    await store.create(task("running", created_at))
    await store.create(task("done", created_at))
    await store.update("done", status="completed", result=RESULT)
    print("ready", flush=True)
    await anyio.sleep_forever()


async def race(store: SQLiteTaskStore, status: str, task_ids: list[str]) -> None:
    await store.get("warm-up")  # open the file before the start line
    print("ready", flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)
    won = [
        task_id
        for task_id in task_ids
        if await store.update(task_id, status=status, result={"by": status})
    ]
    print(json.dumps(won), flush=True)


async def main(argv: list[str]) -> None:
    command, path, now, *rest = argv
    # The store's clock stands still: the tests decide what time it is.
    store = SQLiteTaskStore(path, clock=lambda: float(now))
    try:
        if command == "hold":
            await hold(store, float(now))
        else:
            await race(store, rest[0], rest[1:])
    finally:
        await store.aclose()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])

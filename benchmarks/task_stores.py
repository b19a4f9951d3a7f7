"""Task stores: operations per second and bytes on disk per task.

`python -m benchmarks.task_stores [--quick]`. One process, one event loop
(asyncio): each operation is awaited as the task manager awaits it, so the
SQLite figures include the hop to the store's worker thread; "thread hop"
is that hop alone (a no-op through the same kind of limiter), the floor of
any store that runs blocking calls off the loop. The memory store is the
ceiling. Operations, in order, on `tasks` tasks:

- create: a new working task (2025-11-25 `tools/call`, 60 s TTL);
- get: a random known task;
- update: a status message on a working task (stays active);
- finish: working -> completed with a small `CallToolResult`;
- list: a page of 50 of one owner's tasks;
- get x16: the same gets from 16 concurrent callers (total ops/s).

Redis: `RedisTaskStore` on a private `redis-server` on loopback (started by
`benchmarks.redis_server`, installed when missing), one connection per
concurrent caller; "redis round trip" is a PING through the same client, the
floor of a store operation (each is one command or script). Its size is the
growth of Redis's `used_memory` per task (record, index and expiry members).

Size: the SQLite file after a checkpoint (WAL folded in), per task, for the
finished tasks above, and for tasks whose result carries 4 KiB of text.
"""

from __future__ import annotations

import argparse
import random
import secrets
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_specgen_runtime.stores.sqlite_tasks import SQLiteTaskStore
from mcp_specgen_runtime.stores.tasks import MemoryTaskStore, TaskRecord, TaskStore

from ._common import table
from .redis_server import RedisServer

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ._common import Echo

OWNERS = 10
CONCURRENCY = 16


def result_of(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def new_task(owner: int) -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=secrets.token_urlsafe(16),
        owner=f"owner-{owner}",
        era="2025-11-25",
        method="tools/call",
        created_at=now,
        last_updated_at=now,
        ttl_ms=60_000,
        poll_interval_ms=1_000,
    )


async def timed(ops: int, body: Callable[[], Awaitable[None]]) -> float:
    """Operations per second of `body`, which does `ops` operations."""
    started = time.perf_counter()
    await body()
    return ops / (time.perf_counter() - started)


async def measure(store: TaskStore, tasks: int) -> dict[str, float]:
    """Ops/s of each operation on `store`, on `tasks` tasks."""
    records = [new_task(n % OWNERS) for n in range(tasks)]
    ids = [r.task_id for r in records]
    picks = [random.choice(ids) for _ in range(tasks)]

    async def create() -> None:
        for record in records:
            await store.create(record)

    async def get() -> None:
        for task_id in picks:
            await store.get(task_id)

    async def update() -> None:
        for task_id in ids:
            await store.update(task_id, status_message="halfway")

    async def finish() -> None:
        for task_id in ids:
            await store.update(task_id, status="completed", result=result_of("ok"))

    pages = max(tasks // 50, 1)

    async def listing() -> None:
        for n in range(pages):
            await store.list(f"owner-{n % OWNERS}")

    async def concurrent_get() -> None:
        share = len(picks) // CONCURRENCY

        async def caller(part: list[str]) -> None:
            for task_id in part:
                await store.get(task_id)

        async with anyio.create_task_group() as group:
            for c in range(CONCURRENCY):
                group.start_soon(caller, picks[c * share : (c + 1) * share])

    return {
        "create": await timed(tasks, create),
        "get": await timed(tasks, get),
        "update": await timed(tasks, update),
        "finish": await timed(tasks, finish),
        "list": await timed(pages, listing),
        f"get x{CONCURRENCY}": await timed(
            tasks // CONCURRENCY * CONCURRENCY, concurrent_get
        ),
    }


async def thread_hop(calls: int) -> float:
    limiter = anyio.CapacityLimiter(1)

    async def body() -> None:
        for _ in range(calls):
            await anyio.to_thread.run_sync(int, limiter=limiter)

    return await timed(calls, body)


def file_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (size,) = db.execute("PRAGMA page_size").fetchone()
    return int(pages) * int(size)


async def bytes_per_task(folder: Path, tasks: int, text: str) -> float:
    path = folder / f"size-{len(text)}.db"
    store = SQLiteTaskStore(path)
    for n in range(tasks):
        record = new_task(n % OWNERS)
        await store.create(record)
        await store.update(record.task_id, status="completed", result=result_of(text))
    await store.aclose()
    empty = folder / "empty.db"
    blank = SQLiteTaskStore(empty)
    await blank.purge_expired()
    await blank.aclose()
    return (file_bytes(path) - file_bytes(empty)) / tasks


async def redis_round_trip(url: str, calls: int) -> float:
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:

        async def body() -> None:
            for _ in range(calls):
                await client.execute_command("PING")

        return await timed(calls, body)
    finally:
        await client.aclose()


async def redis_bytes_per_task(url: str, tasks: int, text: str) -> float:
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    store = RedisTaskStore(url, prefix=f"size-{len(text)}:")
    try:
        await client.execute_command("FLUSHALL")
        before = (await client.info("memory"))["used_memory"]
        for n in range(tasks):
            record = new_task(n % OWNERS)
            await store.create(record)
            await store.update(
                record.task_id, status="completed", result=result_of(text)
            )
        after = (await client.info("memory"))["used_memory"]
        return (after - before) / tasks
    finally:
        await store.aclose()
        await client.aclose()


async def run_async(quick: bool) -> dict[str, Any]:
    tasks, rounds = (500, 1) if quick else (5_000, 3)
    figures: dict[str, Any] = {"tasks": tasks, "rounds": rounds}
    samples: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, RedisServer() as redis:
        folder = Path(tmp)
        for round_no in range(rounds):
            stores: dict[str, TaskStore] = {
                "memory": MemoryTaskStore(),
                "sqlite (NORMAL)": SQLiteTaskStore(folder / f"n{round_no}.db"),
                "sqlite (FULL)": SQLiteTaskStore(
                    folder / f"f{round_no}.db", synchronous="FULL"
                ),
                "redis": RedisTaskStore(redis.url, prefix=f"bench{round_no}:"),
            }
            for name, store in stores.items():
                for op, value in (await measure(store, tasks)).items():
                    samples.setdefault(name, {}).setdefault(op, []).append(value)
                await store.aclose()
            hop = await thread_hop(tasks)
            samples.setdefault("thread hop", {}).setdefault("get", []).append(hop)
            trip = await redis_round_trip(redis.url, tasks)
            samples.setdefault("redis round trip", {}).setdefault("get", []).append(
                trip
            )
        figures["ops_per_s"] = {
            name: {op: round(statistics.median(v)) for op, v in ops.items()}
            for name, ops in samples.items()
        }
        figures["bytes_per_task"] = {
            "small result": round(await bytes_per_task(folder, tasks, "ok")),
            "4 KiB result": round(await bytes_per_task(folder, tasks, "x" * 4096)),
            "redis, small result": round(
                await redis_bytes_per_task(redis.url, tasks, "ok")
            ),
            "redis, 4 KiB result": round(
                await redis_bytes_per_task(redis.url, tasks, "x" * 4096)
            ),
        }
    return figures


def run(*, quick: bool = False, echo: Echo = print) -> dict[str, Any]:
    """Measure, print the tables, return the figures."""
    figures = anyio.run(run_async, quick)
    ops = figures["ops_per_s"]
    columns = list(ops["memory"])
    rows = [
        (name, *(f"{values[c]:,}" if c in values else "" for c in columns))
        for name, values in ops.items()
    ]
    echo(table(("ops/s", *columns), rows))
    echo(f"({figures['tasks']} tasks, median of {figures['rounds']} rounds)")
    sizes = figures["bytes_per_task"]
    echo(table(("on disk", "bytes/task"), [(k, f"{v:,}") for k, v in sizes.items()]))
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_stores")
    parser.add_argument("--quick", action="store_true", help="few tasks, one round")
    run(quick=parser.parse_args().quick)

"""Event stores: appends and replays per second, memory against Redis.

`python -m benchmarks.event_stores [--quick]`. One process, one event loop
(asyncio), each operation awaited as the HTTP server awaits it:

- append: one 200-byte message at the end of one of `STREAMS` streams
  (their bound, 1,000 events, is reached, so Redis also trims);
- replay 10: the 10 events after a cursor (a client that missed a few);
- replay 100: the 100 events after a cursor.

Redis: `RedisEventStore` on a private `redis-server` on loopback (started by
`benchmarks.redis_server`); "redis round trip" is a PING through the same
kind of client, the floor of any operation (each is one script).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.stores.events import EventStore, MemoryEventStore
from mcp_specgen_runtime.stores.redis_events import RedisEventStore

from ._common import table
from .redis_server import RedisServer

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ._common import Echo

STREAMS = 10
MESSAGE = b'{"jsonrpc":"2.0","method":"notifications/progress","params":' + (
    b'{"progressToken":"t","progress":1,"message":"' + b"x" * 120 + b'"}}'
)


async def timed(ops: int, body: Callable[[], Awaitable[None]]) -> float:
    """Operations per second of `body`, which does `ops` operations."""
    started = time.perf_counter()
    await body()
    return ops / (time.perf_counter() - started)


async def measure(store: EventStore, events: int) -> dict[str, float]:
    """Ops/s of append and replays on `store`, with `events` appends."""
    streams = [await store.create_stream(f"owner-{n}") for n in range(STREAMS)]
    ids: dict[int, list[str]] = {n: [] for n in range(STREAMS)}

    async def append() -> None:
        for n in range(events):
            ids[n % STREAMS].append(await store.append(streams[n % STREAMS], MESSAGE))

    replays = max(events // 10, 10)

    def cursors(back: int) -> list[tuple[str, str]]:
        picks: list[tuple[str, str]] = []
        for _ in range(replays):
            n = random.randrange(STREAMS)
            picks.append((ids[n][-1 - back], f"owner-{n}"))
        return picks

    async def replay(picks: list[tuple[str, str]]) -> None:
        for cursor, owner in picks:
            await store.replay(cursor, owner)

    figures = {"append": await timed(events, append)}
    for back in (10, 100):
        picks = cursors(back)
        figures[f"replay {back}"] = await timed(
            replays, lambda picks=picks: replay(picks)
        )
    return figures


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


async def run_async(quick: bool) -> dict[str, Any]:
    events, rounds = (2_000, 1) if quick else (20_000, 3)
    figures: dict[str, Any] = {"events": events, "rounds": rounds}
    samples: dict[str, dict[str, list[float]]] = {}
    with RedisServer() as redis:
        for round_no in range(rounds):
            memory = MemoryEventStore()
            for op, value in (await measure(memory, events)).items():
                samples.setdefault("memory", {}).setdefault(op, []).append(value)
            store = RedisEventStore(redis.url, prefix=f"bench{round_no}:")
            try:
                for op, value in (await measure(store, events)).items():
                    samples.setdefault("redis", {}).setdefault(op, []).append(value)
            finally:
                await store.aclose()
            trip = await redis_round_trip(redis.url, events)
            samples.setdefault("redis round trip", {}).setdefault("append", []).append(
                trip
            )
    figures["ops_per_s"] = {
        name: {op: round(statistics.median(v)) for op, v in ops.items()}
        for name, ops in samples.items()
    }
    return figures


def run(*, quick: bool = False, echo: Echo = print) -> dict[str, Any]:
    """Measure, print the table, return the figures."""
    figures = anyio.run(run_async, quick)
    ops = figures["ops_per_s"]
    columns = list(ops["memory"])
    rows = [
        (name, *(f"{values[c]:,}" if c in values else "" for c in columns))
        for name, values in ops.items()
    ]
    echo(table(("ops/s", *columns), rows))
    echo(
        f"({figures['events']} appends over {STREAMS} streams, median of "
        f"{figures['rounds']} rounds)"
    )
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.event_stores")
    parser.add_argument("--quick", action="store_true", help="few events, one round")
    run(quick=parser.parse_args().quick)

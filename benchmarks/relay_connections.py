"""Redis connections one instance holds while it relays N streams: one
blocking read per stream (`RedisEventStore.tail`, how relays were read
before `TailHub`) against one `TailHub` for all of them.

    python -m benchmarks.relay_connections [N]     # N = 1000 by default

Each stream gets one event while followed, checked, then its end marker;
the counts are of `CLIENT LIST` entries named after the side being
measured, taken while every stream is followed.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from redis.asyncio import Redis

from mcp_specgen_runtime.stores.redis_events import END, RedisEventStore
from mcp_specgen_runtime.stores.redis_scripts import RedisLink
from mcp_specgen_runtime.stores.redis_tails import TailHub

from .redis_server import RedisServer, ensure_redis_server


async def _named(raw: Redis, name: str) -> int:
    clients: list[dict[str, Any]] = await raw.client_list()
    return sum(1 for client in clients if client.get("name") == name)


async def _streams(store: RedisEventStore, count: int) -> list[str]:
    return [await store.create_stream(f"s{n % 50}") for n in range(count)]


async def _end_all(store: RedisEventStore, streams: list[str]) -> None:
    for stream in streams:
        await store.append(stream, b"{}")
        await store.end(stream)


async def one_read_each(url: str, raw: Redis, count: int) -> int:
    """Connections held by `count` concurrent `tail` readers."""
    store = RedisEventStore(
        RedisLink(
            url,
            "RedisEventStore",
            "event",
            {"client_name": "per-stream", "max_connections": count + 10},
        ),
        prefix="measure:per-stream:",
    )
    streams = await _streams(store, count)
    alive = b"measure:alive:"

    async def follow(stream: str) -> int:
        kinds = [e.kind async for e in store.tail(stream, alive_prefix=alive)]
        return kinds.count(END)

    readers = [asyncio.ensure_future(follow(stream)) for stream in streams]
    await asyncio.sleep(1.0)  # every reader blocks
    held = await _named(raw, "per-stream")
    await _end_all(store, streams)
    assert sum(await asyncio.gather(*readers)) == count
    await store.aclose()
    return held


async def one_hub(url: str, raw: Redis, count: int) -> int:
    """Connections held by one `TailHub` following `count` streams."""
    link = RedisLink(url, "TailHub", "event", {"client_name": "hub"})
    store = RedisEventStore(link, prefix="measure:hub:")
    hub = TailHub(
        store, link, alive_prefix=b"measure:alive:", block_s=1.0, max_tails=count
    )
    streams = await _streams(store, count)
    tails = []
    for number, stream in enumerate(streams):
        tail = hub.open(f"s{number % 50}")
        hub.follow(tail, stream)
        tails.append(tail)
    await asyncio.sleep(1.0)
    held = await _named(raw, "hub")
    await _end_all(store, streams)
    ends = 0
    for tail in tails:
        ends += [entry.kind async for entry in tail].count(END)
        tail.close()
    assert ends == count
    await hub.aclose()
    await store.aclose()
    return held


async def main(count: int) -> None:
    with RedisServer(ensure_redis_server()) as server:
        raw = Redis.from_url(server.url)
        try:
            before = await one_read_each(server.url, raw, count)
            after = await one_hub(server.url, raw, count)
        finally:
            await raw.aclose()
    print(f"{count} relayed streams, Redis connections held:")
    print(f"  one blocking read each (RedisEventStore.tail): {before}")
    print(f"  one TailHub for all of them: {after}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))

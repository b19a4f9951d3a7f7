"""`TailHub`: many followers of a `RedisEventStore`'s streams on one
connection, what each gets (order, end, a dead writer's requests answered,
a gone stream), its limits, slow followers and replacement."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from redis.asyncio import Redis

from benchmarks.redis_server import RedisServer
from mcp_specgen_runtime.stores.redis_events import END, RedisEventStore, Tailed
from mcp_specgen_runtime.stores.redis_scripts import RedisLink
from mcp_specgen_runtime.stores.redis_tails import (
    GONE,
    OVERFLOW,
    REPLACED,
    Tail,
    TailHub,
    TailLimitError,
)

pytestmark = pytest.mark.anyio

LIMIT = 20.0
"""Seconds any wait of these tests may take before it fails."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(
    redis_server: RedisServer, redis_prefix: str
) -> AsyncIterator[RedisEventStore]:
    found = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        yield found
    finally:
        await found.aclose()


def _abandoned(request: int | str) -> bytes:
    return b'{"id":%s,"error":"gone"}' % json.dumps(request).encode()


def hub_of(
    redis_server: RedisServer,
    store: RedisEventStore,
    name: str,
    block_s: float = 0.1,
    **limits: Any,
) -> TailHub:
    link = RedisLink(
        redis_server.url,
        "TailHub",
        "event",
        {"client_name": name},
        timeout_s=block_s + 5,  # longer than a blocking read
    )
    alive = store.prefix + b"alive:"
    return TailHub(
        store, link, alive_prefix=alive, block_s=block_s, abandoned=_abandoned, **limits
    )


async def drain(tail: Tail) -> list[Tailed]:
    with anyio.fail_after(LIMIT):
        return [entry async for entry in tail]


async def connections_named(raw: Redis, name: str) -> int:
    clients: list[dict[str, Any]] = await raw.client_list()
    return sum(1 for client in clients if client.get("name") == name)


async def test_many_followers_get_their_entries_in_order_on_one_connection(
    redis_server: RedisServer, store: RedisEventStore, raw: Redis, redis_prefix: str
) -> None:
    name = "tails-" + redis_prefix.split(":")[1]
    hub = hub_of(redis_server, store, name, max_tails=500)
    await raw.set(store.prefix + b"alive:w", b"1")
    try:
        streams = [
            await store.create_stream(f"s{n % 7}", writer="w") for n in range(200)
        ]
        tails: list[Tail] = []
        for number, stream in enumerate(streams):
            tail = hub.open(f"s{number % 7}")
            hub.follow(tail, stream)
            tails.append(tail)
        for round_ in range(3):
            for number, stream in enumerate(streams):
                await store.append(stream, b"%d:%d" % (number, round_))
        peak = await connections_named(raw, name)
        for stream in streams:
            await store.end(stream)
        for number, tail in enumerate(tails):
            entries = await drain(tail)
            assert [(e.kind, e.value) for e in entries] == [
                ("m", b"%d:0" % number),
                ("m", b"%d:1" % number),
                ("m", b"%d:2" % number),
                (END, b""),
            ]
            assert all(e.id.startswith(streams[number] + ".") for e in entries)
            tail.close()
        assert 1 <= peak <= 2  # the read, and a wake-up
        assert hub.count == 0
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_a_follower_added_while_the_reader_blocks_is_read_at_once(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    """The read blocks for a minute: the second follower is taken in by the
    wake-up, not by the read's end."""
    hub = hub_of(redis_server, store, "tails-wake", block_s=60.0)
    try:
        first = hub.open("s1")
        hub.follow(first, await store.create_stream("s1"))
        await anyio.sleep(0.2)  # the reader now blocks on the first
        second = hub.open("s1")
        stream = await store.create_stream("s1")
        hub.follow(second, stream)
        sent = await store.append(stream, b"hello")
        with anyio.fail_after(LIMIT):
            entry = await second.next()
        assert entry == Tailed("m", sent, b"hello")
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_a_follower_resumes_after_a_position_of_the_stored_history(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    hub = hub_of(redis_server, store, "tails-resume")
    try:
        stream = await store.create_stream("s1")
        ids = [await store.append(stream, b"%d" % n) for n in range(5)]
        await store.end(stream)
        with hub.open("s1") as tail:
            hub.follow(tail, stream, ids[2].rpartition(".")[2])
            entries = await drain(tail)
        assert [e.value for e in entries] == [b"3", b"4", b""]
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_a_dead_writer_s_stream_ends_with_the_requests_it_owed(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    hub = hub_of(redis_server, store, "tails-dead")
    try:
        stream = await store.create_stream("s1", writer="dead", requests=[1, "two"])
        await store.append(stream, b'{"jsonrpc":"2.0","id":1,"result":{}}')
        with hub.open("s1") as tail:
            hub.follow(tail, stream)
            entries = await drain(tail)
        assert [(e.kind, e.value) for e in entries] == [
            ("m", b'{"jsonrpc":"2.0","id":1,"result":{}}'),
            ("m", _abandoned("two")),
            (END, b""),
        ]
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_a_follower_of_a_gone_stream_stops(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    hub = hub_of(redis_server, store, "tails-gone")
    try:
        with hub.open("s1") as tail:
            hub.follow(tail, "x" * 22)
            assert await drain(tail) == []
            assert tail.stopped == GONE
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_the_limits_in_all_and_per_owner_refuse_until_a_place_is_free(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    hub = hub_of(redis_server, store, "tails-caps", max_tails=3, max_tails_per_owner=2)
    try:
        one, two = hub.open("s1"), hub.open("s1")
        with pytest.raises(TailLimitError) as per_owner:
            hub.open("s1")
        assert (per_owner.value.which, per_owner.value.limit) == (
            "max_tails_per_owner",
            2,
        )
        three = hub.open("s2")
        with pytest.raises(TailLimitError) as in_all:
            hub.open("s3")
        assert (in_all.value.which, in_all.value.limit) == ("max_tails", 3)
        one.close()
        hub.open("s1").close()
        for tail in (two, three):
            tail.close()
        assert hub.count == 0
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_a_follower_that_leaves_its_queue_full_gets_it_then_stops(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    hub = hub_of(redis_server, store, "tails-slow", queue_size=3)
    try:
        stream = await store.create_stream("s1")
        for n in range(10):
            await store.append(stream, b"%d" % n)
        await store.end(stream)
        with hub.open("s1") as slow:
            hub.follow(slow, stream)  # one read brings all 11, none taken yet
            entries = await drain(slow)
            assert slow.stopped == OVERFLOW
            assert [e.value for e in entries] == [b"0", b"1", b"2"]
    finally:
        await hub.aclose()
        await hub.link.aclose()


async def test_a_follower_opened_to_replace_ends_the_owner_s_older_one(
    redis_server: RedisServer, store: RedisEventStore
) -> None:
    hub = hub_of(redis_server, store, "tails-replace", max_tails_per_owner=1)
    try:
        stream = await store.create_stream("s1")
        old = hub.open("s1")
        hub.follow(old, stream)
        other_owner = hub.open("s2")
        hub.follow(other_owner, stream)
        new = hub.open("s1", replaces=stream)  # within its owner's limit
        assert old.stopped == REPLACED
        assert await drain(old) == []
        assert other_owner.stopped is None
        hub.follow(new, stream)
        sent = await store.append(stream, b"after")
        with anyio.fail_after(LIMIT):
            assert await new.next() == Tailed("m", sent, b"after")
        for tail in (old, new, other_owner):
            tail.close()
        assert hub.count == 0
    finally:
        await hub.aclose()
        await hub.link.aclose()

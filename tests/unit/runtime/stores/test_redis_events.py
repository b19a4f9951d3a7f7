"""`RedisEventStore` beyond the contract: several stores (several servers)
on one Redis, TTLs on every key, its keys, hostile positions."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from redis.asyncio import Redis

from benchmarks.redis_server import RedisServer
from mcp_specgen_runtime.stores.events import EventsEvictedError, UnknownEventError
from mcp_specgen_runtime.stores.redis_events import END, REFUSAL, RedisEventStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_event_appended_through_one_store_replays_through_another(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    one = RedisEventStore(redis_server.url, prefix=redis_prefix)
    other = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        stream = await one.create_stream("s1")
        priming = await one.append(stream, None)
        sent = await one.append(stream, b'{"n":1}')
        replay = await other.replay(priming, "s1")
        assert [(e.id, e.message) for e in replay.events] == [(sent, b'{"n":1}')]
        await other.drop_owner("s1")
        with pytest.raises(UnknownEventError):
            await one.replay(priming, "s1")
    finally:
        await one.aclose()
        await other.aclose()


async def test_every_key_has_a_ttl_renewed_by_appends(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix, stream_ttl_s=100)
    try:
        stream = await store.create_stream("s1")
        keys = [store.stream_key(stream), store.meta_key(stream), store.owner_key("s1")]
        for key in keys:
            await raw.expire(key, 5)
        await store.append(stream, b"{}")
        for key in keys:
            assert 5 < await raw.ttl(key) <= 100
        assert sorted(await raw.keys(redis_prefix + "*")) == sorted(keys)
    finally:
        await store.aclose()


async def test_keys_expire_and_the_stream_is_then_unknown(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        stream = await store.create_stream("s1")
        first = await store.append(stream, b"{}")
        for key in await raw.keys(redis_prefix + "*"):
            await raw.pexpire(key, 1)
        while await raw.keys(redis_prefix + "*"):
            await raw.ping()  # Redis deletes expired keys lazily or by its timer
        with pytest.raises(UnknownEventError):
            await store.replay(first, "s1")
    finally:
        await store.aclose()


async def test_drop_owner_deletes_its_keys_only(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        for _ in range(3):
            await store.append(await store.create_stream("s1"), b"{}")
        theirs = await store.create_stream("s2")
        await store.drop_owner("s1")
        assert sorted(await raw.keys(redis_prefix + "*")) == sorted(
            [store.stream_key(theirs), store.meta_key(theirs), store.owner_key("s2")]
        )
    finally:
        await store.aclose()


async def test_trimming_past_a_radix_node_is_exact(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    store = RedisEventStore(
        redis_server.url, prefix=redis_prefix, max_events_per_stream=150
    )
    try:
        stream = await store.create_stream("s1")
        ids = [await store.append(stream, b"%d" % n) for n in range(400)]
        assert await raw.xlen(store.stream_key(stream)) == 150
        replay = await store.replay(ids[249], "s1")
        assert [e.message for e in replay.events] == [
            b"%d" % n for n in range(250, 400)
        ]
        with pytest.raises(EventsEvictedError):
            await store.replay(ids[248], "s1")
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    "position",
    ["0-0", "99999999999999999999-0", "1-99999999999999999999", "-1", "1-", "1-1-1"],
)
async def test_hostile_positions_are_unknown_events(
    redis_server: RedisServer, redis_prefix: str, position: str
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        stream = await store.create_stream("s1")
        await store.append(stream, b"{}")
        with pytest.raises(UnknownEventError, match="no event of its stream"):
            await store.replay(f"{stream}.{position}", "s1")
        await store.append(stream, b"{}")  # still serving
    finally:
        await store.aclose()


async def test_a_given_client_is_left_open(redis_prefix: str, raw: Redis) -> None:
    store = RedisEventStore(raw, prefix=redis_prefix)
    await store.append(await store.create_stream("s1"), b"{}")
    await store.aclose()
    assert await raw.ping()
    with pytest.raises(RuntimeError, match="closed"):
        await store.create_stream("s1")


def test_it_runs_on_asyncio_only() -> None:
    import trio

    store = RedisEventStore("redis://localhost")

    async def main() -> None:
        with pytest.raises(RuntimeError, match="asyncio only"):
            await store.create_stream("s1")

    trio.run(main)


# --- tails: streams read by other instances -----------------------------------------


async def _read_all(store: RedisEventStore, stream: str, alive: bytes) -> list[Any]:
    return [
        entry
        async for entry in store.tail(
            stream, alive_prefix=alive, block_s=0.05, abandoned=_abandoned
        )
    ]


def _abandoned(request: int | str) -> bytes:
    return b'{"id":%s,"error":"gone"}' % json.dumps(request).encode()


async def test_a_tail_reads_to_the_end_marker_and_later_appends_are_not_kept(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        await raw.set(redis_prefix + "alive:w", b"1")
        stream = await store.create_stream("s1", writer="w", requests=[1])
        await store.append(stream, None)
        await store.append(stream, b'{"jsonrpc":"2.0","id":1,"result":{}}')
        assert await store.end(stream)
        assert not await store.end(stream)
        await store.append(stream, b"late")
        entries = await _read_all(store, stream, (redis_prefix + "alive:").encode())
        assert [e.kind for e in entries] == ["p", "m", END]
        assert entries[1].value == b'{"jsonrpc":"2.0","id":1,"result":{}}'
    finally:
        await store.aclose()


async def test_a_tail_answers_the_requests_a_dead_writer_still_owed(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        stream = await store.create_stream("s1", writer="dead", requests=[1, "two"])
        await store.append(stream, b'{"jsonrpc":"2.0","id":1,"result":{}}')
        alive = (redis_prefix + "alive:").encode()
        first, second = await asyncio.gather(
            _read_all(store, stream, alive), _read_all(store, stream, alive)
        )
        assert first == second
        assert [(e.kind, e.value) for e in first] == [
            ("m", b'{"jsonrpc":"2.0","id":1,"result":{}}'),
            ("m", _abandoned("two")),
            (END, b""),
        ]
    finally:
        await store.aclose()


async def test_a_refusal_ends_a_stream_and_an_unknown_stream_tails_nothing(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        stream = await store.create_stream("s1", writer="w")
        assert await store.end(stream, b"refused")
        alive = (redis_prefix + "alive:").encode()
        entries = await _read_all(store, stream, alive)
        assert [(e.kind, e.value) for e in entries] == [
            (REFUSAL, b"refused"),
            (END, b""),
        ]
        assert await _read_all(store, "x" * 22, alive) == []
    finally:
        await store.aclose()


async def test_a_stream_is_either_accepted_by_its_writer_or_ended_untouched(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    store = RedisEventStore(redis_server.url, prefix=redis_prefix)
    try:
        taken = await store.create_stream("s1")
        assert await store.accept(taken)
        assert not await store.end_untouched(taken, b"refused")
        given_up = await store.create_stream("s1")
        assert await store.end_untouched(given_up, b"refused")
        assert not await store.accept(given_up)
        assert not await store.accept("unknown")
    finally:
        await store.aclose()

"""The `EventStore` contract, run against every store (memory and Redis),
then the bounds only `MemoryEventStore` has (bytes, streams).

Contract tests take `make_store`: `await make_store(**bounds)` gives a fresh
store of the parametrized kind, closed after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from mcp_specgen_runtime.stores.events import (
    EventsEvictedError,
    EventStore,
    MemoryEventStore,
    UnknownEventError,
    parse_event_id,
)
from mcp_specgen_runtime.stores.redis_events import RedisEventStore

pytestmark = pytest.mark.anyio

MakeStore = Callable[..., Awaitable[EventStore]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # redis-py's client is asyncio only


@pytest.fixture(params=["memory", "redis"])
async def make_store(request: pytest.FixtureRequest) -> AsyncIterator[MakeStore]:
    made: list[RedisEventStore] = []

    async def make(**bounds: Any) -> EventStore:
        if request.param == "memory":
            return MemoryEventStore(**bounds)
        url = request.getfixturevalue("redis_server").url
        prefix = request.getfixturevalue("redis_prefix") + f"{len(made)}:"
        made.append(RedisEventStore(url, prefix=prefix, **bounds))
        return made[-1]

    try:
        yield make
    finally:
        for store in made:
            await store.aclose()


async def test_replay_gives_what_followed_the_cursor_in_order(
    make_store: MakeStore,
) -> None:
    store = await make_store()
    stream = await store.create_stream("s1")
    priming = await store.append(stream, None)
    ids = [await store.append(stream, b'{"n":%d}' % n) for n in range(3)]
    replay = await store.replay(priming, "s1")
    assert replay.stream == stream
    assert [event.message for event in replay.events] == [
        b'{"n":0}',
        b'{"n":1}',
        b'{"n":2}',
    ]
    assert [event.id for event in replay.events] == ids
    assert (await store.replay(ids[1], "s1")).events == replay.events[2:]
    assert (await store.replay(ids[2], "s1")).events == []


async def test_an_event_id_names_its_stream(make_store: MakeStore) -> None:
    store = await make_store()
    stream = await store.create_stream("s1")
    other = await store.create_stream("s1")
    first = await store.append(stream, b"{}")
    await store.append(other, b'{"other":1}')
    assert parse_event_id(first) == (stream, first.rpartition(".")[2])
    assert (await store.replay(first, "s1")).events == []


async def test_priming_events_are_never_replayed(make_store: MakeStore) -> None:
    store = await make_store()
    stream = await store.create_stream("s1")
    first = await store.append(stream, b"{}")
    await store.append(stream, None)
    assert (await store.replay(first, "s1")).events == []


@pytest.mark.parametrize(
    "bad", ["", "garbage", "x" * 500, "AAAAAAAAAAAAAAAAAAAAAA.1", "a.b.c", "é" * 30]
)
async def test_a_malformed_or_unknown_id_is_refused(
    bad: str, make_store: MakeStore
) -> None:
    store = await make_store()
    await store.append(await store.create_stream("s1"), b"{}")
    with pytest.raises(UnknownEventError):
        await store.replay(bad, "s1")


async def test_another_owners_stream_is_unknown(make_store: MakeStore) -> None:
    store = await make_store()
    stream = await store.create_stream("mine")
    first = await store.append(stream, b"{}")
    await store.append(stream, b'{"secret":1}')
    with pytest.raises(UnknownEventError, match="no stream of this session"):
        await store.replay(first, "theirs")


async def test_a_position_outside_the_stream_is_unknown(
    make_store: MakeStore,
) -> None:
    store = await make_store()
    stream = await store.create_stream("s1")
    await store.append(stream, b"{}")
    # Before the stream began (a counter's, an entry id's), and not yet given.
    for position in ("0", "1-0", "99999", "99999999999999-0"):
        with pytest.raises(UnknownEventError, match="no event of its stream"):
            await store.replay(f"{stream}.{position}", "s1")


async def test_memory_positions_are_unique_in_the_store() -> None:
    # Redis entry ids are per stream (two streams may both have `T-1`); a
    # memory store's counter is store-wide, so another stream's is unknown.
    store = MemoryEventStore()
    before = await store.append(await store.create_stream("s1"), b"{}")
    stream = await store.create_stream("s1")
    await store.append(stream, b"{}")
    with pytest.raises(UnknownEventError, match="no event of its stream"):
        await store.replay(f"{stream}.{before.rpartition('.')[2]}", "s1")


async def test_per_stream_bound_evicts_the_oldest_and_replay_says_so(
    make_store: MakeStore,
) -> None:
    store = await make_store(max_events_per_stream=2)
    stream = await store.create_stream("s1")
    ids = [await store.append(stream, b"%d" % n) for n in range(4)]
    # Kept: 2 and 3. From 1 (whose follower 2 is kept) the replay is whole.
    assert [e.message for e in (await store.replay(ids[1], "s1")).events] == [
        b"2",
        b"3",
    ]
    with pytest.raises(EventsEvictedError, match="no longer kept"):
        await store.replay(ids[0], "s1")


async def test_byte_bound_evicts_the_oldest_events_of_the_store() -> None:
    store = MemoryEventStore(max_bytes=10)
    a = await store.create_stream("s1")
    b = await store.create_stream("s1")
    a0 = await store.append(a, b"aaaa")
    a1 = await store.append(a, b"aaaa")
    b0 = await store.append(b, b"bbbb")  # 12 bytes: a's first goes
    assert store.size == 8
    # a0 is gone, but what followed it is kept: the replay is whole.
    assert [e.id for e in (await store.replay(a0, "s1")).events] == [a1]
    await store.append(b, b"bbbb")  # a1 goes too
    with pytest.raises(EventsEvictedError):
        await store.replay(a0, "s1")
    assert [e.message for e in (await store.replay(b0, "s1")).events] == [b"bbbb"]
    assert store.size == 8


async def test_stream_bound_drops_the_least_recently_appended_stream() -> None:
    store = MemoryEventStore(max_streams=2)
    a = await store.create_stream("s1")
    a0 = await store.append(a, b"{}")
    b = await store.create_stream("s1")
    await store.append(b, b"{}")
    await store.append(a, b"{}")  # a is now the most recent
    await store.create_stream("s1")  # b goes
    assert len(store) == 2
    assert len((await store.replay(a0, "s1")).events) == 1


async def test_drop_owner_forgets_its_streams_only(make_store: MakeStore) -> None:
    store = await make_store()
    mine = await store.append(await store.create_stream("s1"), b"{}")
    theirs = await store.append(await store.create_stream("s2"), b"{}")
    await store.append(await store.create_stream("s1"), b"{}")
    await store.drop_owner("s1")
    with pytest.raises(UnknownEventError):
        await store.replay(mine, "s1")
    assert (await store.replay(theirs, "s2")).events == []


async def test_appending_to_a_dropped_stream_keeps_nothing(
    make_store: MakeStore,
) -> None:
    store = await make_store()
    stream = await store.create_stream("s1")
    await store.drop_owner("s1")
    dropped = await store.append(stream, b"{}")
    assert parse_event_id(dropped) is not None
    with pytest.raises(UnknownEventError, match="no stream of this session"):
        await store.replay(dropped, "s1")


async def test_a_replay_from_a_priming_event_starts_after_it(
    make_store: MakeStore,
) -> None:
    store = await make_store()
    stream = await store.create_stream("s1")
    await store.append(stream, b"before")
    priming = await store.append(stream, None)
    after = await store.append(stream, b"after")
    replay = await store.replay(priming, "s1")
    assert [(e.id, e.message) for e in replay.events] == [(after, b"after")]


async def test_memory_drop_owner_releases_its_bytes() -> None:
    store = MemoryEventStore()
    await store.append(await store.create_stream("s1"), b"{}")
    await store.append(await store.create_stream("s2"), b"{}")
    await store.drop_owner("s1")
    assert store.size == 2
    stream = await store.create_stream("s3")
    await store.drop_owner("s3")
    await store.append(stream, b"{}")
    assert store.size == 2 and len(store) == 1


async def test_the_order_queue_stays_bounded() -> None:
    store = MemoryEventStore(max_events_per_stream=1)
    stream = await store.create_stream("s1")
    for _ in range(1000):
        await store.append(stream, b"{}")
    assert len(store._order) <= 2 * 1 + 64  # pyright: ignore[reportPrivateUsage]
    assert store.size == 2


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        MemoryEventStore(max_bytes=0)
    with pytest.raises(ValueError, match="max_events_per_stream"):
        RedisEventStore("redis://localhost", max_events_per_stream=0)
    with pytest.raises(ValueError, match="stream_ttl_s"):
        RedisEventStore("redis://localhost", stream_ttl_s=0)

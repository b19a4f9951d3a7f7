"""The `EventStore` contract on `MemoryEventStore`, and its bounds."""

from __future__ import annotations

import pytest

from mcp_codegen_runtime.stores.events import (
    EventsEvictedError,
    MemoryEventStore,
    UnknownEventError,
    parse_event_id,
)

pytestmark = pytest.mark.anyio


async def test_replay_gives_what_followed_the_cursor_in_order() -> None:
    store = MemoryEventStore()
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


async def test_an_event_id_names_its_stream() -> None:
    store = MemoryEventStore()
    stream = await store.create_stream("s1")
    other = await store.create_stream("s1")
    first = await store.append(stream, b"{}")
    await store.append(other, b'{"other":1}')
    assert parse_event_id(first) == (stream, first.rpartition(".")[2])
    assert (await store.replay(first, "s1")).events == []


async def test_priming_events_are_never_replayed() -> None:
    store = MemoryEventStore()
    stream = await store.create_stream("s1")
    first = await store.append(stream, b"{}")
    await store.append(stream, None)
    assert (await store.replay(first, "s1")).events == []


@pytest.mark.parametrize(
    "bad", ["", "garbage", "x" * 500, "AAAAAAAAAAAAAAAAAAAAAA.1", "a.b.c", "é" * 30]
)
async def test_a_malformed_or_unknown_id_is_refused(bad: str) -> None:
    store = MemoryEventStore()
    await store.append(await store.create_stream("s1"), b"{}")
    with pytest.raises(UnknownEventError):
        await store.replay(bad, "s1")


async def test_another_owners_stream_is_unknown() -> None:
    store = MemoryEventStore()
    stream = await store.create_stream("mine")
    first = await store.append(stream, b"{}")
    await store.append(stream, b'{"secret":1}')
    with pytest.raises(UnknownEventError, match="no stream of this session"):
        await store.replay(first, "theirs")


async def test_a_position_outside_the_stream_is_unknown() -> None:
    store = MemoryEventStore()
    before = await store.append(await store.create_stream("s1"), b"{}")
    stream = await store.create_stream("s1")
    await store.append(stream, b"{}")
    # Another stream's position, and one not yet given, with this stream's id.
    for position in (before.rpartition(".")[2], "999", "0"):
        with pytest.raises(UnknownEventError, match="no event of its stream"):
            await store.replay(f"{stream}.{position}", "s1")


async def test_per_stream_bound_evicts_the_oldest_and_replay_says_so() -> None:
    store = MemoryEventStore(max_events_per_stream=2)
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


async def test_drop_owner_forgets_its_streams_only() -> None:
    store = MemoryEventStore()
    mine = await store.append(await store.create_stream("s1"), b"{}")
    theirs = await store.append(await store.create_stream("s2"), b"{}")
    await store.drop_owner("s1")
    with pytest.raises(UnknownEventError):
        await store.replay(mine, "s1")
    assert (await store.replay(theirs, "s2")).events == []
    assert store.size == 2


async def test_appending_to_a_dropped_stream_keeps_nothing() -> None:
    store = MemoryEventStore()
    stream = await store.create_stream("s1")
    await store.drop_owner("s1")
    await store.append(stream, b"{}")
    assert store.size == 0 and len(store) == 0


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

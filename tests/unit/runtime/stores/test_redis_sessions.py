"""`RedisSessions`: the shared registry of legacy sessions (owner, home,
recorded state, TTL, compare-and-set claim), against a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from benchmarks.redis_server import RedisServer
from mcp_specgen_runtime.stores.redis_scripts import RedisClient, RedisLink
from mcp_specgen_runtime.stores.redis_sessions import RedisSessions, SessionState

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def sessions(
    redis_server: RedisServer, redis_prefix: str
) -> AsyncIterator[RedisSessions]:
    link = RedisLink(redis_server.url, "test", "session")

    async def client() -> RedisClient:
        return await link.client()

    try:
        yield RedisSessions(client, prefix=redis_prefix, ttl_s=100)
    finally:
        await link.aclose()


INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}'


async def alive(raw: Redis, sessions: RedisSessions, instance: str) -> None:
    await raw.set(sessions.alive_prefix + instance.encode(), b"1", px=60_000)


async def test_another_owner_finds_no_session(
    sessions: RedisSessions, raw: Redis
) -> None:
    await sessions.open("s1", b"alice", "a", INIT)
    await alive(raw, sessions, "a")
    assert (await sessions.route("s1", b"bob", "b")).kind == "unknown"
    assert (await sessions.route("s1", b"", "b")).kind == "unknown"
    assert (await sessions.route("nope", b"alice", "b")).kind == "unknown"
    found = await sessions.route("s1", b"alice", "b")
    assert (found.kind, found.home) == ("remote", "a")


async def test_a_session_without_a_live_home_is_claimed_once_with_its_state(
    sessions: RedisSessions, raw: Redis
) -> None:
    await sessions.open("s1", b"", "a", INIT)
    looked = await sessions.route("s1", b"", "b", claim=False)
    assert (looked.kind, looked.home) == ("homeless", "a")
    claimed = await sessions.route("s1", b"", "b")
    assert (claimed.kind, claimed.home) == ("claimed", "a")
    assert claimed.state == SessionState(INIT)
    await alive(raw, sessions, "b")
    assert (await sessions.route("s1", b"", "c")).kind == "remote"


async def test_the_state_is_the_effect_of_the_changes_not_their_history(
    sessions: RedisSessions,
) -> None:
    await sessions.open("s1", b"", "a", INIT)
    assert await sessions.record("s1", "initialized")
    for number in range(50):
        assert await sessions.record("s1", "level", b'{"level":"%d"}' % number)
        assert await sessions.record("s1", "subscribe", b"mem://%d" % number)
    for number in range(1, 50):
        assert await sessions.record("s1", "unsubscribe", b"mem://%d" % number)
    assert await sessions.record("s1", "subscribe", b"mem://0")
    claimed = await sessions.route("s1", b"", "b")
    assert claimed.state == SessionState(
        INIT, initialized=True, level=b'{"level":"49"}', subscriptions=["mem://0"]
    )


async def test_without_a_ttl_the_record_does_not_expire(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    link = RedisLink(redis_server.url, "test", "session")

    async def client() -> RedisClient:
        return await link.client()

    try:
        forever = RedisSessions(client, prefix=redis_prefix, ttl_s=None)
        await forever.open("s1", b"", "a", INIT)
        await forever.record("s1", "subscribe", b"mem://a")
        await forever.route("s1", b"", "b", claim=False)
        await forever.touch("s1")
        for key in forever.keys("s1"):
            assert await raw.pttl(key) == -1
    finally:
        await link.aclose()


async def test_release_is_a_compare_and_set_of_the_home(
    sessions: RedisSessions, raw: Redis
) -> None:
    await sessions.open("s1", b"", "a", INIT)
    await alive(raw, sessions, "a")
    assert not await sessions.release("s1", "b")
    assert (await sessions.route("s1", b"", "c")).kind == "remote"
    assert await sessions.release("s1", "a")
    claimed = await sessions.route("s1", b"", "c")
    assert (claimed.kind, claimed.home) == ("claimed", "")


async def test_both_keys_have_the_idle_ttl_renewed_by_use(
    sessions: RedisSessions, raw: Redis
) -> None:
    await sessions.open("s1", b"", "a", INIT)
    assert await sessions.record("s1", "subscribe", b"mem://a")
    for key in sessions.keys("s1"):
        assert 0 < await raw.pttl(key) <= 100_000
        await raw.pexpire(key, 5_000)
    await sessions.route("s1", b"", "b", claim=False)
    for key in sessions.keys("s1"):
        assert await raw.pttl(key) > 5_000
    await sessions.delete("s1")
    assert (await sessions.route("s1", b"", "b")).kind == "unknown"
    assert not await sessions.record("s1", "level", b"{}")
    assert await raw.exists(*sessions.keys("s1")) == 0


async def test_release_all_gives_up_every_session_of_ours_in_one_call(
    sessions: RedisSessions, raw: Redis
) -> None:
    await sessions.open("s1", b"", "a", INIT)
    await sessions.open("s2", b"", "a", INIT)
    await sessions.open("s3", b"", "b", INIT)
    assert await sessions.release_all(["s1", "s2", "s3", "gone"], "a") == 2
    assert await sessions.release_all([], "a") == 0
    homes = [await raw.hget(sessions.keys(s)[0], "home") for s in ("s1", "s2", "s3")]
    assert homes == [b"", b"", b"b"]
    assert not await raw.exists(sessions.keys("gone")[0])

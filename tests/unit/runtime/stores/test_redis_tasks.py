"""`RedisTaskStore` beyond the contract: Redis's own TTL, its keys, several
stores (several servers) on one Redis, the client it is given or makes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from redis.asyncio import Redis

from benchmarks.redis_server import RedisServer
from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_specgen_runtime.stores.tasks import (
    TERMINAL_STATUSES,
    TaskExistsError,
    TaskRecord,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(redis_server: RedisServer, redis_prefix: str) -> AsyncIterator[Any]:
    made = RedisTaskStore(redis_server.url, prefix=redis_prefix)
    try:
        yield made
    finally:
        await made.aclose()


def task(task_id: str, *, created_at: float | None = None, **fields: Any) -> TaskRecord:
    now = time.time() if created_at is None else created_at
    values: dict[str, Any] = {
        "owner": "alice",
        "era": "2025-11-25",
        "method": "tools/call",
        "ttl_ms": 60_000,
    }
    values.update(fields)
    return TaskRecord(task_id=task_id, created_at=now, last_updated_at=now, **values)


async def gone(raw: Redis, key: bytes) -> bool:
    """Wait (up to 10 s) for Redis to delete `key`; whether it did."""
    for _ in range(500):
        if not await raw.exists(key):
            return True
        await anyio.sleep(0.02)
    return False


# Redis's TTL


async def test_redis_deletes_an_expired_task_itself(
    store: RedisTaskStore, raw: Redis
) -> None:
    await store.create(task("short", ttl_ms=200))
    key = store.task_key("short")
    assert 0 < await raw.pttl(key) <= 200
    assert await gone(raw, key)
    assert await store.get("short") is None


async def test_a_task_without_ttl_has_no_redis_ttl(
    store: RedisTaskStore, raw: Redis
) -> None:
    await store.create(task("forever", ttl_ms=None))
    assert await raw.pttl(store.task_key("forever")) == -1
    assert await raw.pttl(store.index_key("alice")) == -1


async def test_the_redis_ttl_is_the_time_left_by_the_stores_clock(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    """A store whose clock is a year behind Redis's still keeps its tasks
    for their TTL: only the time left is sent to Redis."""
    year_ago = time.time() - 365 * 86_400
    late = RedisTaskStore(redis_server.url, prefix=redis_prefix, clock=lambda: year_ago)
    try:
        await late.create(task("t", created_at=year_ago - 10, ttl_ms=60_000))
        assert 49_000 < await raw.pttl(late.task_key("t")) <= 50_000
        assert await late.get("t") is not None
    finally:
        await late.aclose()


async def test_an_updated_task_keeps_its_ttl(store: RedisTaskStore, raw: Redis) -> None:
    await store.create(task("t", ttl_ms=60_000))
    await store.update("t", status="completed", result={"content": []})
    assert 0 < await raw.pttl(store.task_key("t")) <= 60_000


async def test_the_owner_index_lives_as_long_as_its_longest_task(
    store: RedisTaskStore, raw: Redis
) -> None:
    index = store.index_key("alice")
    await store.create(task("long", ttl_ms=120_000))
    await store.create(task("short", ttl_ms=1_000))
    assert 60_000 < await raw.pttl(index) <= 120_000
    await store.create(task("none", ttl_ms=None))
    assert await raw.pttl(index) == -1
    await store.create(task("later", ttl_ms=500_000))
    assert await raw.pttl(index) == -1


async def test_listing_drops_index_members_of_tasks_redis_deleted(
    store: RedisTaskStore, raw: Redis
) -> None:
    await store.create(task("keep", ttl_ms=None))
    await store.create(task("short", ttl_ms=100))
    assert await gone(raw, store.task_key("short"))
    assert await raw.zcard(store.index_key("alice")) == 2
    assert [r.task_id for r in await store.list("alice")] == ["keep"]
    assert await raw.zcard(store.index_key("alice")) == 1


async def test_purge_clears_what_redis_left_of_deleted_tasks(
    store: RedisTaskStore, raw: Redis
) -> None:
    """Redis deleted the record; the purge counts nothing (it deleted no
    task) and removes the task's index and expiry members."""
    await store.create(task("keep", ttl_ms=None))
    await store.create(task("short", ttl_ms=100))
    assert await gone(raw, store.task_key("short"))
    assert await store.purge_expired() == 0
    assert await raw.zcard(store.index_key("alice")) == 1
    assert await raw.exists(store.expiry_key) == 0


async def test_purge_goes_through_more_than_one_batch(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    now = [1_800_000_000.0]
    clocked = RedisTaskStore(
        redis_server.url, prefix=redis_prefix, clock=lambda: now[0]
    )
    try:
        for n in range(1_203):
            await clocked.create(task(f"t{n}", created_at=now[0], ttl_ms=1_000))
        now[0] += 1
        assert await clocked.purge_expired() == 1_203
        assert await raw.keys(redis_prefix.encode() + b"*") == []
    finally:
        await clocked.aclose()


# several stores on one Redis


async def test_stores_purging_at_once_delete_each_task_once(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    now = [1_800_000_000.0]
    stores = [
        RedisTaskStore(redis_server.url, prefix=redis_prefix, clock=lambda: now[0])
        for _ in range(3)
    ]
    counts: list[int] = []

    async def purge(store: RedisTaskStore) -> None:
        counts.append(await store.purge_expired())

    try:
        for n in range(1_500):
            await stores[n % 3].create(task(f"t{n}", created_at=now[0], ttl_ms=1_000))
        now[0] += 1
        async with anyio.create_task_group() as group:
            for store in stores:
                group.start_soon(purge, store)
        assert sum(counts) == 1_500
        assert await raw.keys(redis_prefix.encode() + b"*") == []
    finally:
        for store in stores:
            await store.aclose()


async def finish(
    store: RedisTaskStore,
    task_id: str,
    status: str,
    outcomes: list[TaskRecord | None],
) -> None:
    outcomes.append(await store.update(task_id, status=status, result={"n": 1}))


async def test_two_stores_racing_to_terminal_states_have_one_winner(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    stores = [RedisTaskStore(redis_server.url, prefix=redis_prefix) for _ in range(2)]
    try:
        for round_no in range(20):
            task_id = f"race-{round_no}"
            await stores[0].create(task(task_id))
            outcomes: list[TaskRecord | None] = []
            async with anyio.create_task_group() as group:
                for n, status in enumerate(sorted(TERMINAL_STATUSES) * 4):
                    group.start_soon(finish, stores[n % 2], task_id, status, outcomes)
            winners = [done for done in outcomes if done is not None]
            assert len(outcomes) == 12 and len(winners) == 1
            assert await stores[0].get(task_id) == winners[0]
            assert await stores[1].get(task_id) == winners[0]
    finally:
        for made in stores:
            await made.aclose()


async def test_two_stores_racing_to_create_one_id_have_one_winner(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    stores = [RedisTaskStore(redis_server.url, prefix=redis_prefix) for _ in range(2)]
    created: list[bool] = []

    async def create(which: RedisTaskStore, n: int) -> None:
        try:
            await which.create(task("same", status_message=str(n)))
        except TaskExistsError:
            created.append(False)
        else:
            created.append(True)

    try:
        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(create, stores[n % 2], n)
        assert created.count(True) == 1 and len(created) == 20
    finally:
        for made in stores:
            await made.aclose()


async def test_a_task_created_by_one_store_is_seen_by_another(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    first = RedisTaskStore(redis_server.url, prefix=redis_prefix)
    second = RedisTaskStore(redis_server.url, prefix=redis_prefix)
    try:
        made = task("shared")
        await first.create(made)
        assert await second.get("shared") == made
        assert await second.list("alice") == [made]
    finally:
        await first.aclose()
        await second.aclose()


async def test_prefixes_keep_stores_apart(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    mine = RedisTaskStore(redis_server.url, prefix=redis_prefix + "a:")
    theirs = RedisTaskStore(redis_server.url, prefix=redis_prefix + "b:")
    try:
        await mine.create(task("t"))
        assert await theirs.get("t") is None
        assert await theirs.list("alice") == []
        await theirs.create(task("t"))  # the same id is free there
    finally:
        await mine.aclose()
        await theirs.aclose()


# the client


async def test_a_given_client_is_used_and_left_open(
    raw: Redis, redis_prefix: str
) -> None:
    store = RedisTaskStore(raw, prefix=redis_prefix)
    await store.create(task("t"))
    await store.aclose()
    assert await raw.exists(redis_prefix.encode() + b"task:t") == 1
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("t")


async def test_scripts_are_loaded_again_after_a_script_flush(
    store: RedisTaskStore, raw: Redis
) -> None:
    await store.create(task("a"))
    await raw.script_flush()
    await store.create(task("b"))
    assert await store.update("b", status="completed") is not None


class Replaying:
    """A client whose scripts run twice, the second reply returned: what
    redis-py does when a connection drops after Redis ran a script and
    before its reply arrived."""

    def __init__(self, client: Redis) -> None:
        self.client = client

    async def execute_command(self, *args: Any) -> Any:
        reply = await self.client.execute_command(*args)
        if args[0] in ("EVALSHA", "EVAL"):
            reply = await self.client.execute_command(*args)
        return reply

    async def aclose(self) -> None:
        raise AssertionError("a given client is not closed by the store")


async def test_a_replayed_create_or_finish_keeps_its_outcome(
    raw: Redis, redis_prefix: str
) -> None:
    store = RedisTaskStore(Replaying(raw), prefix=redis_prefix)  # type: ignore[arg-type]
    await store.create(task("t"))  # not TaskExistsError: the second run was ours
    done = await store.update("t", status="completed", result={"v": 1})
    assert done is not None and done.status == "completed"  # not None: ours won
    assert await store.update("t", status="failed") is None
    with pytest.raises(TaskExistsError):
        await store.create(task("t"))
    await store.aclose()


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio_the_store_says_it_needs_asyncio(
    redis_server: RedisServer,
) -> None:
    store = RedisTaskStore(redis_server.url)
    with pytest.raises(RuntimeError, match="asyncio only"):
        await store.get("t")
    await store.aclose()

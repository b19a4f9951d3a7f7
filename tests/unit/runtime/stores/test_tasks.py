"""The `TaskStore` contract, run against every store.

Each test takes `store_factory` (parametrized over `STORE_FACTORIES`) and a
`Clock` it controls: the store must read the time from it, so expiry is
tested without waiting. A new store joins the suite by adding its factory:
an async context manager `(clock, tmp_path) -> store`, e.g. a SQLite file
under `tmp_path`.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_specgen_runtime.stores.sqlite_tasks import SQLiteTaskStore
from mcp_specgen_runtime.stores.tasks import (
    MemoryTaskStore,
    TaskExistsError,
    TaskRecord,
    TaskStore,
)

T0 = 1_700_000_000.0


class Clock:
    """Unix seconds that only move when told."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


StoreFactory = Callable[[Clock, Path], AbstractAsyncContextManager[TaskStore]]


@asynccontextmanager
async def memory_store(clock: Clock, _tmp_path: Path) -> AsyncIterator[TaskStore]:
    store = MemoryTaskStore(clock=clock)
    try:
        yield store
    finally:
        await store.aclose()


@asynccontextmanager
async def sqlite_store(clock: Clock, tmp_path: Path) -> AsyncIterator[TaskStore]:
    store = SQLiteTaskStore(tmp_path / "tasks.db", clock=clock)
    try:
        yield store
    finally:
        await store.aclose()


STORE_FACTORIES: dict[str, StoreFactory] = {
    "memory": memory_store,
    "sqlite": sqlite_store,
}
"""Every store the contract runs against, by name."""

_ids = itertools.count()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


STORE_NAMES = [*sorted(STORE_FACTORIES), "redis"]
"""With Redis, whose factory needs the session's `redis-server` (`factory_for`)."""
ASYNCIO_ONLY = frozenset({"redis"})
"""Stores that run on asyncio only (redis-py's client)."""


def factory_for(name: str, request: pytest.FixtureRequest) -> StoreFactory:
    """The factory of store `name`; Redis's is made here, from the fixtures
    `redis_server` (installed, or the test skips saying why) and `redis_prefix`."""
    if name != "redis":
        return STORE_FACTORIES[name]
    url = request.getfixturevalue("redis_server").url
    prefix = request.getfixturevalue("redis_prefix")

    @asynccontextmanager
    async def redis_store(clock: Clock, _tmp_path: Path) -> AsyncIterator[TaskStore]:
        store = RedisTaskStore(url, prefix=prefix, clock=clock)
        try:
            yield store
        finally:
            await store.aclose()

    return redis_store


@pytest.fixture(params=STORE_NAMES)
def store_factory(request: pytest.FixtureRequest) -> StoreFactory:
    return factory_for(request.param, request)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def record(
    owner: str | None = "alice", *, created_at: float = T0, **fields: Any
) -> TaskRecord:
    return TaskRecord(
        task_id=fields.pop("task_id", f"task-{next(_ids):06d}"),
        owner=owner,
        era=fields.pop("era", "2025-11-25"),
        method=fields.pop("method", "tools/call"),
        created_at=created_at,
        last_updated_at=created_at,
        **fields,
    )


@pytest.mark.anyio
async def test_a_created_task_reads_back_equal(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record(ttl_ms=60_000, poll_interval_ms=500, status_message="started")
        await store.create(task)
        assert await store.get(task.task_id) == task


@pytest.mark.anyio
async def test_json_members_round_trip(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record()
        await store.create(task)
        result = {"content": [{"type": "text", "text": "é"}], "n": 1.5, "ok": None}
        error = {"code": -32602, "message": "bad", "data": {"why": [1, 2]}}
        asks = {"r0": {"method": "elicitation/create", "params": {"message": "?"}}}
        await store.update(task.task_id, input_requests=asks, status="input_required")
        after = await store.update(
            task.task_id, status="failed", result=result, error=error
        )
        assert after is not None
        found = await store.get(task.task_id)
        assert found == after
        assert found.result == result and found.error == error
        assert found.input_requests == asks


@pytest.mark.anyio
async def test_a_record_read_is_a_copy(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record()
        await store.create(task)
        task.status = "completed"  # the caller's object, not the store's
        found = await store.get(task.task_id)
        assert found is not None and found.status == "working"
        found.status = "failed"
        again = await store.get(task.task_id)
        assert again is not None and again.status == "working"


@pytest.mark.anyio
async def test_an_id_is_created_once(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record()
        await store.create(task)
        with pytest.raises(TaskExistsError):
            await store.create(record(task_id=task.task_id))


@pytest.mark.anyio
async def test_unknown_ids_are_none(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        assert await store.get("nope") is None
        assert await store.update("nope", status="completed") is None


@pytest.mark.anyio
async def test_update_changes_an_active_task(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record()
        await store.create(task)
        waiting = await store.update(
            task.task_id, status="input_required", last_updated_at=T0 + 1
        )
        assert waiting is not None
        assert (waiting.status, waiting.last_updated_at) == ("input_required", T0 + 1)
        working = await store.update(
            task.task_id, status="working", status_message="go"
        )
        assert working is not None and working.status_message == "go"
        assert working.created_at == T0  # fixed at creation


@pytest.mark.anyio
async def test_only_updatable_fields_change(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record()
        await store.create(task)
        for field, value in (("owner", "mallory"), ("era", "x"), ("ttl_ms", 1)):
            with pytest.raises(ValueError, match=field):
                await store.update(task.task_id, **{field: value})
        assert await store.get(task.task_id) == task


@pytest.mark.anyio
@pytest.mark.parametrize("terminal", ["completed", "failed", "cancelled"])
async def test_terminal_states_are_sticky(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path, terminal: str
) -> None:
    async with store_factory(clock, tmp_path) as store:
        task = record()
        await store.create(task)
        done = await store.update(task.task_id, status=terminal)
        assert done is not None and done.terminal
        for status in ("working", "input_required", "completed", "cancelled"):
            assert await store.update(task.task_id, status=status) is None
        assert await store.update(task.task_id, status_message="late") is None
        assert await store.get(task.task_id) == done


@pytest.mark.anyio
async def test_racing_terminal_updates_leave_exactly_one_winner(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        for _ in range(50):
            task = record()
            await store.create(task)
            outcomes: dict[str, TaskRecord | None] = {}

            async def finish(
                status: str, task_id: str, found: dict[str, TaskRecord | None]
            ) -> None:
                found[status] = await store.update(task_id, status=status)

            async with anyio.create_task_group() as group:
                for status in ("completed", "cancelled", "failed"):
                    group.start_soon(finish, status, task.task_id, outcomes)
            winners = [s for s, r in outcomes.items() if r is not None]
            assert len(winners) == 1
            found = await store.get(task.task_id)
            assert found is not None and found.status == winners[0]


@pytest.mark.anyio
async def test_expired_tasks_are_gone(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        short = record(ttl_ms=1_000)
        forever = record(ttl_ms=None)
        await store.create(short)
        await store.create(forever)
        clock.now = T0 + 0.999
        assert await store.get(short.task_id) is not None
        clock.now = T0 + 1.0
        assert await store.get(short.task_id) is None
        assert await store.update(short.task_id, status="completed") is None
        assert [r.task_id for r in await store.list("alice")] == [forever.task_id]
        clock.now = T0 + 10**9
        assert await store.get(forever.task_id) is not None


@pytest.mark.anyio
async def test_purge_deletes_only_expired_tasks(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        for ttl in (1_000, 2_000, 5_000, None):
            await store.create(record(ttl_ms=ttl))
        clock.now = T0 + 2.5
        assert await store.purge_expired() == 2
        assert await store.purge_expired() == 0
        assert len(await store.list("alice")) == 2


@pytest.mark.anyio
async def test_an_id_can_be_reused_once_expired(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        old = record(ttl_ms=1_000)
        await store.create(old)
        clock.now = T0 + 5
        new = record(task_id=old.task_id, created_at=T0 + 5)
        await store.create(new)
        assert await store.get(old.task_id) == new


@pytest.mark.anyio
async def test_list_is_per_owner_oldest_first(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        late = record("alice", created_at=T0 + 2, task_id="a-late")
        early = record("alice", created_at=T0 + 1, task_id="z-early")
        tie_b = record("alice", created_at=T0 + 3, task_id="tie-b")
        tie_a = record("alice", created_at=T0 + 3, task_id="tie-a")
        for task in (late, early, tie_b, tie_a):
            await store.create(task)
        await store.create(record("bob"))
        await store.create(record(None))
        listed = [r.task_id for r in await store.list("alice")]
        assert listed == ["z-early", "a-late", "tie-a", "tie-b"]
        assert len(await store.list("bob")) == 1
        assert len(await store.list(None)) == 1
        assert await store.list("carol") == []


@pytest.mark.anyio
async def test_list_pages_with_after_and_limit(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        ids = [f"t{i:02d}" for i in range(7)]
        for i, task_id in enumerate(ids):
            await store.create(record(created_at=T0 + i, task_id=task_id))
        seen: list[str] = []
        after: str | None = None
        while True:
            page = await store.list("alice", after=after, limit=3)
            seen += [r.task_id for r in page]
            if len(page) < 3:
                break
            after = page[-1].task_id
        assert seen == ids


@pytest.mark.anyio
async def test_concurrent_creates_all_land(
    store_factory: StoreFactory, clock: Clock, tmp_path: Path
) -> None:
    async with store_factory(clock, tmp_path) as store:
        tasks = [record(created_at=T0 + i) for i in range(40)]
        async with anyio.create_task_group() as group:
            for task in tasks:
                group.start_soon(store.create, task)
        listed = await store.list("alice", limit=100)
        assert [r.task_id for r in listed] == [t.task_id for t in tasks]

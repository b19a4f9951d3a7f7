"""The `TaskStore` contract: every store passes the same behaviour tests.

A store joins by adding a factory to `FACTORIES`: a function of a folder it
may write in and a clock, giving a fresh empty store, and the event loops it
runs on. The tests run under asyncio and trio (Redis: asyncio only, as
redis-py's client). The Redis factory gets the session's `redis-server` and a
key prefix of its own through `REDIS_FIXTURES`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks.redis_server import RedisServer
from mcp_codegen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_codegen_runtime.stores.sqlite_tasks import SQLiteTaskStore
from mcp_codegen_runtime.stores.tasks import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    MemoryTaskStore,
    TaskExistsError,
    TaskRecord,
    TaskStore,
)

T0 = 1_800_000_000.25


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def memory_store(_folder: Path, clock: Clock) -> TaskStore:
    return MemoryTaskStore(clock=clock)


def sqlite_store(folder: Path, clock: Clock) -> TaskStore:
    return SQLiteTaskStore(folder / "tasks.db", clock=clock)


def redis_store(
    _folder: Path, clock: Clock, server: RedisServer, prefix: str
) -> TaskStore:
    return RedisTaskStore(server.url, prefix=prefix, clock=clock)


BOTH_LOOPS = ("asyncio", "trio")
FACTORIES: list[tuple[str, Callable[..., TaskStore], tuple[str, ...]]] = [
    ("memory", memory_store, BOTH_LOOPS),
    ("sqlite", sqlite_store, BOTH_LOOPS),
    ("redis", redis_store, ("asyncio",)),
]
REDIS_FIXTURES = {"redis": ("redis_server", "redis_prefix")}
"""Factory name -> fixtures whose values follow the folder and the clock."""

CASES = [
    pytest.param((name, factory, loop), id=f"{loop}-{name}")
    for name, factory, loops in FACTORIES
    for loop in loops
]


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest) -> tuple[str, Callable[..., TaskStore], str]:
    return request.param


@pytest.fixture
def anyio_backend(case: tuple[str, Callable[..., TaskStore], str]) -> str:
    return case[2]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(
    request: pytest.FixtureRequest,
    case: tuple[str, Callable[..., TaskStore], str],
    tmp_path: Path,
    clock: Clock,
) -> AsyncIterator[TaskStore]:
    name, factory, _loop = case
    extra: list[Any] = [
        request.getfixturevalue(f) for f in REDIS_FIXTURES.get(name, ())
    ]
    made = factory(tmp_path, clock, *extra)
    try:
        yield made
    finally:
        await made.aclose()


def record(task_id: str = "t1", **fields: Any) -> TaskRecord:
    values: dict[str, Any] = {
        "owner": "alice",
        "era": "2025-11-25",
        "method": "tools/call",
        "created_at": T0,
        "last_updated_at": T0,
        "ttl_ms": 60_000,
        "poll_interval_ms": 500,
    }
    values.update(fields)
    return TaskRecord(task_id=task_id, **values)


pytestmark = pytest.mark.anyio


# create and get


async def test_a_created_task_reads_back_equal(store: TaskStore) -> None:
    full = record(
        owner=None,
        era="2026-07-28",
        status="input_required",
        status_message="waiting for you: é ✓",
        result={"content": [{"type": "text", "text": "x"}], "n": 1.5, "ok": True},
        error={"code": -32603, "message": "boom", "data": [None, {"k": "v"}]},
        input_requests={"q1": {"method": "elicitation/create", "params": {"a": 1}}},
    )
    await store.create(full)
    assert await store.get("t1") == full
    await store.create(record("t2", ttl_ms=None, poll_interval_ms=None))
    assert await store.get("t2") == record("t2", ttl_ms=None, poll_interval_ms=None)


async def test_an_unknown_task_is_none(store: TaskStore) -> None:
    assert await store.get("nope") is None


async def test_records_are_copies(store: TaskStore) -> None:
    mine = record()
    await store.create(mine)
    mine.status = "failed"
    got = await store.get("t1")
    assert got is not None and got.status == "working"
    got.status = "completed"
    again = await store.get("t1")
    assert again is not None and again.status == "working"


async def test_nested_values_are_copies_too(store: TaskStore) -> None:
    mine = record(input_requests={"k": {"method": "m", "params": {"a": [1]}}})
    await store.create(mine)
    assert mine.input_requests is not None
    mine.input_requests["k"]["params"]["a"].append(2)
    got = await store.get("t1")
    assert got is not None and got.input_requests is not None
    assert got.input_requests["k"]["params"] == {"a": [1]}
    got.input_requests["k"]["params"]["a"].append(3)
    result: dict[str, Any] = {"content": [{"type": "text", "text": "x"}]}
    updated = await store.update("t1", status="completed", result=result)
    result["content"].append({"type": "text", "text": "late"})
    assert updated is not None and updated.result is not None
    updated.result["content"].clear()
    again = await store.get("t1")
    assert again is not None and again.input_requests is not None
    assert again.input_requests["k"]["params"] == {"a": [1]}
    assert again.result == {"content": [{"type": "text", "text": "x"}]}


async def test_a_taken_id_is_refused_and_kept(store: TaskStore) -> None:
    await store.create(record(status_message="first"))
    with pytest.raises(TaskExistsError):
        await store.create(record(status_message="second", owner="mallory"))
    got = await store.get("t1")
    assert got is not None and got.status_message == "first" and got.owner == "alice"


async def test_a_taken_id_is_refused_even_when_terminal(store: TaskStore) -> None:
    await store.create(record())
    await store.update("t1", status="completed", result={})
    with pytest.raises(TaskExistsError):
        await store.create(record())


async def test_the_id_of_an_expired_task_may_be_reused(
    store: TaskStore, clock: Clock
) -> None:
    await store.create(record(ttl_ms=1000, status_message="old"))
    clock.now += 1
    fresh = record(created_at=clock.now, status_message="new")
    await store.create(fresh)
    assert await store.get("t1") == fresh


# update


async def test_update_changes_fields_and_returns_the_record(store: TaskStore) -> None:
    await store.create(record())
    updated = await store.update(
        "t1",
        status="input_required",
        status_message="asking",
        last_updated_at=T0 + 1,
        input_requests={"k": {"method": "sampling/createMessage", "params": {}}},
    )
    expected = record(
        status="input_required",
        status_message="asking",
        last_updated_at=T0 + 1,
        input_requests={"k": {"method": "sampling/createMessage", "params": {}}},
    )
    assert updated == expected
    assert await store.get("t1") == expected
    back = await store.update("t1", status="working", input_requests=None)
    assert back is not None and back.status == "working" and back.input_requests is None


async def test_update_with_no_changes_returns_the_active_record(
    store: TaskStore,
) -> None:
    await store.create(record())
    assert await store.update("t1") == record()


async def test_update_of_an_unknown_task_is_none(store: TaskStore) -> None:
    assert await store.update("nope", status="completed") is None
    assert await store.get("nope") is None


@pytest.mark.parametrize(
    "field", ["owner", "era", "method", "created_at", "ttl_ms", "bogus"]
)
async def test_update_refuses_fields_it_may_not_change(
    store: TaskStore, field: str
) -> None:
    await store.create(record())
    with pytest.raises(ValueError, match=field):
        await store.update("t1", **{field: "x"})
    with pytest.raises(ValueError, match=field):
        await store.update("unknown", **{field: "x"})
    assert await store.get("t1") == record()


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATUSES))
async def test_terminal_states_are_sticky(store: TaskStore, terminal: str) -> None:
    await store.create(record())
    done = await store.update("t1", status=terminal, result={"v": 1})
    assert done is not None and done.status == terminal
    for status in sorted(ACTIVE_STATUSES | TERMINAL_STATUSES):
        assert await store.update("t1", status=status, result={"v": 2}) is None
    assert await store.update("t1", status_message="late") is None
    assert await store.get("t1") == done


async def test_racing_updates_to_terminal_states_have_one_winner(
    store: TaskStore,
) -> None:
    await store.create(record())
    outcomes: list[tuple[str, TaskRecord | None]] = []
    statuses = sorted(TERMINAL_STATUSES) * 10

    async def finish(status: str, n: int) -> None:
        outcomes.append(
            (status, await store.update("t1", status=status, result={"n": n}))
        )

    async with anyio.create_task_group() as group:
        for n, status in enumerate(statuses):
            group.start_soon(finish, status, n)
    winners = [(status, done) for status, done in outcomes if done is not None]
    assert len(outcomes) == len(statuses) and len(winners) == 1
    status, won = winners[0]
    assert won is not None and won.status == status
    assert await store.get("t1") == won


# expiry


async def test_a_task_is_gone_once_its_ttl_has_passed(
    store: TaskStore, clock: Clock
) -> None:
    await store.create(record(ttl_ms=1500))
    await store.create(record("forever", ttl_ms=None))
    clock.now = T0 + 1.499
    assert await store.get("t1") is not None
    clock.now = T0 + 1.5
    assert await store.get("t1") is None
    assert await store.update("t1", status="completed") is None
    assert await store.list("alice") == [record("forever", ttl_ms=None)]
    clock.now = T0 + 10**9
    assert await store.get("forever") is not None


async def test_a_terminal_task_expires_too(store: TaskStore, clock: Clock) -> None:
    await store.create(record(ttl_ms=1000))
    await store.update("t1", status="completed", result={})
    clock.now += 1
    assert await store.get("t1") is None


async def test_purge_deletes_only_expired_tasks(store: TaskStore, clock: Clock) -> None:
    await store.create(record("a", ttl_ms=1000))
    await store.create(record("b", ttl_ms=2000))
    await store.create(record("c", ttl_ms=None))
    assert await store.purge_expired() == 0
    clock.now = T0 + 1
    assert await store.purge_expired() == 1
    assert await store.purge_expired() == 0
    clock.now = T0 + 5
    assert await store.purge_expired() == 1
    clock.now = T0 - 10
    assert await store.get("a") is None and await store.get("b") is None
    assert await store.get("c") is not None


# list


async def test_list_shows_only_the_owners_tasks(store: TaskStore) -> None:
    await store.create(record("a", owner="alice"))
    await store.create(record("b", owner="bob"))
    await store.create(record("n", owner=None))
    assert [r.task_id for r in await store.list("alice")] == ["a"]
    assert [r.task_id for r in await store.list("bob")] == ["b"]
    assert [r.task_id for r in await store.list(None)] == ["n"]
    assert await store.list("carol") == []


async def test_list_is_oldest_first_then_by_id(store: TaskStore) -> None:
    await store.create(record("z", created_at=T0))
    await store.create(record("b", created_at=T0 + 1))
    await store.create(record("a", created_at=T0 + 1))
    await store.create(record("y", created_at=T0 - 1))
    assert [r.task_id for r in await store.list("alice")] == ["y", "z", "a", "b"]


async def test_list_shows_terminal_tasks_and_full_records(store: TaskStore) -> None:
    await store.create(record("a"))
    done = await store.update("a", status="failed", error={"code": 1, "message": "m"})
    assert await store.list("alice") == [done]


async def test_pages_cover_every_task_once(store: TaskStore) -> None:
    ids = [f"t{n:02d}" for n in range(23)]
    for n, task_id in enumerate(ids):
        await store.create(record(task_id, created_at=T0 + n // 3))
    await store.create(record("other", owner="bob"))
    seen: list[str] = []
    after: str | None = None
    while True:
        page = await store.list("alice", after=after, limit=5)
        seen += [r.task_id for r in page]
        if len(page) < 5:
            break
        after = page[-1].task_id
    assert seen == ids


async def test_list_limits_to_fifty_by_default(store: TaskStore) -> None:
    for n in range(51):
        await store.create(record(f"t{n:02d}"))
    assert len(await store.list("alice")) == 50


@pytest.mark.parametrize("limit", [0, -1, -100])
async def test_a_limit_below_one_gives_nothing(store: TaskStore, limit: int) -> None:
    await store.create(record("a"))
    await store.create(record("b"))
    assert await store.list("alice", limit=limit) == []


async def test_after_an_unknown_task_gives_nothing(store: TaskStore) -> None:
    """A cursor that no longer points anywhere must not restart the listing."""
    await store.create(record("a"))
    await store.create(record("b", owner="bob", created_at=T0 - 1))
    assert await store.list("alice", after="missing") == []
    assert await store.list("alice", after="b") == []


# racing creates


async def test_racing_creates_of_one_id_have_one_winner(store: TaskStore) -> None:
    results: list[bool] = []

    async def create(n: int) -> None:
        try:
            await store.create(record(status_message=str(n)))
        except TaskExistsError:
            results.append(False)
        else:
            results.append(True)

    async with anyio.create_task_group() as group:
        for n in range(20):
            group.start_soon(create, n)
    assert results.count(True) == 1 and len(results) == 20

"""More of the `TaskStore` contract, beyond `test_tasks.py`, over the same
stores (`test_tasks.STORE_NAMES`: a store joins the contract there) and
under asyncio and trio (Redis: asyncio only): nested values are copies, a
taken id stays taken, updates of nothing or of fixed fields, terminal tasks
expire, list limits and a stale `after`, racing creates of one id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.stores.tasks import TaskExistsError, TaskRecord, TaskStore

from .test_tasks import ASYNCIO_ONLY, STORE_NAMES, Clock, factory_for

T0 = 1_800_000_000.25


CASES = [
    pytest.param((name, loop), id=f"{loop}-{name}")
    for name in STORE_NAMES
    for loop in ("asyncio", "trio")
    if loop == "asyncio" or name not in ASYNCIO_ONLY
]


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(store, event loop): one axis, so an asyncio-only store has no trio case."""
    return request.param


@pytest.fixture
def anyio_backend(case: tuple[str, str]) -> str:
    return case[1]


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
async def store(
    request: pytest.FixtureRequest, case: tuple[str, str], tmp_path: Path, clock: Clock
) -> AsyncIterator[TaskStore]:
    async with factory_for(case[0], request)(clock, tmp_path) as made:
        yield made


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


# update


async def test_update_with_no_changes_returns_the_active_record(
    store: TaskStore,
) -> None:
    await store.create(record())
    assert await store.update("t1") == record()


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


# expiry


async def test_a_terminal_task_expires_too(store: TaskStore, clock: Clock) -> None:
    await store.create(record(ttl_ms=1000))
    await store.update("t1", status="completed", result={})
    clock.now += 1
    assert await store.get("t1") is None


# list


async def test_list_shows_terminal_tasks_and_full_records(store: TaskStore) -> None:
    await store.create(record("a"))
    done = await store.update("a", status="failed", error={"code": 1, "message": "m"})
    assert await store.list("alice") == [done]


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

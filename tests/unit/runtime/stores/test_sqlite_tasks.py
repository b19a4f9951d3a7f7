"""`SQLiteTaskStore` beyond the shared contract: the file outlives the store
and the process, several stores and processes share it, orphans fail."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.stores.sqlite_tasks import (
    ORPHAN_ERROR,
    SCHEMA_VERSION,
    SQLiteTaskStore,
)
from mcp_specgen_runtime.stores.tasks import TaskRecord

from .sqlite_worker import RESULT, task

WORKER = Path(__file__).with_name("sqlite_worker.py")
ROOT = Path(__file__).resolve().parents[4]
T0 = 1_800_000_000.5

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "tasks.db"


@pytest.fixture
async def store(db: Path) -> AsyncIterator[SQLiteTaskStore]:
    opened = SQLiteTaskStore(db, clock=lambda: T0)
    try:
        yield opened
    finally:
        await opened.aclose()


def worker(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.fixture
def holder(db: Path) -> Iterator[subprocess.Popen[str]]:
    """A process that created `running` and `done` at T0 and lives on."""
    with worker("hold", str(db), repr(T0)) as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n"
            yield process
        finally:
            process.kill()


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL


# the file


async def test_the_file_is_in_wal_mode_with_its_schema_version(
    store: SQLiteTaskStore, db: Path
) -> None:
    await store.create(task("a", T0))
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_the_files_are_private_to_the_server_s_user(
    store: SQLiteTaskStore, db: Path
) -> None:
    """Tasks hold tool results: other users of the machine may not read them."""
    await store.create(task("a", T0))
    files = [db, db.with_name("tasks.db-wal"), db.with_name("tasks.db-shm")]
    for path in files:
        assert (await anyio.Path(path).stat()).st_mode & 0o777 == 0o600, path
    folder = await anyio.Path(store.runners_folder).stat()
    assert folder.st_mode & 0o777 == 0o700


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (
            "SELECT * FROM tasks WHERE owner IS 'a' AND (expires_at IS NULL OR"
            " expires_at > 0) ORDER BY created_at, task_id LIMIT 5",
            "tasks_by_owner",
        ),
        ("DELETE FROM tasks WHERE expires_at <= 0", "tasks_by_expiry"),
        (
            "SELECT DISTINCT runner FROM tasks WHERE status IN"
            " ('input_required', 'working')",
            "tasks_active_by_runner",
        ),
    ],
)
async def test_listing_expiry_and_orphan_sweeps_use_an_index(
    store: SQLiteTaskStore, db: Path, query: str, index: str
) -> None:
    await store.create(task("a", T0))
    with sqlite3.connect(db) as raw:
        plan = " ".join(row[-1] for row in raw.execute("EXPLAIN QUERY PLAN " + query))
    assert index in plan and "ORDER BY" not in plan


async def test_a_file_of_a_newer_layout_is_refused(db: Path) -> None:
    db.parent.mkdir()
    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    store = SQLiteTaskStore(db)
    with pytest.raises(RuntimeError, match="version"):
        await store.get("a")
    await store.aclose()


@pytest.mark.parametrize("synchronous", ["OFF", "normal; DROP TABLE tasks", ""])
async def test_only_durable_synchronous_settings_are_taken(
    db: Path, synchronous: Any
) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteTaskStore(db, synchronous=synchronous)


async def test_a_closed_store_refuses_calls(db: Path) -> None:
    store = SQLiteTaskStore(db, clock=lambda: T0)
    await store.create(task("a", T0))
    await store.aclose()
    await store.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("a")


async def test_a_store_that_was_never_used_closes(db: Path) -> None:
    await SQLiteTaskStore(db).aclose()
    assert not await anyio.Path(db).exists()


# several stores on one file


async def test_a_new_store_reads_what_a_closed_one_wrote(db: Path) -> None:
    first = SQLiteTaskStore(db, clock=lambda: T0)
    await first.create(task("done", T0))
    done = await first.update("done", status="completed", result=RESULT)
    await first.aclose()
    second = SQLiteTaskStore(db, clock=lambda: T0 + 1)
    assert await second.get("done") == done
    await second.aclose()


async def test_stores_on_one_file_see_each_others_writes(
    store: SQLiteTaskStore, db: Path
) -> None:
    other = SQLiteTaskStore(db, clock=lambda: T0)
    try:
        await store.create(task("a", T0))
        assert await other.get("a") == task("a", T0)
        moved = await other.update("a", status="input_required")
        assert await store.get("a") == moved
        assert [r.task_id for r in await other.list("alice")] == ["a"]
    finally:
        await other.aclose()


async def test_stores_on_one_file_race_to_terminal_with_one_winner(
    store: SQLiteTaskStore, db: Path
) -> None:
    others = [SQLiteTaskStore(db, clock=lambda: T0) for _ in range(4)]
    ids = [f"t{n}" for n in range(20)]
    for task_id in ids:
        await store.create(task(task_id, T0))
    wins: dict[str, list[str]] = {task_id: [] for task_id in ids}

    async def finish(racer: SQLiteTaskStore, status: str) -> None:
        for task_id in ids:
            if await racer.update(task_id, status=status) is not None:
                wins[task_id].append(status)

    try:
        async with anyio.create_task_group() as group:
            for n, racer in enumerate(others):
                group.start_soon(finish, racer, ["completed", "cancelled"][n % 2])
    finally:
        for racer in others:
            await racer.aclose()
    for task_id in ids:
        assert len(wins[task_id]) == 1
        got = await store.get(task_id)
        assert got is not None and got.status == wins[task_id][0]


async def test_processes_race_to_terminal_with_one_winner(
    store: SQLiteTaskStore, db: Path
) -> None:
    ids = [f"t{n}" for n in range(40)]
    for task_id in ids:
        await store.create(task(task_id, T0))
    statuses = ["completed", "failed", "cancelled", "completed"]
    racers = [worker("race", str(db), repr(T0), status, *ids) for status in statuses]
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdin is not None
            assert racer.stdout.readline() == "ready\n"
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        won = [json.loads(racer.communicate()[0]) for racer in racers]
    finally:
        for racer in racers:
            racer.kill()
            racer.__exit__(None, None, None)
    winners = sorted(task_id for ids_won in won for task_id in ids_won)
    assert winners == sorted(ids)
    for status, ids_won in zip(statuses, won, strict=True):
        for task_id in ids_won:
            got = await store.get(task_id)
            assert got is not None and got.result == {"by": status}
            assert got.status == status


async def test_a_writer_waits_for_another_process_s_write(
    store: SQLiteTaskStore, db: Path
) -> None:
    await store.create(task("a", T0))
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("BEGIN IMMEDIATE")
    raw.execute("UPDATE tasks SET status_message = 'held' WHERE task_id = 'a'")
    impatient = SQLiteTaskStore(db, busy_timeout=0, clock=lambda: T0)
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await impatient.update("a", status="completed")
        async with anyio.create_task_group() as group:
            moved: list[TaskRecord | None] = []

            async def update() -> None:
                moved.append(await store.update("a", status="completed"))

            group.start_soon(update)
            await anyio.sleep(0.2)
            raw.execute("COMMIT")
        assert moved[0] is not None
        assert moved[0].status == "completed" and moved[0].status_message == "held"
    finally:
        raw.close()
        await impatient.aclose()


# restarts and orphans


async def test_a_task_written_before_kill_9_is_read_within_its_ttl(
    db: Path, holder: subprocess.Popen[str]
) -> None:
    kill(holder)
    within = SQLiteTaskStore(db, clock=lambda: T0 + 59.999)
    after = SQLiteTaskStore(db, clock=lambda: T0 + 60)
    try:
        done = await within.get("done")
        assert done is not None and done.status == "completed"
        assert done.result == RESULT
        assert await after.get("done") is None
        assert await after.list("alice") == []
    finally:
        await within.aclose()
        await after.aclose()


async def test_a_live_runner_s_task_stays_working(
    db: Path, holder: subprocess.Popen[str]
) -> None:
    reader = SQLiteTaskStore(db, clock=lambda: T0 + 1)
    try:
        assert await reader.fail_orphans() == 0
        running = await reader.get("running")
        assert running is not None and running.status == "working"
        assert [r.status for r in await reader.list("alice")] == [
            "completed",
            "working",
        ]
    finally:
        await reader.aclose()
    assert holder.poll() is None


async def test_a_working_task_of_a_killed_process_is_failed_on_open(
    db: Path, holder: subprocess.Popen[str]
) -> None:
    kill(holder)
    restarted = SQLiteTaskStore(db, clock=lambda: T0 + 2)
    try:
        done = await restarted.get("done")
        assert done is not None and done.status == "completed"
        with sqlite3.connect(db) as raw:
            row = raw.execute("SELECT status FROM tasks WHERE task_id = 'running'")
            assert row.fetchone() == ("failed",)
        running = await restarted.get("running")
        assert running is not None
        assert running.status == "failed" and running.error == ORPHAN_ERROR
        assert (
            running.status_message is not None and "stopped" in running.status_message
        )
        assert running.last_updated_at == T0 + 2
        assert await restarted.update("running", status="completed") is None
    finally:
        await restarted.aclose()


@pytest.mark.parametrize("read", ["get", "list"])
async def test_a_runner_that_dies_while_a_store_is_open_is_noticed(
    db: Path, holder: subprocess.Popen[str], read: str
) -> None:
    reader = SQLiteTaskStore(db, clock=lambda: T0 + 3)
    try:
        first = await reader.get("running")
        assert first is not None and first.status == "working"
        kill(holder)
        if read == "get":
            running = await reader.get("running")
        else:
            running = next(
                r for r in await reader.list("alice") if r.task_id == "running"
            )
        assert running is not None and running.status == "failed"
    finally:
        await reader.aclose()


async def test_fail_orphans_counts_what_it_failed(
    db: Path, holder: subprocess.Popen[str]
) -> None:
    reader = SQLiteTaskStore(db, clock=lambda: T0)
    try:
        await reader.get("done")
        kill(holder)
        assert await reader.fail_orphans() == 1
        assert await reader.fail_orphans() == 0
    finally:
        await reader.aclose()


async def test_closing_fails_the_store_s_own_active_tasks(db: Path) -> None:
    first = SQLiteTaskStore(db, clock=lambda: T0)
    await first.create(task("running", T0))
    await first.create(task("asking", T0))
    await first.update("asking", status="input_required", input_requests={"k": {}})
    await first.create(task("done", T0))
    done = await first.update("done", status="completed", result=RESULT)
    await first.aclose()
    second = SQLiteTaskStore(db, clock=lambda: T0 + 1)
    try:
        for task_id in ("running", "asking"):
            got = await second.get(task_id)
            assert got is not None and got.status == "failed"
            assert got.input_requests is None and got.error == ORPHAN_ERROR
        assert await second.get("done") == done
    finally:
        await second.aclose()

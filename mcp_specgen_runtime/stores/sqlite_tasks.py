"""`SQLiteTaskStore`: tasks in an SQLite file, kept across restarts.

One file serves every process of one host: WAL mode lets readers run beside
a writer, a busy timeout makes a process wait for another's write instead of
failing, and each rule of `TaskStore` is one SQL statement, so it holds
between processes too (the sticky terminal states are an `UPDATE` whose
`WHERE` demands an active status; `create` over an expired id is one upsert).

Calls run in a worker thread, one at a time per store (an anyio
`CapacityLimiter` of one): an `sqlite3` connection must not be used by two
threads at once, and one connection per store keeps its statement cache.
Waiting callers wait on the event loop, not in parked threads, the store's
threads are not taken from the limiter that runs an `App`'s plain functions,
and the same code runs under asyncio and trio. A cancelled caller still lets
its statement finish (anyio does not abandon the thread), so a write is
never left half-known.

A task whose process died cannot finish. Each store records which process
(runner) created a task and holds a lock file the operating system frees
when the process ends (`runners.py`); a task found active whose runner is
gone is marked `failed` with `ORPHAN_ERROR`, at open, on `get` and on
`list`. Closing the store fails its own still-active tasks the same way.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import anyio.to_thread
import msgspec

from ..errors import ErrorCode
from .runners import RunnerLock, runner_alive
from .tasks import (
    ACTIVE_STATUSES,
    TaskExistsError,
    TaskRecord,
    check_changes,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["ORPHAN_ERROR", "SCHEMA_VERSION", "SQLiteTaskStore"]

_T = TypeVar("_T")
_Records = list[TaskRecord]  # `list` is a method name inside the class

SCHEMA_VERSION = 1
"""The table layout this module writes (`PRAGMA user_version`)."""

ORPHAN_MESSAGE = "The server stopped before the task finished."
"""The status message of a task whose runner is gone (the words the task
manager uses when it stops its own tasks at shutdown)."""
ORPHAN_ERROR: dict[str, Any] = {
    "code": int(ErrorCode.INTERNAL_ERROR),
    "message": ORPHAN_MESSAGE,
}
"""The error of a task whose runner is gone (it can never finish)."""

_FIELDS = (
    "task_id",
    "owner",
    "era",
    "method",
    "status",
    "status_message",
    "created_at",
    "last_updated_at",
    "ttl_ms",
    "poll_interval_ms",
    "result",
    "error",
    "input_requests",
)
_JSON_FIELDS = frozenset({"result", "error", "input_requests"})
_SELECT = ", ".join(_FIELDS) + ", runner"
_ACTIVE = "status IN ({})".format(", ".join(f"'{s}'" for s in sorted(ACTIVE_STATUSES)))
_LIVE = "(expires_at IS NULL OR expires_at > ?)"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT,
    era TEXT NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at REAL NOT NULL,
    last_updated_at REAL NOT NULL,
    ttl_ms INTEGER,
    poll_interval_ms INTEGER,
    result TEXT,
    error TEXT,
    input_requests TEXT,
    expires_at REAL,
    runner TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, created_at, task_id);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (expires_at)
    WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_active_by_runner ON tasks (runner) WHERE {_ACTIVE};
"""

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class SQLiteTaskStore:
    """Tasks in an SQLite file: durable, shared by the processes of one host.

    The file is created (with its folder) on first use; its `-runners`
    sibling folder holds the runners' lock files.

    Args:
        path: the database file.
        busy_timeout: seconds a call waits for another process's write.
        synchronous: "NORMAL" survives a crash of the process (kill -9);
            "FULL" also a crash of the machine, at an fsync per write.
        clock: Unix seconds now (tests pass their own).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL: {synchronous!r}")
        self.path = Path(path)
        self._busy_timeout = busy_timeout
        self._synchronous = synchronous
        self._clock = clock
        self._limiter = anyio.CapacityLimiter(1)
        self._db: sqlite3.Connection | None = None
        self._runner: RunnerLock | None = None
        self._gone: set[str] = set()
        self._closed = False

    @property
    def runners_folder(self) -> Path:
        """Where the lock files of the processes using this file live."""
        return self.path.with_name(self.path.name + "-runners")

    async def create(self, record: TaskRecord) -> None:
        if not await self._run(self._create, record):
            raise TaskExistsError(record.task_id)

    async def get(self, task_id: str) -> TaskRecord | None:
        return await self._run(self._get, task_id)

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        check_changes(changes)
        return await self._run(self._update, task_id, changes)

    async def list(
        self, owner: str | None, *, after: str | None = None, limit: int = 50
    ) -> list[TaskRecord]:
        if limit <= 0:
            return []
        return await self._run(self._list, owner, after, limit)

    async def purge_expired(self) -> int:
        return await self._run(self._purge)

    async def fail_orphans(self) -> int:
        """Mark failed every active task whose runner is gone; how many."""
        return await self._run(self._fail_orphans)

    async def aclose(self) -> None:
        """Fail this process's still-active tasks, close the file, and let
        the runner lock go. Later calls raise RuntimeError."""
        await anyio.to_thread.run_sync(self._close, limiter=self._limiter)

    # Everything below runs in the store's worker thread, one call at a time.

    async def _run(self, func: Callable[..., _T], *args: Any) -> _T:
        return await anyio.to_thread.run_sync(
            self._call, func, args, limiter=self._limiter
        )

    def _call(self, func: Callable[..., _T], args: tuple[Any, ...]) -> _T:
        if self._closed:
            raise RuntimeError("the task store is closed")
        if self._db is None:
            self._open()
        return func(*args)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Tasks hold tool results: a new file is the server user's only
        # (SQLite gives its -wal and -shm files the same mode).
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        db = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={self._synchronous}")
            db.execute("BEGIN IMMEDIATE")
            try:
                (version,) = db.execute("PRAGMA user_version").fetchone()
                if version > SCHEMA_VERSION:
                    raise RuntimeError(
                        f"{self.path} holds task store version {version}; "
                        f"this runtime reads version {SCHEMA_VERSION}"
                    )
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._runner = RunnerLock(self.runners_folder)
        except BaseException:
            db.close()
            raise
        self._db = db
        self._fail_orphans()

    def _close(self) -> None:
        self._closed = True
        try:
            if self._db is not None and self._runner is not None:
                self._fail_runner(self._runner.runner_id)
        finally:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._runner is not None:
                self._runner.release()
                self._runner = None

    @property
    def _conn(self) -> sqlite3.Connection:
        assert self._db is not None
        return self._db

    @property
    def _me(self) -> str:
        assert self._runner is not None
        return self._runner.runner_id

    def _create(self, record: TaskRecord) -> bool:
        columns = ", ".join((*_FIELDS, "expires_at", "runner"))
        marks = ", ".join("?" * (len(_FIELDS) + 2))
        refresh = ", ".join(f"{c} = excluded.{c}" for c in (*_FIELDS, "expires_at"))
        cursor = self._conn.execute(
            f"INSERT INTO tasks ({columns}) VALUES ({marks}) "
            f"ON CONFLICT (task_id) DO UPDATE SET {refresh}, runner = excluded.runner "
            "WHERE tasks.expires_at IS NOT NULL AND tasks.expires_at <= ?",
            (*_row_of(record), record.expires_at, self._me, self._clock()),
        )
        return cursor.rowcount == 1

    def _get(self, task_id: str) -> TaskRecord | None:
        row = self._conn.execute(
            f"SELECT {_SELECT} FROM tasks WHERE task_id = ? AND {_LIVE}",
            (task_id, self._clock()),
        ).fetchone()
        if row is None:
            return None
        if self._orphaned(row):
            return self._get(task_id)
        return _record_of(row)

    def _update(self, task_id: str, changes: dict[str, Any]) -> TaskRecord | None:
        names = list(changes)
        sets = ", ".join(f"{name} = ?" for name in names) or "status = status"
        values = [_column(name, changes[name]) for name in names]
        row = self._conn.execute(
            f"UPDATE tasks SET {sets} WHERE task_id = ? AND {_ACTIVE} AND {_LIVE} "
            f"RETURNING {_SELECT}",
            (*values, task_id, self._clock()),
        ).fetchone()
        return None if row is None else _record_of(row)

    def _list(self, owner: str | None, after: str | None, limit: int) -> _Records:
        now = self._clock()
        query = f"SELECT {_SELECT} FROM tasks WHERE owner IS ? AND {_LIVE}"
        params: list[Any] = [owner, now]
        if after is not None:
            query += (
                " AND (created_at, task_id) > (SELECT created_at, task_id FROM tasks"
                f" WHERE task_id = ? AND owner IS ? AND {_LIVE})"
            )
            params += [after, owner, now]
        query += " ORDER BY created_at, task_id LIMIT ?"
        rows = self._conn.execute(query, (*params, limit)).fetchall()
        if any(self._orphaned(row) for row in rows):
            return self._list(owner, after, limit)
        return [_record_of(row) for row in rows]

    def _purge(self) -> int:
        return self._conn.execute(
            "DELETE FROM tasks WHERE expires_at <= ?", (self._clock(),)
        ).rowcount

    def _orphaned(self, row: tuple[Any, ...]) -> bool:
        """Whether `row` is an active task of a runner that is gone (then it
        is failed now, by this call or another store's: read it again)."""
        status, runner = row[_FIELDS.index("status")], row[-1]
        if status not in ACTIVE_STATUSES or runner == self._me:
            return False
        if runner not in self._gone:
            if runner_alive(self.runners_folder, runner):
                return False
            self._gone.add(runner)
        self._fail_runner(runner)
        return True

    def _fail_orphans(self) -> int:
        runners: Iterable[str] = [
            runner
            for (runner,) in self._conn.execute(
                f"SELECT DISTINCT runner FROM tasks WHERE {_ACTIVE}"
            )
        ]
        failed = 0
        for runner in runners:
            if runner != self._me and (
                runner in self._gone or not runner_alive(self.runners_folder, runner)
            ):
                self._gone.add(runner)
                failed += self._fail_runner(runner)
        return failed

    def _fail_runner(self, runner: str) -> int:
        now = self._clock()
        return self._conn.execute(
            "UPDATE tasks SET status = 'failed', status_message = ?, error = ?,"
            " input_requests = NULL, last_updated_at = ?"
            f" WHERE runner = ? AND {_ACTIVE}",
            (ORPHAN_MESSAGE, _encode(ORPHAN_ERROR).decode(), now, runner),
        ).rowcount


def _column(name: str, value: Any) -> Any:
    """A field's value as its column holds it."""
    if name in _JSON_FIELDS and value is not None:
        return _encode(value).decode()
    return value


def _row_of(record: TaskRecord) -> tuple[Any, ...]:
    return tuple(_column(name, getattr(record, name)) for name in _FIELDS)


def _record_of(row: tuple[Any, ...]) -> TaskRecord:
    fields: dict[str, Any] = {
        name: (_decode(value) if name in _JSON_FIELDS and value is not None else value)
        for name, value in zip(_FIELDS, row, strict=False)
    }
    return TaskRecord(**fields)

"""Tasks as stored: `TaskRecord`, the `TaskStore` interface, `MemoryTaskStore`.

A record is era-neutral: it holds what both wire designs (2025-11-25 core
tasks and the 2026-07-28 tasks extension) show of a task, as builtins, so a
store can keep it as JSON. The task manager (`protocol.tasks`) decides what
happens to a task; a store only keeps records and enforces two rules that
must hold even when several workers race:

- terminal states are sticky: `update` of a completed, failed or cancelled
  task changes nothing and returns None;
- an expired task is gone: `get`, `update` and `list` never return a record
  whose TTL has passed, and `purge_expired` deletes them.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import msgspec

__all__ = [
    "ACTIVE_STATUSES",
    "TERMINAL_STATUSES",
    "MemoryTaskStore",
    "TaskExistsError",
    "TaskRecord",
    "TaskStore",
]

ACTIVE_STATUSES = frozenset({"working", "input_required"})
"""A task in one of these may still change."""
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
"""A task in one of these never changes again."""


class TaskExistsError(Exception):
    """`create` was given the id of a task the store already has."""


class TaskRecord(msgspec.Struct, kw_only=True):
    """One task, as a store keeps it.

    Attributes:
        task_id: the id the requestor polls with (from a CSPRNG).
        owner: whom the task belongs to (an opaque key: the principal's
            binding, or the legacy session when unauthenticated); None: any
            holder of the id.
        era: the revision whose wire created it ("2025-11-25" or
            "2026-07-28").
        method: the request that created it (e.g. "tools/call").
        status: working, input_required, completed, failed or cancelled.
        status_message: a human-readable note on the status.
        created_at, last_updated_at: Unix seconds.
        ttl_ms: how long after creation the task is kept (None: until the
            server deletes it).
        poll_interval_ms: how often the requestor should poll.
        result: the request's result (builtins), when completed.
        error: the JSON-RPC error object (`code`, `message`, `data`), when
            failed.
        input_requests: key -> `{"method", "params"}` of each question the
            task waits on (2026 `input_required`).
    """

    task_id: str
    owner: str | None
    era: str
    method: str
    status: str = "working"
    status_message: str | None = None
    created_at: float
    last_updated_at: float
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] | None = None

    @property
    def terminal(self) -> bool:
        """Whether the task has finished (its status never changes again)."""
        return self.status in TERMINAL_STATUSES

    @property
    def expires_at(self) -> float | None:
        """When the task is deleted (Unix seconds), None for never."""
        if self.ttl_ms is None:
            return None
        return self.created_at + self.ttl_ms / 1000

    def expired(self, now: float) -> bool:
        """Whether the TTL has passed at `now`."""
        expires_at = self.expires_at
        return expires_at is not None and now >= expires_at


UPDATABLE = frozenset(
    {
        "status",
        "status_message",
        "last_updated_at",
        "poll_interval_ms",
        "result",
        "error",
        "input_requests",
    }
)
"""The fields `update` may change; the others are fixed at creation."""


class TaskStore(Protocol):
    """Where tasks are kept. Every method is safe to call concurrently."""

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task; durable (a `get` from any worker sees it) when
        this returns.

        Raises:
            TaskExistsError: the id is taken.
        """
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None when unknown or expired."""
        ...

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Change an active task's `UPDATABLE` fields at once; the record
        after the change, or None (nothing changed) when the task is
        unknown, expired or terminal.

        Raises:
            ValueError: a field that is not in `UPDATABLE`.
        """
        ...

    async def list(
        self, owner: str | None, *, after: str | None = None, limit: int = 50
    ) -> list[TaskRecord]:
        """Up to `limit` live tasks of `owner`, oldest first (by creation,
        then id), starting after the task whose id is `after` (none when
        `after` is not one of them, or `limit` is below one)."""
        ...

    async def purge_expired(self) -> int:
        """Delete every expired task; how many were deleted."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds (connections, files)."""
        ...


def check_changes(changes: dict[str, Any]) -> None:
    """Refuse fields `update` may not change (a helper for stores)."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"task fields that cannot be updated: {sorted(unknown)}")


def _copy(record: TaskRecord, **changes: Any) -> TaskRecord:
    """`record` with `changes`, sharing nothing mutable with the caller's
    objects (nested JSON values included), as a store that serializes would."""
    copied = msgspec.structs.replace(record, **changes)
    for name in ("result", "error", "input_requests"):
        value = getattr(copied, name)
        if value is not None:
            setattr(copied, name, msgspec.to_builtins(value))  # a fresh tree
    return copied


class MemoryTaskStore:
    """Tasks in this process's memory: lost on restart, seen by one process.

    Args:
        clock: Unix seconds now (tests pass their own).
    """

    def __init__(self, *, clock: Any = time.time) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._clock = clock

    async def create(self, record: TaskRecord) -> None:
        self._drop_if_expired(record.task_id)
        if record.task_id in self._records:
            raise TaskExistsError(record.task_id)
        self._records[record.task_id] = _copy(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._drop_if_expired(task_id)
        return None if record is None else _copy(record)

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        check_changes(changes)
        record = self._drop_if_expired(task_id)
        if record is None or record.terminal:
            return None
        updated = _copy(record, **changes)
        self._records[task_id] = updated
        return _copy(updated)

    async def list(
        self, owner: str | None, *, after: str | None = None, limit: int = 50
    ) -> list[TaskRecord]:
        if limit <= 0:
            return []
        now = self._clock()
        live = (r for r in self._records.values() if not r.expired(now))
        mine = sorted(
            (r for r in live if r.owner == owner),
            key=lambda r: (r.created_at, r.task_id),
        )
        start = 0
        if after is not None:
            start = next(
                (i + 1 for i, r in enumerate(mine) if r.task_id == after), len(mine)
            )
        return [_copy(r) for r in mine[start : start + limit]]

    async def purge_expired(self) -> int:
        now = self._clock()
        expired = [i for i, r in self._records.items() if r.expired(now)]
        for task_id in expired:
            del self._records[task_id]
        return len(expired)

    async def aclose(self) -> None:
        self._records.clear()

    def _drop_if_expired(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expired(self._clock()):
            del self._records[task_id]
            return None
        return record

"""`RunningTask`: what a task's work sees of its own task.

The manager gives one to `run(task)`. Through it the work (or the
runtime's `request_client`, which finds it on the `ClientExchange`) moves the
task to `input_required` while it waits on the client, and back:

- legacy era: `awaiting_input()` around requests sent to the client over the
  connection (they carry `related_meta`);
- 2026 era: `ask(questions)` parks the questions on the record's
  `input_requests` and returns the answers `TaskManager.answer` delivers.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from .meta import related_task_meta

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Mapping

    from mcp_specgen_runtime.stores.tasks import TaskRecord, TaskStore

__all__ = ["RunningTask", "TaskEngine"]


class TaskEngine(Protocol):
    """What a running task needs of its `TaskManager`."""

    @property
    def store(self) -> TaskStore:
        """Where the task is kept."""
        ...

    async def touch(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Change an active task."""
        ...

    async def park(
        self, task_id: str, questions: Mapping[str, tuple[str, Any]]
    ) -> dict[str, Any]:
        """Wait on the record until the questions are answered."""
        ...


class RunningTask:
    """One task, as its own work sees it (see the module docstring)."""

    def __init__(self, manager: TaskEngine, record: TaskRecord) -> None:
        self.manager = manager
        self.task_id = record.task_id
        self.owner = record.owner
        self.era = record.era
        self.method = record.method
        self._waiting = 0

    @property
    def related_meta(self) -> dict[str, Any]:
        """The `_meta` entry tying a message to this task."""
        return related_task_meta(self.task_id)

    async def record(self) -> TaskRecord | None:
        """The task as stored now (None once expired)."""
        return await self.manager.store.get(self.task_id)

    async def set_status_message(self, message: str | None) -> None:
        """Change the task's `statusMessage` (ignored once terminal)."""
        await self.manager.touch(self.task_id, status_message=message)

    @asynccontextmanager
    async def awaiting_input(self) -> AsyncGenerator[None]:
        """`input_required` while the block runs (nested and concurrent
        blocks count: the task is back to `working` when the last ends)."""
        self._waiting += 1
        if self._waiting == 1:
            await self.manager.touch(self.task_id, status="input_required")
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0:
                await self.manager.touch(self.task_id, status="working")

    async def ask(self, questions: Mapping[str, tuple[str, Any]]) -> dict[str, Any]:
        """Park `questions` (key -> (method, params as builtins)) on the
        record, `input_required`, until `TaskManager.answer` has delivered
        an answer to each; the answers by key (builtins)."""
        return await self.manager.park(self.task_id, questions)

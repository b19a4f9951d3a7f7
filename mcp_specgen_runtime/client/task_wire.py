"""Reading the task answers a `Client` gets, as builtins: what a
task-augmented call created, a `tasks/list` page, each tool's 2025-11-25
`execution.taskSupport`, and whether a capability is declared."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, Literal

from msgspec import UNSET, UnsetType

from mcp_specgen_runtime.errors import ProtocolError

from .tasks import TaskPage, TaskState

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["RawPage", "created", "declared", "objects", "task_page", "task_supports"]


def objects(value: object) -> list[dict[str, Any]]:
    """The JSON objects of a JSON array (nothing when `value` is no array)."""
    if not isinstance(value, list):
        return []
    items = typing.cast("Sequence[object]", value)
    return [typing.cast("dict[str, Any]", i) for i in items if isinstance(i, dict)]


def declared(capabilities: Mapping[str, Any], *path: str) -> bool:
    """Whether the nested capability at `path` is declared (an object)."""
    found: Any = capabilities
    for key in path:
        if not isinstance(found, dict):
            return False
        found = typing.cast("dict[str, Any]", found).get(key)
    return isinstance(found, dict)


def created(
    era: Literal["legacy", "modern"] | None, body: Mapping[str, Any]
) -> tuple[TaskState, bool]:
    """What a task-augmented `tools/call` answered: the task, and whether
    the server answered at once instead (2026; the state then holds the
    result).

    Raises:
        ProtocolError: a 2025 answer that is no `CreateTaskResult`, or a
            task without id or with an unknown status.
    """
    if era == "legacy":
        task: Any = body.get("task")
        if not isinstance(task, dict):
            raise ProtocolError(
                "a task-augmented tools/call answered no CreateTaskResult"
            )
        return TaskState.from_wire(typing.cast("dict[str, Any]", task)), False
    if body.get("resultType") == "task":
        return TaskState.from_wire(body), False
    return TaskState(task_id="", status="completed", result=dict(body)), True


def task_page(body: Mapping[str, Any]) -> TaskPage:
    """A `tasks/list` result.

    Raises:
        ProtocolError: no list of tasks, or a task that is none.
    """
    if not isinstance(body.get("tasks"), list):
        raise ProtocolError("tasks/list answered no list of tasks")
    next_cursor: Any = body.get("nextCursor")
    return TaskPage(
        [TaskState.from_wire(t) for t in objects(body.get("tasks"))],
        next_cursor if isinstance(next_cursor, str) and next_cursor else None,
    )


def task_supports(body: Mapping[str, Any]) -> dict[str, str]:
    """Each tool of a `tools/list` page and its 2025-11-25
    `execution.taskSupport` ("forbidden" when absent)."""
    found: dict[str, str] = {}
    for entry in objects(body.get("tools")):
        execution = objects([entry.get("execution")])
        support = execution[0].get("taskSupport") if execution else None
        found[str(entry.get("name"))] = (
            support if isinstance(support, str) else "forbidden"
        )
    return found


class RawPage:
    """A page as builtins, for `Client._pages`."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    @property
    def next_cursor(self) -> str | UnsetType:
        """The page's `nextCursor` (UNSET when none)."""
        cursor: Any = self.body.get("nextCursor")
        return cursor if isinstance(cursor, str) else UNSET

    @property
    def ttl_ms(self) -> int:
        """Legacy pages are not cached by their own TTL."""
        return 0

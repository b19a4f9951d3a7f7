"""The `_meta` key tying messages to a task (both eras)."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["META_RELATED_TASK", "related_task_meta"]

META_RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
"""The `_meta` key naming the task a request, result or notification
belongs to: `{"taskId": ...}`."""


def related_task_meta(task_id: str) -> dict[str, Any]:
    """`{META_RELATED_TASK: {"taskId": task_id}}`."""
    return {META_RELATED_TASK: {"taskId": task_id}}

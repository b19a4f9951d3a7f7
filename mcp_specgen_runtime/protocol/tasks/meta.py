"""What both task wires write the same way: the `_meta` key tying messages to
a task, and timestamps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

__all__ = ["META_RELATED_TASK", "iso_time", "related_task_meta"]

META_RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
"""The `_meta` key naming the task a request, result or notification
belongs to: `{"taskId": ...}`."""


def related_task_meta(task_id: str) -> dict[str, Any]:
    """`{META_RELATED_TASK: {"taskId": task_id}}`."""
    return {META_RELATED_TASK: {"taskId": task_id}}


def iso_time(seconds: float) -> str:
    """Unix seconds as an ISO 8601 UTC timestamp (milliseconds, `Z`)."""
    stamp = datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")

"""Tasks: long-running requests a requestor polls, for every era.

`TaskManager` (`manager.py`) is the engine both wire designs share: it runs
the work, keeps records in a `stores.tasks.TaskStore`, binds them to their
owner (`owner.py`), rate-limits (`limits.py`) and expires them. Inside a
task, `request_client` finds the task's `RunningTask` (`handle.py`) on the
`ClientExchange` and marks the task `input_required` while it waits.
`wire2025.py` is the 2025-11-25 design (`params.task`, `tasks/get`,
`tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`).
"""

from .ids import new_task_id
from .limits import RATE_LIMITED, RateLimiter
from .manager import StatusListener, TaskManager, TaskRun, task_not_found
from .meta import META_RELATED_TASK, related_task_meta
from .owner import owner_of, principal_owner
from .running import RunningTask

__all__ = [
    "META_RELATED_TASK",
    "RATE_LIMITED",
    "RateLimiter",
    "RunningTask",
    "StatusListener",
    "TaskManager",
    "TaskRun",
    "new_task_id",
    "owner_of",
    "principal_owner",
    "related_task_meta",
    "task_not_found",
]

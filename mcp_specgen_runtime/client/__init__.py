"""The high-level client: `Client`, one object for any server (a command, a
URL, an App in this process), any transport and any revision; `ClientGroup`,
several servers behind one object; `TaskHandle`, a task it started (both
eras), and `TaskHost`, the tasks it runs for a 2025-11-25 server. Stands on
protocol (ClientSession), stores (tasks) and transports (stdio, memory, HTTP).
"""

from .callbacks import (
    ElicitationCallback,
    LogCallback,
    ProgressCallback,
    ResourceUpdatedCallback,
    RootsOption,
    SamplingCallback,
)
from .client import VERSION_CACHE, Client, Negotiated
from .group import ClientGroup, GroupError, GroupMember, RoutingError
from .targets import HasSession, Target
from .task_host import TaskHost
from .tasks import (
    TaskCancelledError,
    TaskHandle,
    TaskPage,
    TaskState,
    TaskStatusCallback,
    TaskSupportError,
)

__all__ = [
    "VERSION_CACHE",
    "Client",
    "ClientGroup",
    "ElicitationCallback",
    "GroupError",
    "GroupMember",
    "HasSession",
    "LogCallback",
    "Negotiated",
    "ProgressCallback",
    "ResourceUpdatedCallback",
    "RootsOption",
    "RoutingError",
    "SamplingCallback",
    "Target",
    "TaskCancelledError",
    "TaskHandle",
    "TaskHost",
    "TaskPage",
    "TaskState",
    "TaskStatusCallback",
    "TaskSupportError",
]

"""The 2025-11-25 wire design of tasks, on a `TaskManager`.

A request whose params carry `task` (`{"ttl": ms}`), for a method the server
declares under `capabilities.tasks.requests`, runs in a task and is answered
at once with `CreateTaskResult`; the requestor then uses `tasks/get`,
`tasks/result` (blocks until terminal; the request's own result with the
related-task `_meta`, or its JSON-RPC error), `tasks/list` (paginated, the
caller's tasks only) and `tasks/cancel`, and hears
`notifications/tasks/status` on each status change.

Decisions worth knowing:

- A tool result with `isError: true` makes the task `failed` (the
  2025-11-25 text: "this includes cases where the tool call result has
  `isError` set to true"); `tasks/result` still returns that result.
- `tasks/result` of a task cancelled before it produced anything answers
  -32800 (the error this runtime ends a cancelled request with).
- `ttl` is always present in a task (`null`: unlimited), as the spec requires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from mcp_specgen_runtime.errors import ErrorCode, InvalidParamsError, RpcError

from .meta import META_RELATED_TASK, iso_time

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from mcp_specgen_runtime.stores.tasks import TaskRecord

    from .manager import TaskManager

__all__ = [
    "ERA",
    "REQUEST_CANCELLED",
    "TASK_METHODS",
    "TASK_STATUS",
    "serve_task_method",
    "task_capability",
    "task_json",
    "task_params",
    "tool_failed",
]

ERA = "2025-11-25"
TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
"""The methods of the 2025-11-25 design the session answers itself."""
TASK_STATUS = "notifications/tasks/status"
REQUEST_CANCELLED = -32800
"""`tasks/result` of a task cancelled without a result or an error."""


class _TaskId(msgspec.Struct):
    task_id: str = msgspec.field(name="taskId")


class _Cursor(msgspec.Struct):
    cursor: str | None = None


MAX_TTL = 2**53 - 1
"""The largest `ttl` read (JSON's safe integers); the manager caps it lower."""


class _TaskMetadata(msgspec.Struct):
    # The schema says integer, which JSON Schema lets be written 5.0.
    ttl: int | float | None = None

    @property
    def ttl_ms(self) -> int | None:
        """The requested TTL in whole milliseconds (None: the default)."""
        return None if self.ttl is None else int(self.ttl)

    def check(self) -> str | None:
        """What is wrong with the requested TTL, if anything."""
        ttl = self.ttl
        if ttl is None:
            return None
        if isinstance(ttl, float) and not ttl.is_integer():
            return f"task.ttl must be a whole number of milliseconds, got {ttl}"
        if not 0 <= ttl <= MAX_TTL:
            return f"task.ttl must be between 0 and {MAX_TTL} milliseconds, got {ttl}"
        return None


class _TaskProbe(msgspec.Struct):
    task: _TaskMetadata | None = None


_task_id = msgspec.json.Decoder(_TaskId)
_cursor = msgspec.json.Decoder(_Cursor)
_task_probe = msgspec.json.Decoder(_TaskProbe)


def task_params(method: str, params: bytes | None) -> _TaskMetadata | None:
    """The `task` member of a request's params (None when not augmented).

    Raises:
        InvalidParamsError: `task` is not a `TaskMetadata`, or its `ttl` is
            not a non-negative integer.
    """
    if not params or b'"task"' not in params:
        return None
    try:
        task = _task_probe.decode(params).task
    except msgspec.ValidationError as exc:
        raise InvalidParamsError(method, f"task: {exc}") from None
    except msgspec.DecodeError:
        return None  # the handler reports unreadable params
    wrong = None if task is None else task.check()
    if wrong is not None:
        raise InvalidParamsError(method, wrong)
    return task


def task_capability(methods: Collection[str]) -> dict[str, Any]:
    """`capabilities.tasks` for task-augmentable `methods` ("tools/call" ->
    `requests: {tools: {call: {}}}`)."""
    requests: dict[str, Any] = {}
    for method in sorted(methods):
        kind, _, action = method.partition("/")
        requests.setdefault(kind, {})[action] = {}
    return {"list": {}, "cancel": {}, "requests": requests}


def task_json(record: TaskRecord) -> dict[str, Any]:
    """The 2025-11-25 `Task` of a record."""
    task: dict[str, Any] = {"taskId": record.task_id, "status": record.status}
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    task["createdAt"] = iso_time(record.created_at)
    task["lastUpdatedAt"] = iso_time(record.last_updated_at)
    task["ttl"] = record.ttl_ms
    if record.poll_interval_ms is not None:
        task["pollInterval"] = record.poll_interval_ms
    return task


def tool_failed(result: Mapping[str, Any]) -> bool:
    """Whether a `tools/call` result fails its task (`isError: true`)."""
    return result.get("isError") is True


def _decode(
    decoder: msgspec.json.Decoder[Any], method: str, params: bytes | None
) -> Any:
    try:
        return decoder.decode(params or b"{}")
    except msgspec.DecodeError as exc:
        raise InvalidParamsError(method, str(exc)) from None


async def serve_task_method(
    manager: TaskManager, owner: str | None, method: str, params: bytes | None
) -> bytes:
    """Answer `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel`
    for `owner`; the encoded result.

    Raises:
        RpcError: -32602 (unknown task, bad cursor, cancel of a terminal
            task), the task's own error (`tasks/result`), or the manager's
            rate limit.
    """
    if method == "tasks/list":
        cursor = _decode(_cursor, method, params).cursor
        records, next_cursor = await manager.list(owner, cursor)
        page: dict[str, Any] = {"tasks": [task_json(r) for r in records]}
        if next_cursor is not None:
            page["nextCursor"] = next_cursor
        return msgspec.json.encode(page)
    task_id: str = _decode(_task_id, method, params).task_id
    if method == "tasks/get":
        return msgspec.json.encode(task_json(await manager.get(owner, task_id)))
    if method == "tasks/cancel":
        return msgspec.json.encode(task_json(await manager.cancel(owner, task_id)))
    record = await manager.wait(owner, task_id)
    return _final(record)


def _final(record: TaskRecord) -> bytes:
    """What the task's request would have returned, with related-task meta."""
    if record.result is not None:
        result = dict(record.result)
        meta = result.get("_meta")
        related = {META_RELATED_TASK: {"taskId": record.task_id}}
        result["_meta"] = {**meta, **related} if isinstance(meta, dict) else related
        return msgspec.json.encode(result)
    if record.error is not None:
        error = record.error
        raise RpcError(
            int(error.get("code", ErrorCode.INTERNAL_ERROR)),
            str(error.get("message", "")),
            error.get("data"),
        )
    raise RpcError(
        REQUEST_CANCELLED,
        f"Task {record.task_id} was cancelled before it produced a result",
        {"taskId": record.task_id, "status": record.status},
    )

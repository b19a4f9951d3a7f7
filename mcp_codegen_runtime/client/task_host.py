"""The client as a task receiver (2025-11-25): `TaskHost`.

A client declaring `tasks.requests.sampling.createMessage` (or
`elicitation.create`) may get those requests task-augmented (`params.task`):
it answers `CreateTaskResult` at once, runs its callback in the background,
and serves the server's `tasks/get`, `tasks/result` (which waits for the end),
`tasks/list` and `tasks/cancel` for them, sending `notifications/tasks/status`
when a task ends. Tasks are kept in a `TaskStore` (in memory by default).

The 2026 tasks extension has no client-hosted tasks (SEP-2663: every server
request must belong to a client request), so a 2026 session never declares
this.
"""

from __future__ import annotations

import secrets
import time
import typing
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mcp_codegen_runtime.errors import ErrorCode, InvalidParamsError, RpcError
from mcp_codegen_runtime.stores.tasks import MemoryTaskStore, TaskRecord

from .tasks import RELATED_TASK

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from anyio.abc import TaskGroup

    from mcp_codegen_runtime.jsonrpc.serving import Handler
    from mcp_codegen_runtime.stores.tasks import TaskStore

__all__ = [
    "DEFAULT_TTL_MS",
    "MAX_TTL_MS",
    "TASKABLE",
    "TaskHost",
    "host_capabilities",
]

TASKABLE = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}
"""The server→client requests a client may run as tasks, and where the
2025-11-25 `tasks.requests` capability names them."""
DEFAULT_TTL_MS = 300_000
"""How long a task is kept when the server asks for no TTL (5 minutes)."""
MAX_TTL_MS = 3_600_000
"""The longest TTL granted (an hour), whatever the server asks."""
POLL_INTERVAL_MS = 500
"""The polling interval suggested to the server."""
PAGE_SIZE = 50
"""Tasks per `tasks/list` page."""


def host_capabilities(methods: set[str]) -> dict[str, Any]:
    """The 2025-11-25 `tasks` client capability for hosting `methods`
    (some of `TASKABLE`), with `list` and `cancel`."""
    requests: dict[str, Any] = {}
    for method in sorted(methods & set(TASKABLE)):
        family, name = TASKABLE[method]
        requests.setdefault(family, {})[name] = {}
    return {"tasks": {"list": {}, "cancel": {}, "requests": requests}}


class TaskHost:
    """Wraps the client's handler: task-augmented requests of `methods` run
    as tasks; `tasks/*` requests are served from `store`.

    Args:
        inner: the handler that answers requests (the client's callbacks).
        methods: the requests accepted as tasks (some of `TASKABLE`).
        store: where tasks are kept (default: a `MemoryTaskStore`).
        clock: Unix seconds now.

    `start` must be called with a task group and a way to notify the server
    before any task can run.
    """

    def __init__(
        self,
        inner: Handler,
        methods: set[str],
        store: TaskStore | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.inner = inner
        self.methods = methods & set(TASKABLE)
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self._clock = clock
        self._group: TaskGroup | None = None
        self._notify: Callable[[str, Any], Awaitable[None]] | None = None
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._ended: dict[str, anyio.Event] = {}

    def start(
        self, group: TaskGroup, notify: Callable[[str, Any], Awaitable[None]]
    ) -> None:
        """Run tasks in `group`; send status notifications with `notify`."""
        self._group = group
        self._notify = notify

    async def __call__(self, method: str, params: bytes | None) -> bytes | None:
        """Serve one message from the server."""
        if method in self.methods:
            body = _decoded(method, params)
            task = body.get("task")
            if task is not None:
                return await self._create(method, body, task)
        if method == "tasks/get":
            record = await self._record(method, params)
            return _encoded(_task_of(record))
        if method == "tasks/result":
            return await self._result(await self._record(method, params))
        if method == "tasks/list":
            return await self._list(_decoded(method, params))
        if method == "tasks/cancel":
            return await self._cancel(await self._record(method, params))
        return await self.inner(method, params)

    async def _create(self, method: str, body: dict[str, Any], task: Any) -> bytes:
        if self._group is None:
            raise RpcError(ErrorCode.INTERNAL_ERROR, "the client runs no tasks yet")
        if not isinstance(task, dict):
            raise InvalidParamsError(method, "task must be an object")
        asked: Any = typing.cast("dict[str, Any]", task).get("ttl")
        if asked is not None and (
            isinstance(asked, bool) or not isinstance(asked, int) or asked < 0
        ):
            raise InvalidParamsError(method, "task.ttl must be a whole number >= 0")
        ttl = min(DEFAULT_TTL_MS if asked is None else asked, MAX_TTL_MS)
        now = self._clock()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),
            owner=None,
            era="2025-11-25",
            method=method,
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl,
            poll_interval_ms=POLL_INTERVAL_MS,
        )
        await self.store.create(record)
        request = {k: v for k, v in body.items() if k != "task"}
        scope = self._scopes[record.task_id] = anyio.CancelScope()
        self._ended[record.task_id] = anyio.Event()
        self._group.start_soon(self._run, record.task_id, method, request, scope)
        return _encoded({"task": _task_of(record)})

    async def _run(
        self,
        task_id: str,
        method: str,
        request: dict[str, Any],
        scope: anyio.CancelScope,
    ) -> None:
        changes: dict[str, Any] = {}
        with scope:
            try:
                answer = await self.inner(method, msgspec.json.encode(request))
                result: Any = msgspec.json.decode(answer or b"{}")
                changes = {"status": "completed", "result": result}
            except RpcError as exc:
                error: dict[str, Any] = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    error["data"] = exc.data
                changes = {
                    "status": "failed",
                    "error": error,
                    "status_message": str(exc),
                }
            except Exception as exc:  # the task fails; the client goes on
                message = f"{type(exc).__name__}: {exc}"
                changes = {
                    "status": "failed",
                    "error": {"code": ErrorCode.INTERNAL_ERROR, "message": message},
                    "status_message": message,
                }
        if scope.cancelled_caught:
            return  # `tasks/cancel` settled the task already
        await self._end(task_id, changes)

    async def _end(self, task_id: str, changes: dict[str, Any]) -> None:
        record = await self.store.update(
            task_id, last_updated_at=self._clock(), **changes
        )
        self._scopes.pop(task_id, None)
        ended = self._ended.pop(task_id, None)
        if ended is not None:
            ended.set()
        if record is not None and self._notify is not None:
            try:
                await self._notify("notifications/tasks/status", _task_of(record))
            except Exception:  # the notification is optional
                pass

    async def _record(self, method: str, params: bytes | None) -> TaskRecord:
        task_id = _decoded(method, params).get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParamsError(method, "taskId must be a string")
        record = await self.store.get(task_id)
        if record is None:
            raise InvalidParamsError(method, f"unknown task {task_id!r}")
        return record

    async def _result(self, record: TaskRecord) -> bytes:
        ended = self._ended.get(record.task_id)
        if not record.terminal and ended is not None:
            await ended.wait()
        found = await self.store.get(record.task_id)
        if found is None:
            raise InvalidParamsError("tasks/result", f"task {record.task_id} expired")
        if found.status == "completed" and found.result is not None:
            meta: dict[str, Any] = {
                **(found.result.get("_meta") or {}),
                RELATED_TASK: {"taskId": found.task_id},
            }
            return _encoded({**found.result, "_meta": meta})
        if found.status == "failed" and found.error is not None:
            raise RpcError(
                found.error.get("code", ErrorCode.INTERNAL_ERROR),
                found.error.get("message", "the task failed"),
                found.error.get("data"),
            )
        raise RpcError(
            ErrorCode.INTERNAL_ERROR, f"task {found.task_id} was {found.status}"
        )

    async def _list(self, body: Mapping[str, Any]) -> bytes:
        cursor = body.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise InvalidParamsError("tasks/list", "cursor must be a string")
        found = await self.store.list(None, after=cursor, limit=PAGE_SIZE + 1)
        page: dict[str, Any] = {"tasks": [_task_of(r) for r in found[:PAGE_SIZE]]}
        if len(found) > PAGE_SIZE:
            page["nextCursor"] = found[PAGE_SIZE - 1].task_id
        return _encoded(page)

    async def _cancel(self, record: TaskRecord) -> bytes:
        if record.terminal:
            raise InvalidParamsError(
                "tasks/cancel",
                f"task {record.task_id} is already {record.status}",
            )
        scope = self._scopes.pop(record.task_id, None)
        if scope is not None:
            scope.cancel()
        await self._end(
            record.task_id,
            {"status": "cancelled", "status_message": "cancelled by the server"},
        )
        found = await self.store.get(record.task_id)
        return _encoded(_task_of(found if found is not None else record))


def _decoded(method: str, params: bytes | None) -> dict[str, Any]:
    try:
        body: Any = msgspec.json.decode(params or b"{}")
    except msgspec.DecodeError as exc:
        raise InvalidParamsError(method, str(exc)) from None
    if not isinstance(body, dict):
        raise InvalidParamsError(method, "params must be an object")
    return typing.cast("dict[str, Any]", body)


def _encoded(value: Any) -> bytes:
    return msgspec.json.encode(value)


def _iso(seconds: float) -> str:
    stamp = datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _task_of(record: TaskRecord) -> dict[str, Any]:
    """The 2025-11-25 `Task` object of `record`."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": _iso(record.created_at),
        "lastUpdatedAt": _iso(record.last_updated_at),
        "ttl": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        task["pollInterval"] = record.poll_interval_ms
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    return task

"""The client as a task receiver (2025-11-25): `TaskHost`.

A client declaring `tasks.requests.sampling.createMessage` (or
`elicitation.create`) may get those requests task-augmented (`params.task`):
it answers `CreateTaskResult` at once, runs its callback in the background,
and serves the server's `tasks/get`, `tasks/result` (which waits for the end),
`tasks/list` and `tasks/cancel` for them, sending `notifications/tasks/status`
when a task ends. Tasks are kept in a `TaskStore` (in memory by default).

The server is not trusted with the client's resources: at most `max_active`
tasks run at once, creations are rate-limited (a token bucket), a task still
running when its TTL passes is stopped, and expired tasks are purged every
`purge_interval_s`. Past a limit the request is refused with `RATE_LIMITED`
(-32029) and a message saying which.

The 2026 tasks extension has no client-hosted tasks (SEP-2663: every server
request must belong to a client request), so a 2026 session never declares
this.
"""

from __future__ import annotations

import logging
import secrets
import time
import typing
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mcp_specgen_runtime.errors import ErrorCode, InvalidParamsError, RpcError
from mcp_specgen_runtime.protocol.tasks import (
    RATE_LIMITED,
    RateLimiter,
    related_task_meta,
)
from mcp_specgen_runtime.protocol.tasks.wire2025 import task_json
from mcp_specgen_runtime.stores.tasks import MemoryTaskStore, TaskRecord

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from anyio.abc import TaskGroup

    from mcp_specgen_runtime.jsonrpc.serving import Handler
    from mcp_specgen_runtime.stores.tasks import TaskStore

__all__ = [
    "DEFAULT_BURST",
    "DEFAULT_MAX_ACTIVE",
    "DEFAULT_RATE",
    "DEFAULT_TTL_MS",
    "MAX_TTL_MS",
    "PURGE_INTERVAL_S",
    "TASKABLE",
    "TaskHost",
    "host_capabilities",
]

logger = logging.getLogger(__name__)

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
DEFAULT_MAX_ACTIVE = 16
"""Tasks the server may have running on the client at once."""
DEFAULT_RATE = 2.0
"""Task creations per second the server may sustain."""
DEFAULT_BURST = 32
"""Task creations the server may make in a burst."""
PURGE_INTERVAL_S = 60.0
"""Seconds between two purges of expired tasks."""
EXPIRED_MESSAGE = "the task's TTL passed before it finished"


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
        max_active: tasks running at once (None: no limit).
        rate, burst: task creations per second, and the burst allowed
            (rate None: no limit).
        purge_interval_s: how often expired tasks are deleted.
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
        max_active: int | None = DEFAULT_MAX_ACTIVE,
        rate: float | None = DEFAULT_RATE,
        burst: int = DEFAULT_BURST,
        purge_interval_s: float = PURGE_INTERVAL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.inner = inner
        self.methods = methods & set(TASKABLE)
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.max_active = max_active
        self.limiter = RateLimiter(rate, burst)
        self.purge_interval_s = purge_interval_s
        self._clock = clock
        self._group: TaskGroup | None = None
        self._notify: Callable[[str, Any], Awaitable[None]] | None = None
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._ended: dict[str, anyio.Event] = {}

    def start(
        self, group: TaskGroup, notify: Callable[[str, Any], Awaitable[None]]
    ) -> None:
        """Run tasks in `group`; send status notifications with `notify`;
        purge expired tasks in `group` until it ends."""
        self._group = group
        self._notify = notify
        group.start_soon(self._purge_loop)

    async def purge(self) -> int:
        """Delete the expired tasks now; how many were deleted."""
        return await self.store.purge_expired()

    async def _purge_loop(self) -> None:
        while True:
            await anyio.sleep(self.purge_interval_s)
            try:
                await self.purge()
            except Exception:  # a store's hiccup must not end the client
                logger.warning("purging expired hosted tasks failed", exc_info=True)

    async def __call__(self, method: str, params: bytes | None) -> bytes | None:
        """Serve one message from the server."""
        if method in self.methods:
            body = _decoded(method, params)
            task = body.get("task")
            if task is not None:
                return await self._create(method, body, task)
        if method == "tasks/get":
            record = await self._record(method, params)
            return _encoded(task_json(record))
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
        self._admit()
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
        # The slot is taken before the store is awaited, so concurrent
        # requests cannot all pass the cap; the deadline stops the work at
        # the TTL, when the record expires anyway.
        scope = anyio.CancelScope(deadline=anyio.current_time() + ttl / 1000)
        self._scopes[record.task_id] = scope
        try:
            await self.store.create(record)
        except BaseException:
            del self._scopes[record.task_id]
            raise
        request = {k: v for k, v in body.items() if k != "task"}
        self._ended[record.task_id] = anyio.Event()
        self._group.start_soon(self._run, record.task_id, method, request, scope)
        return _encoded({"task": task_json(record)})

    def _admit(self) -> None:
        """Refuse a task over the active cap or the rate limit."""
        if self.max_active is not None and len(self._scopes) >= self.max_active:
            raise RpcError(
                RATE_LIMITED,
                f"Too many active tasks: at most {self.max_active} may run at "
                "once on this client; wait for one to finish",
                {"maxActiveTasks": self.max_active},
            )
        self.limiter.take(None, "create")

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
            if self._scopes.get(task_id) is not scope:
                return  # `tasks/cancel` settled the task already
            changes = {
                "status": "failed",
                "error": {"code": ErrorCode.INTERNAL_ERROR, "message": EXPIRED_MESSAGE},
                "status_message": EXPIRED_MESSAGE,
            }
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
                await self._notify("notifications/tasks/status", task_json(record))
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
                **related_task_meta(found.task_id),
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
        page: dict[str, Any] = {"tasks": [task_json(r) for r in found[:PAGE_SIZE]]}
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
        return _encoded(task_json(found if found is not None else record))


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

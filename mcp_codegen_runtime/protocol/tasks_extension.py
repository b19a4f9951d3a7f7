"""The 2026-07-28 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`).

A server that negotiated the extension with a request may answer it with a
task (`resultType: "task"`, the flat `CreateTaskResult`) and run the work in
the background; the client polls `tasks/get` (a `DetailedTask`: the result,
the JSON-RPC error or the pending `inputRequests` inlined), answers input
with `tasks/update` and may `tasks/cancel`. There is no `tasks/list` and no
`tasks/result` (-32601: the session serves neither).

`TasksExtension` keeps the tasks in a `TaskStore` (in memory by default) and
runs each one as an asyncio task of the serving loop:

- `start(method, work)` creates the record (durable before it returns, so
  an immediate `tasks/get` finds it), runs `work()` in the background and
  returns the `CreateTaskResult` builtins;
- inside the work, `request_client` (`ctx.elicit`, `ctx.sample`) parks each
  question under a fresh key in the task's `inputRequests` (status
  `input_required`) until `tasks/update` answers it; questions asked at
  once are pending together, and a partial answer leaves the others;
- the work's result settles the task `completed` (a tool error is a result
  with `isError: true`), an `RpcError` settles it `failed` with the error
  inlined, `tasks/cancel` settles it `cancelled` and stops the work.
  Terminal states are sticky (the store enforces it), so a cancel racing
  completion leaves whichever came first.

Tasks are bound to the caller: another principal's id is unknown (-32602).
"""

from __future__ import annotations

import asyncio
import secrets
import time
import typing
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from mcp_codegen_runtime.codec.wire import convert, to_builtins
from mcp_codegen_runtime.errors import ErrorCode, InvalidParamsError, RpcError
from mcp_codegen_runtime.jsonrpc.serving import request_in_progress
from mcp_codegen_runtime.stores.tasks import MemoryTaskStore, TaskRecord, TaskStore
from mcp_codegen_types.extensions import io_modelcontextprotocol_tasks as wire

from .client_requests import ClientExchange, current_exchange, set_exchange
from .extensions import Extension, ExtensionResult

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["TASKS", "TasksExtension", "iso_time"]

TASKS = wire.EXTENSION_ID
"""The extension identifier."""
ERA = "2026-07-28"
DEFAULT_TTL_MS = 3_600_000
DEFAULT_POLL_INTERVAL_MS = 500


def iso_time(seconds: float) -> str:
    """Unix seconds as an ISO 8601 UTC timestamp (milliseconds, `Z`)."""
    stamp = datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _owner() -> str | None:
    """The key tasks are bound to: the caller's principal, by value."""
    context = request_in_progress()
    principal = None if context is None else context.principal
    if principal is None:
        return None
    try:
        return msgspec.json.encode(principal, order="sorted").decode()
    except TypeError:
        return repr(principal)


class _Running:
    """What the server holds of a task it is running: its asyncio task and
    the questions it waits on."""

    def __init__(self) -> None:
        self.work: asyncio.Task[Any] | None = None
        self.pending: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]] = {}
        self.asked = 0


class _TaskPeer:
    """The 'connection' a task's work asks the client through: each request
    is parked in the task's `inputRequests` until `tasks/update` answers."""

    def __init__(self, tasks: TasksExtension, task_id: str, running: _Running):
        self._tasks = tasks
        self._task_id = task_id
        self._running = running

    async def notify(self, method: str, params: Any) -> None:
        """Dropped: a task has no stream to send on (SEP-2663 has no progress
        or log messages for tasks)."""

    async def request(
        self,
        method: str,
        params: Any,
        result_type: Any,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the Peer signature
    ) -> Any:
        running = self._running
        key = f"{self._task_id[:8]}-{running.asked}"
        running.asked += 1
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = to_builtins(params)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        running.pending[key] = (request, answer)
        try:
            await self._tasks.publish_input(self._task_id, running)
            value = await answer
        finally:
            running.pending.pop(key, None)
        try:
            return convert(value, result_type)
        except msgspec.ValidationError as exc:
            raise InvalidParamsError(
                method, f"inputResponses[{key!r}] does not fit {method}: {exc}"
            ) from None


class TasksExtension:
    """The tasks extension of a server; see the module docstring.

    Args:
        store: where tasks are kept (default: a `MemoryTaskStore`).
        ttl_ms: how long a task is kept after creation (None: forever).
        poll_interval_ms: the polling interval suggested to clients.
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int | None = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
    ) -> None:
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self._running: dict[str, _Running] = {}

    def extension(self) -> Extension:
        """The registration a `ServerSession` serves (`extensions=[...]`)."""
        return Extension(
            TASKS,
            table=wire.METHODS,
            handlers={
                wire.METHOD_TASKS_GET: self.get,
                wire.METHOD_TASKS_UPDATE: self.update,
                wire.METHOD_TASKS_CANCEL: self.cancel,
            },
        )

    # -- creating and running --

    async def create(self, method: str) -> TaskRecord:
        """A new `working` task of the caller, durable when this returns."""
        now = time.time()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),
            owner=_owner(),
            era=ERA,
            method=method,
            created_at=now,
            last_updated_at=now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
        )
        await self.store.create(record)
        self._running[record.task_id] = _Running()
        return record

    def enter(self, record: TaskRecord) -> None:
        """Make the calling asyncio task (a copy of the creating request's
        context) the task's body: its questions to the client park in the
        task, asked with the capabilities the creating request declared.

        Raises:
            RuntimeError: not within a request served by a `ServerSession`.
        """
        running = self._running.setdefault(record.task_id, _Running())
        creator = current_exchange()
        peer = _TaskPeer(self, record.task_id, running)
        set_exchange(ClientExchange(creator.package, creator.client_capabilities, peer))

    async def run(self, task_id: str, work: Callable[[], Awaitable[Any]]) -> None:
        """Run `work` as the task's body and settle the task with its outcome."""
        try:
            value = await work()
        except BaseException as exc:
            await self.settle_outcome(task_id, exc)
            if not isinstance(exc, Exception):
                raise
        else:
            await self.complete(task_id, value)

    async def settle_outcome(self, task_id: str, exc: BaseException) -> None:
        """Settle the task after its body raised `exc`: `failed` with an
        `RpcError` as is, any other error as -32603; `cancelled` when the
        body was cancelled."""
        if isinstance(exc, asyncio.CancelledError):
            await self._settle(task_id, status="cancelled")
        elif isinstance(exc, RpcError):
            await self.fail(task_id, exc)
        else:
            await self.fail(task_id, RpcError(ErrorCode.INTERNAL_ERROR, str(exc)))

    def adopt(self, task_id: str, work: asyncio.Task[Any]) -> None:
        """Make `work` the task's running body (`tasks/cancel` cancels it)."""
        self._running.setdefault(task_id, _Running()).work = work
        work.add_done_callback(lambda _: self._running.pop(task_id, None))

    async def start(
        self, method: str, work: Callable[[], Awaitable[Any]]
    ) -> dict[str, Any]:
        """Create a task, run `work` in the background as its body, and return
        the `CreateTaskResult` (builtins)."""
        record = await self.create(method)

        async def body() -> None:
            self.enter(record)
            await self.run(record.task_id, work)

        self.adopt(record.task_id, asyncio.get_running_loop().create_task(body()))
        return self.created(record)

    def created(self, record: TaskRecord) -> dict[str, Any]:
        """The `CreateTaskResult` of a new task (builtins)."""
        return {"resultType": "task", **self._task(record)}

    def answer_with_task(self, record: TaskRecord) -> ExtensionResult:
        """The signal that answers the current request with the task."""
        return ExtensionResult(TASKS, self.created(record))

    async def complete(self, task_id: str, result: Any) -> None:
        """Settle the task `completed` with the request's result."""
        await self._settle(task_id, status="completed", result=to_builtins(result))

    async def fail(self, task_id: str, error: RpcError) -> None:
        """Settle the task `failed` with a JSON-RPC error."""
        body: dict[str, Any] = {"code": int(error.code), "message": error.message}
        if error.data is not None:
            body["data"] = to_builtins(error.data)
        await self._settle(task_id, status="failed", error=body)

    async def _settle(self, task_id: str, **changes: Any) -> None:
        await self.store.update(
            task_id, input_requests=None, last_updated_at=time.time(), **changes
        )

    async def publish_input(self, task_id: str, running: _Running) -> None:
        """Write the questions pending now to the task (its status follows)."""
        pending = {key: request for key, (request, _) in running.pending.items()}
        await self.store.update(
            task_id,
            status="input_required" if pending else "working",
            input_requests=pending or None,
            last_updated_at=time.time(),
        )

    # -- the extension's methods --

    async def _record(self, task_id: str) -> TaskRecord:
        record = await self.store.get(task_id)
        if record is None or record.era != ERA or record.owner != _owner():
            raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown task: {task_id}")
        return record

    async def get(self, params: wire.GetTaskRequestParams) -> dict[str, Any]:
        """`tasks/get`: the task now, its payload inlined."""
        return self.detailed(await self._record(params.task_id))

    async def update(self, params: wire.UpdateTaskRequestParams) -> dict[str, Any]:
        """`tasks/update`: deliver the answers to pending questions (others
        are ignored); an empty ack."""
        record = await self._record(params.task_id)
        running = self._running.get(record.task_id)
        if running is None or record.terminal:
            return {}
        answered = False
        for key, value in params.input_responses.items():
            entry = running.pending.pop(key, None)
            if entry is not None and not entry[1].done():
                entry[1].set_result(value)
                answered = True
        if answered:
            await self.publish_input(record.task_id, running)
        return {}

    async def cancel(self, params: wire.CancelTaskRequestParams) -> dict[str, Any]:
        """`tasks/cancel`: settle an active task `cancelled` and stop its work;
        an empty ack (also for a task already terminal)."""
        record = await self._record(params.task_id)
        if record.terminal:
            return {}
        await self._settle(record.task_id, status="cancelled")
        running = self._running.get(record.task_id)
        if running is not None and running.work is not None:
            running.work.cancel()
        return {}

    # -- shapes --

    def _task(self, record: TaskRecord) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": iso_time(record.created_at),
            "lastUpdatedAt": iso_time(record.last_updated_at),
            "ttlMs": record.ttl_ms,
        }
        if record.status_message is not None:
            task["statusMessage"] = record.status_message
        if record.poll_interval_ms is not None:
            task["pollIntervalMs"] = record.poll_interval_ms
        return task

    def detailed(self, record: TaskRecord) -> dict[str, Any]:
        """The `DetailedTask` of a record (builtins)."""
        task = self._task(record)
        if record.status == "completed" and record.result is not None:
            result = dict(record.result)
            meta = result.get("_meta")
            if isinstance(meta, dict):
                # The task id is at the root already (SEP-2663).
                kept = {
                    k: v
                    for k, v in typing.cast("dict[str, Any]", meta).items()
                    if k != "io.modelcontextprotocol/related-task"
                }
                if kept:
                    result["_meta"] = kept
                else:
                    del result["_meta"]
            task["result"] = result
        elif record.status == "failed" and record.error is not None:
            task["error"] = record.error
        elif record.status == "input_required":
            task["inputRequests"] = record.input_requests or {}
        return task

"""The 2026-07-28 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`),
a wire on the task engine (`tasks.TaskManager`).

A request that negotiated the extension (its `_meta` client capabilities
name it) for a method the server runs as tasks is answered with a task,
flat (`resultType: "task"`, `taskId`, `status`, `createdAt`,
`lastUpdatedAt`, `ttlMs`, `pollIntervalMs`), stored before the answer so
that an immediate `tasks/get` finds it; the handler runs in the background.
The requestor then uses:

- `tasks/get`: the `DetailedTask`, with the request's result inlined
  (`completed`; a tool error is a result with `isError: true`), its JSON-RPC
  error (`failed`), or the questions it waits on (`input_required`,
  `inputRequests`); never `requestState` nor the related-task `_meta`;
- `tasks/update`: answers by key (keys not pending are ignored; a partial
  answer leaves the others pending); an empty ack;
- `tasks/cancel`: an empty ack; an active task ends `cancelled` and its work
  stops; a terminal one stays as it is.

An unknown, expired or another caller's id is -32602. `tasks/list` and
`tasks/result` do not exist in this design (-32601). Inside the task,
`request_client` (`ctx.elicit`, `ctx.sample`) parks its questions on the task
(the engine's in-task hook) instead of an `InputRequiredResult` round.

Without the extension, a request that may be a task runs as usual, and one
that requires a task is -32021 naming the extension. Tasks are bound to the
caller's principal; anonymous callers' tasks are bearer handles (the 2026
era has no session to bind them to), guarded by the ids' 192 random bits.

Explicit start (`task_start`): the handler runs as an ordinary request
(its questions are `InputRequiredResult` rounds) until it calls
`start_task()`; the request is then answered with the task and the rest of
the handler is the task's body (SEP-2663: resolve the MRTR exchanges
synchronously, then create the task).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import typing
from typing import TYPE_CHECKING, Any

import msgspec

from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.jsonrpc.serving import (
    current_request,
    enter_request,
    leave_request,
    request_in_progress,
)
from mcp_specgen_types.extensions import io_modelcontextprotocol_tasks as wire

from ..client_requests import (
    check_answers,
    current_exchange,
    reset_exchange,
    set_exchange,
)
from ..extensions import Extension
from .meta import META_RELATED_TASK, iso_time
from .owner import principal_owner

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp_specgen_runtime.stores.tasks import TaskRecord

    from .manager import TaskManager
    from .running import RunningTask

__all__ = ["ERA", "TASKS", "TasksExtension", "iso_time", "start_task"]

TASKS = wire.EXTENSION_ID
"""The extension identifier."""
ERA = "2026-07-28"
"""The era its tasks are stored under."""
_result_decoder = msgspec.json.Decoder(dict[str, Any])
_starter: contextvars.ContextVar[Callable[[], Awaitable[None]] | None] = (
    contextvars.ContextVar("mcp_specgen_runtime.protocol.tasks.wire2026.starter")
)


def caller() -> str | None:
    """The owner of the 2026 request being served: its principal (None:
    anonymous)."""
    context = request_in_progress()
    return principal_owner(None if context is None else context.principal)


async def start_task() -> None:
    """From a handler served with explicit task start: answer the request
    with a task now and go on as the task's body. Nothing elsewhere."""
    starter = _starter.get(None)
    if starter is not None:
        _starter.set(None)
        await starter()


class TasksExtension:
    """The tasks extension of a server on `manager`; see the module docstring.

    The session builds one when it runs tasks (`ServerSession(tasks=...)`)
    and serves `extension()`.
    """

    def __init__(self, manager: TaskManager) -> None:
        self.manager = manager

    def extension(self) -> Extension:
        """The registration a `ServerSession` serves."""
        return Extension(
            TASKS,
            table=wire.METHODS,
            handlers={
                wire.METHOD_TASKS_GET: self.get,
                wire.METHOD_TASKS_UPDATE: self.update,
                wire.METHOD_TASKS_CANCEL: self.cancel,
            },
        )

    # -- the extension's methods --

    async def get(self, params: wire.GetTaskRequestParams) -> dict[str, Any]:
        """`tasks/get`: the task now, its payload inlined."""
        return detailed(await self.manager.get(caller(), params.task_id))

    async def update(self, params: wire.UpdateTaskRequestParams) -> dict[str, Any]:
        """`tasks/update`: deliver answers to pending questions; an empty ack."""
        owner, responses = caller(), params.input_responses
        record = await self.manager.store.get(params.task_id)
        if record is not None and record.owner == owner:
            # Refused here, not later as a failed task (SEP-2663).
            check_answers(
                current_exchange().package,
                wire.METHOD_TASKS_UPDATE,
                record.input_requests,
                responses,
            )
        await self.manager.answer(owner, params.task_id, responses)
        return {}

    async def cancel(self, params: wire.CancelTaskRequestParams) -> dict[str, Any]:
        """`tasks/cancel`: an empty ack; an active task ends `cancelled`."""
        owner = caller()
        record = await self.manager.get(owner, params.task_id)  # -32602 if unknown
        if not record.terminal:
            try:
                await self.manager.cancel(owner, params.task_id)
            except RpcError:
                # It became terminal meanwhile: the ack is the same (SEP-2663).
                await self.manager.get(owner, params.task_id)
        return {}

    # -- answering a request with a task --

    async def serve(
        self,
        method: str,
        start: str,
        dispatch: Callable[[], Awaitable[bytes | None]],
    ) -> bytes | None:
        """Serve a request that negotiated the extension as a task: at once
        (`start` "immediate"), or when `dispatch` calls `start_task()`
        ("explicit"; until then it is an ordinary request, whose result or
        error this returns or raises). The encoded `CreateTaskResult`."""
        if start == "explicit":
            return await self._explicit(method, dispatch)
        exchange = current_exchange()
        context = current_request()

        async def run(handle: RunningTask) -> dict[str, Any]:
            own = dataclasses.replace(exchange, task=handle, answers={}, asked=0)
            entered = enter_request(context.derive())
            token = set_exchange(own)
            try:
                return _result_decoder.decode(await dispatch() or b"{}")
            finally:
                reset_exchange(token)
                leave_request(entered)

        record = await self.manager.start(caller(), ERA, method, run)
        return msgspec.json.encode(created(record))

    async def _explicit(
        self, method: str, dispatch: Callable[[], Awaitable[bytes | None]]
    ) -> bytes | None:
        loop = asyncio.get_running_loop()
        handed_off: asyncio.Future[TaskRecord] = loop.create_future()
        outcome: asyncio.Future[dict[str, Any]] = loop.create_future()
        owner = caller()
        runner: asyncio.Task[bytes | None]

        async def run(handle: RunningTask) -> dict[str, Any]:
            handles.set_result(handle)
            try:
                return await outcome
            except asyncio.CancelledError:
                runner.cancel()  # tasks/cancel (or shutdown) stops the body
                raise

        handles: asyncio.Future[RunningTask] = loop.create_future()

        async def starter() -> None:
            record = await self.manager.start(owner, ERA, method, run)
            handle = await handles
            own = dataclasses.replace(
                current_exchange(), task=handle, answers={}, asked=0
            )
            set_exchange(own)  # in the body's own context: its later questions park
            handed_off.set_result(record)

        async def body() -> bytes | None:
            _starter.set(starter)
            try:
                result = await dispatch()
            except BaseException as exc:
                if not handed_off.done():
                    raise
                if isinstance(exc, asyncio.CancelledError):
                    outcome.cancel()
                else:
                    outcome.set_exception(exc)
                return None
            if handed_off.done():
                outcome.set_result(_result_decoder.decode(result or b"{}"))
            return result

        runner = loop.create_task(body())
        try:
            waited: set[asyncio.Future[Any]] = {runner, handed_off}
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if not handed_off.done():
                runner.cancel()  # cancelled before it became a task
            raise
        if handed_off.done():
            return msgspec.json.encode(created(handed_off.result()))
        return runner.result()


def _task(record: TaskRecord) -> dict[str, Any]:
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


def created(record: TaskRecord) -> dict[str, Any]:
    """The `CreateTaskResult` of a new task (builtins)."""
    return {"resultType": "task", **_task(record)}


def detailed(record: TaskRecord) -> dict[str, Any]:
    """The `DetailedTask` of a record (builtins)."""
    task = _task(record)
    if record.status == "completed" and record.result is not None:
        result = dict(record.result)
        meta = result.get("_meta")
        if isinstance(meta, dict):
            # The task id is at the root already (SEP-2663).
            entries = typing.cast("dict[str, Any]", meta)
            kept = {k: v for k, v in entries.items() if k != META_RELATED_TASK}
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

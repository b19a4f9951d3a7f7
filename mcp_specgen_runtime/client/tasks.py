"""Tasks seen by the client that started them: `TaskState`, `TaskHandle`.

One API for both wire designs:

- 2025-11-25 (core tasks): a `tools/call` carrying `task: {ttl}` answers
  `CreateTaskResult` (`{"task": Task}`); `tasks/get` polls, `tasks/result`
  blocks on the server until the task ends and answers the tool's result or
  its JSON-RPC error (the server asks the client for input, elicitation or
  sampling, while that request is open); `tasks/cancel` answers the task;
  `notifications/tasks/status` may report changes.
- 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a
  `tools/call` declaring the extension in its per-request client capabilities
  may be answered with a flat task (`resultType: "task"`); `tasks/get`
  answers the task with its `result`, `error` or pending `inputRequests`
  inline; input goes back with `tasks/update`; `tasks/cancel` is a bare
  acknowledgment. There is no `tasks/result` and no `tasks/list`.

A handle polls (or waits) within a time limit, always: `wait`, `result` and
every request take `timeout` (default: the `Client`'s); None means no limit.
"""

from __future__ import annotations

import typing
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from msgspec import UNSET, UnsetType

from mcp_specgen_runtime.codec.conversion import fit
from mcp_specgen_runtime.errors import (
    CapabilityError,
    McpError,
    ProtocolError,
    RequestTimeoutError,
    RpcError,
)
from mcp_specgen_runtime.protocol.adapt import RESULT_FILL
from mcp_specgen_runtime.protocol.meta import META_CLIENT_CAPABILITIES
from mcp_specgen_runtime.stores.tasks import ACTIVE_STATUSES, TERMINAL_STATUSES
from mcp_specgen_types import latest

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_specgen_runtime.protocol.client import ClientSession

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "TASKS_EXTENSION",
    "TaskCancelledError",
    "TaskHandle",
    "TaskPage",
    "TaskState",
    "TaskStatusCallback",
    "TaskSupportError",
    "TaskWatch",
    "extension_meta",
]

R = TypeVar("R")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The identifier of the 2026 tasks extension (SEP-2663)."""
DEFAULT_POLL_INTERVAL = 0.5
"""Seconds between two `tasks/get` when the server suggests no interval."""
MIN_POLL_INTERVAL = 0.01
"""The shortest pause between polls, whatever the server suggests (a server
suggesting 0 would otherwise be polled in a busy loop)."""

_STATUSES = ACTIVE_STATUSES | TERMINAL_STATUSES


def extension_meta() -> dict[str, Any]:
    """The `_meta` of a 2026 request declaring the tasks extension for that
    request only (merged into the session's envelope)."""
    return {META_CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}}}


class TaskSupportError(CapabilityError):
    """The tool does not run as a task (2025-11-25 `execution.taskSupport`
    absent or `forbidden`, or no such tool), so the call was not sent."""

    def __init__(self, tool: str, support: str | None) -> None:
        McpError.__init__(
            self,
            f"tool {tool!r} does not run as a task: "
            + (
                "the server lists no such tool"
                if support is None
                else f"its execution.taskSupport is {support!r}"
            ),
        )
        self.method = "tools/call"
        self.capability = "execution.taskSupport"
        self.tool = tool


class TaskCancelledError(McpError):
    """The task was cancelled, so it has no result.

    Attributes:
        state: the task as last seen.
    """

    def __init__(self, state: TaskState) -> None:
        note = f": {state.status_message}" if state.status_message else ""
        super().__init__(f"task {state.task_id} was cancelled{note}")
        self.state = state


@dataclass(frozen=True)
class TaskState:
    """A task as the server last showed it, in either era's wire.

    `result`, `error` and `input_requests` are builtins, inline in 2026
    (`tasks/get`); a 2025 task carries none of them (its result comes from
    `tasks/result`).
    """

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_wire(cls, body: Mapping[str, Any]) -> TaskState:
        """The task in a `Task` object of either era (2025 `ttl` and
        `pollInterval`, 2026 `ttlMs` and `pollIntervalMs`).

        Raises:
            ProtocolError: no `taskId`, or an unknown `status`.
        """
        task_id = body.get("taskId")
        status = body.get("status")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"a task without a taskId: {dict(body)!r}")
        if status not in _STATUSES:
            raise ProtocolError(f"task {task_id}: unknown status {status!r}")
        return cls(
            task_id=task_id,
            status=typing.cast("str", status),
            status_message=_text(body.get("statusMessage")),
            created_at=_text(body.get("createdAt")),
            last_updated_at=_text(body.get("lastUpdatedAt")),
            ttl_ms=_whole(body.get("ttlMs", body.get("ttl"))),
            poll_interval_ms=_whole(
                body.get("pollIntervalMs", body.get("pollInterval"))
            ),
            result=_object(body.get("result")),
            error=_object(body.get("error")),
            input_requests=_object(body.get("inputRequests")),
        )


@dataclass(frozen=True)
class TaskPage:
    """One page of `tasks/list` (2025-11-25)."""

    tasks: list[TaskState]
    next_cursor: str | None = None


TaskStatusCallback = Callable[[TaskState], Awaitable[None]]
"""Called with the task each time its status (or status message) changes."""


class TaskWatch:
    """The live handles of a client by task id, for status notifications.

    Handles are held weakly: one no one keeps is forgotten, since its task
    may never be seen to end (a 2026 server sends no status unasked).
    """

    def __init__(self) -> None:
        self.handles: dict[str, list[weakref.ref[TaskHandle]]] = {}

    def __len__(self) -> int:
        """How many handles are watched."""
        return sum(len(refs) for refs in self.handles.values())

    def add(self, handle: TaskHandle) -> None:
        """Hear of `handle`'s task until it ends, or the handle goes."""
        task_id = handle.task_id

        def gone(ref: weakref.ref[TaskHandle]) -> None:
            self._remove(task_id, ref)

        self.handles.setdefault(task_id, []).append(weakref.ref(handle, gone))

    def drop(self, handle: TaskHandle) -> None:
        """Stop hearing of `handle`'s task."""
        for ref in list(self.handles.get(handle.task_id, [])):
            if ref() is handle:
                self._remove(handle.task_id, ref)

    def _remove(self, task_id: str, ref: weakref.ref[TaskHandle]) -> None:
        refs = self.handles.get(task_id, [])
        if ref in refs:
            refs.remove(ref)
        if not refs:
            self.handles.pop(task_id, None)

    async def notified(self, body: Mapping[str, Any]) -> None:
        """A status notification: to the handles of its task (a notification
        that is no task is dropped)."""
        try:
            state = TaskState.from_wire(body)
        except ProtocolError:
            return
        for ref in list(self.handles.get(state.task_id, [])):
            handle = ref()
            if handle is not None:
                await handle.observe(state)


class TaskHandle:
    """A task started by the client: poll it, wait for it, fetch its result,
    cancel it. See the module docstring for what each era sends.

    Args:
        session: the client's session.
        state: the task as created (or as the server answered at once).
        timeout: the default seconds of each wait (None: no limit).
        on_status: called with the task at each change of its status.
        watch: where status notifications are routed to the handle.
        immediate: the server answered the call at once (2026): the handle
            is finished, `state.result` is the result.
        on_end: called once when the task is seen to end, the handle is
            detached or it is garbage-collected (the client drops the
            call's progress callback).
    """

    def __init__(
        self,
        session: ClientSession,
        state: TaskState,
        *,
        timeout: float | None,
        on_status: Callable[[TaskState], Awaitable[None]] | None = None,
        watch: TaskWatch | None = None,
        immediate: bool = False,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self._session = session
        self._release = None if on_end is None else weakref.finalize(self, on_end)
        self._state = state
        self._timeout = timeout
        self._callbacks: list[Callable[[TaskState], Awaitable[None]]] = (
            [] if on_status is None else [on_status]
        )
        self._watch = watch
        self._immediate = immediate
        self._modern = session.era == "modern"
        self._outcome: dict[str, Any] | RpcError | None = None
        self._answered: set[str] = set()
        if watch is not None and not state.terminal:
            watch.add(self)
        if state.terminal:
            self._ended()

    @property
    def task_id(self) -> str:
        """The task's id (`""` for a result the server gave at once)."""
        return self._state.task_id

    @property
    def state(self) -> TaskState:
        """The task as last seen (no request sent)."""
        return self._state

    @property
    def immediate(self) -> bool:
        """Whether the server answered at once instead of creating a task."""
        return self._immediate

    def on_status(self, callback: Callable[[TaskState], Awaitable[None]]) -> None:
        """Call `callback` with the task at each change of its status."""
        self._callbacks.append(callback)

    async def observe(self, state: TaskState) -> None:
        """Take `state` as the task's latest (from a poll or a notification);
        the callbacks hear of a change. A terminal state is never replaced
        by an active one (notifications may arrive late)."""
        previous = self._state
        if previous.terminal and not state.terminal:
            return
        self._state = state
        if state.terminal:
            self._ended()
        if (state.status, state.status_message) != (
            previous.status,
            previous.status_message,
        ):
            for callback in list(self._callbacks):
                await callback(state)

    def detach(self) -> None:
        """Stop routing status notifications and the call's progress to
        this handle (it still polls when used)."""
        self._ended()

    def _ended(self) -> None:
        if self._watch is not None:
            self._watch.drop(self)
        if self._release is not None:
            self._release()  # a finalizer runs once, whoever calls it first

    def _limit(self, timeout: float | UnsetType | None) -> float | None:
        return self._timeout if isinstance(timeout, UnsetType) else timeout

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"taskId": self.task_id}
        if self._modern:
            params["_meta"] = extension_meta()
        return params

    async def status(
        self, *, timeout: float | UnsetType | None = UNSET  # noqa: ASYNC109
    ) -> TaskState:
        """The task now (`tasks/get`); the callbacks hear of a change.

        Raises:
            RpcError: the server refused (an unknown task: -32602).
            RequestTimeoutError: no answer in time.
        """
        if self._immediate:
            return self._state
        body = await self._session.request_raw(
            "tasks/get", self._params(), timeout=self._limit(timeout)
        )
        state = TaskState.from_wire(body)
        if state.task_id != self.task_id:
            raise ProtocolError(
                f"tasks/get for {self.task_id} answered task {state.task_id}"
            )
        await self.observe(state)
        return self._state

    async def wait(
        self, *, timeout: float | UnsetType | None = UNSET  # noqa: ASYNC109
    ) -> TaskState:
        """Wait until the task ends; the task as it ended.

        2025-11-25: `tasks/result` (the server's input requests are answered
        by the client's callbacks meanwhile), `tasks/get` polled alongside
        when someone listens for statuses. 2026: `tasks/get` every
        `pollIntervalMs`, the task's `inputRequests` answered through the
        client's callbacks and `tasks/update`.

        Raises:
            RequestTimeoutError: the task did not end within `timeout`.
            RpcError: the server refused a request (an unknown task: -32602;
                2026 input the client cannot answer).
        """
        if self._immediate or (self._state.terminal and self._settled()):
            return self._state
        limit = self._limit(timeout)
        with anyio.move_on_after(limit if limit is not None else float("inf")):
            if self._modern:
                await self._poll(answer=True)
            else:
                await self._fetch_result()
            return self._state
        assert limit is not None
        method = "tasks/get" if self._modern else "tasks/result"
        raise RequestTimeoutError(f"{method} of task {self.task_id}", None, limit)

    def _settled(self) -> bool:
        """Whether the result (or error) of an ended task is in hand."""
        return self._modern or self._outcome is not None

    async def _poll(self, *, answer: bool) -> None:
        """`tasks/get` until the task ends (2026: answering its input)."""
        while True:
            state = await self.status(timeout=None)
            if state.terminal:
                return
            if answer and state.status == "input_required":
                await self._answer(state.input_requests or {})
            interval = (
                DEFAULT_POLL_INTERVAL
                if state.poll_interval_ms is None
                else state.poll_interval_ms / 1000
            )
            await anyio.sleep(max(interval, MIN_POLL_INTERVAL))

    async def _answer(self, requests: Mapping[str, Any]) -> None:
        """2026: answer the input requests not answered before, in one
        `tasks/update` (the server repeats pending keys until it sees it)."""
        responses: dict[str, Any] = {}
        for key, request in requests.items():
            if key in self._answered:
                continue
            if not isinstance(request, dict) or "method" not in request:
                raise ProtocolError(
                    f"task {self.task_id}: inputRequests[{key!r}] names no method"
                )
            asked = typing.cast("dict[str, Any]", request)
            responses[key] = await self._session.answer_input(
                asked["method"], asked.get("params")
            )
        if not responses:
            return
        params = {**self._params(), "inputResponses": responses}
        await self._session.request_raw("tasks/update", params, timeout=None)
        self._answered.update(responses)

    async def _fetch_result(self) -> None:
        """2025: `tasks/result`, with `tasks/get` polled alongside for the
        status callbacks; then the ended task."""
        async with anyio.create_task_group() as tasks:
            if self._callbacks:
                tasks.start_soon(self._poll_quietly)
            try:
                self._outcome = await self._session.request_raw(
                    "tasks/result", self._params(), timeout=None
                )
            except RpcError as exc:
                self._outcome = exc
            tasks.cancel_scope.cancel()
        if self._state.terminal:
            return
        try:
            await self.status(timeout=None)
        except RpcError:
            pass  # the task is gone already; its outcome says how it ended
        if not self._state.terminal:
            ended = "completed" if isinstance(self._outcome, dict) else "failed"
            await self.observe(_replace(self._state, status=ended))

    async def _poll_quietly(self) -> None:
        try:
            await self._poll(answer=False)
        except RpcError:
            pass  # tasks/result tells how the task ended

    async def result(
        self, *, timeout: float | UnsetType | None = UNSET  # noqa: ASYNC109
    ) -> latest.CallToolResult:
        """The tool's result once the task ends (a tool's own failure is a
        result with `is_error`), in the newest revision's types.

        Raises:
            RpcError: the task failed with this JSON-RPC error.
            TaskCancelledError: the task was cancelled.
            RequestTimeoutError: the task did not end within `timeout`.
        """
        return await self.result_as(latest.CallToolResult, timeout=timeout)

    async def result_as(
        self,
        result_type: type[R],
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> R:
        """`result` in `result_type`, e.g. `v2025_11_25.CallToolResult`;
        it raises as `result` does."""
        state = await self.wait(timeout=timeout)
        if state.status == "cancelled":
            raise TaskCancelledError(state)
        outcome = self._outcome if not self._modern else None
        if isinstance(outcome, RpcError):
            raise outcome
        if outcome is None:
            if state.status == "failed" or state.result is None:
                raise _task_error(state)
            outcome = state.result
        converted: R = fit(
            outcome,
            result_type,
            label=f"task {state.task_id} result",
            fill=RESULT_FILL,
        ).value
        return converted

    async def cancel(
        self, *, timeout: float | UnsetType | None = UNSET  # noqa: ASYNC109
    ) -> TaskState:
        """Cancel the task (`tasks/cancel`); the task afterwards (2026: as
        the next `tasks/get` shows it).

        Raises:
            RpcError: the server refused (2025: a task that already ended,
                -32602; an unknown task: -32602).
            RequestTimeoutError: no answer in time.
        """
        if self._immediate:
            return self._state
        limit = self._limit(timeout)
        body = await self._session.request_raw(
            "tasks/cancel", self._params(), timeout=limit
        )
        if self._modern:
            return await self.status(timeout=limit)
        await self.observe(TaskState.from_wire(body))
        return self._state


def _task_error(state: TaskState) -> RpcError:
    """The JSON-RPC error a failed 2026 task carries (a generic one if the
    server gave none)."""
    error = state.error or {}
    code = error.get("code")
    message = error.get("message")
    return RpcError(
        code if isinstance(code, int) else -32603,
        message if isinstance(message, str) else f"task {state.task_id} failed",
        error.get("data"),
    )


def _replace(state: TaskState, **changes: Any) -> TaskState:
    from dataclasses import replace

    return replace(state, **changes)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _whole(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _object(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    return typing.cast("dict[str, Any]", value)

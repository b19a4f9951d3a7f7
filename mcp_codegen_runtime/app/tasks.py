"""Tools that run as tasks: the choice between a task and a plain call.

`@app.tool(task_support="optional" | "required")` makes a tool a task tool.
Served to a 2026 request that negotiated `io.modelcontextprotocol/tasks`, a
call becomes a task (`resultType: "task"`) and the function runs in the
background (see `protocol.tasks_extension`). Without the extension,
`optional` runs as a plain call and `required` is -32021 naming the
extension. (Legacy revisions keep their own rules.)

`task_start="explicit"` lets the function talk to the client through
ordinary 2026 `InputRequiredResult` rounds first and become a task only when
it calls `await ctx.start_task()` (SEP-2663: resolve the MRTR exchanges
synchronously, then hand off)::

    @app.tool(task_support="required", task_start="explicit")
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("Which day?", schema)  # MRTR rounds
        await ctx.start_task()                           # the call answers a task
        return await slow_booking(answer)                # runs in the background

Until `start_task()` the call is an ordinary request; after it, the request
is answered with the task and the rest of the function is the task's body
(its own questions park in `inputRequests`). Where no task can be created
(a legacy call, or no extension on an `optional` tool) `start_task()` does
nothing and the call simply goes on.
"""

from __future__ import annotations

import asyncio
import contextvars
import typing
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_codegen_runtime.protocol.client_requests import current_exchange
from mcp_codegen_runtime.protocol.extensions import (
    ExtensionResult,
    missing_extension,
    negotiated,
)
from mcp_codegen_runtime.protocol.tasks_extension import TASKS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp_codegen_runtime.protocol.tasks_extension import TasksExtension

__all__ = ["TASK_STARTS", "TASK_SUPPORTS", "run_tool", "start_task"]

T = TypeVar("T")

TASK_SUPPORTS = ("forbidden", "optional", "required")
TASK_STARTS = ("immediate", "explicit")

_starter: contextvars.ContextVar[Callable[[], Awaitable[None]] | None] = (
    contextvars.ContextVar("mcp_codegen_runtime.app.tasks.starter", default=None)
)


async def start_task() -> None:
    """Turn the call being served into a task now (see the module
    docstring); nothing where it cannot be one."""
    starter = _starter.get()
    if starter is not None:
        _starter.set(None)
        await starter()


def wants_task(support: str | None) -> bool:
    """Whether a call of a tool with `support` becomes a task here; -32021
    for a `required` tool called without the extension (modern era)."""
    if support not in ("optional", "required"):
        return False
    try:
        modern = current_exchange().modern
    except RuntimeError:
        return False
    if not modern:
        return False
    if negotiated(TASKS):
        return True
    if support == "required":
        raise missing_extension(TASKS)
    return False


async def run_tool(
    tasks: TasksExtension,
    support: str | None,
    start: str,
    work: Callable[[], Awaitable[T]],
) -> T:
    """Run a tool call: plainly, or as a task answered at once (`immediate`)
    or when the function calls `start_task()` (`explicit`).

    Raises:
        ExtensionResult: the call is answered with its task.
        RpcError: -32021 for a `required` tool without the extension.
    """
    if not wants_task(support):
        return await work()
    if start == "immediate":
        raise ExtensionResult(TASKS, await tasks.start("tools/call", work))
    return await _run_explicit(tasks, work)


async def _run_explicit(tasks: TasksExtension, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` in its own asyncio task; answer the call with its result,
    or with a task as soon as it calls `start_task()`."""
    loop = asyncio.get_running_loop()
    handed_off: asyncio.Future[Any] = loop.create_future()

    async def starter() -> None:
        record = await tasks.create("tools/call")
        tasks.enter(record)
        handed_off.set_result(record)

    async def body() -> T | None:
        _starter.set(starter)
        try:
            value = await work()
        except BaseException as exc:
            if not handed_off.done():
                raise
            record = handed_off.result()
            await tasks.settle_outcome(record.task_id, exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return None
        if handed_off.done():
            await tasks.complete(handed_off.result().task_id, value)
        return value

    runner = loop.create_task(body())
    try:
        await asyncio.wait({runner, handed_off}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        if not handed_off.done():
            runner.cancel()  # the call was cancelled before it became a task
        raise
    if handed_off.done():
        record = handed_off.result()
        tasks.adopt(record.task_id, runner)
        raise tasks.answer_with_task(record)
    # Not handed off: the body ran to its end (or raised) as a plain call.
    return typing.cast("T", runner.result())

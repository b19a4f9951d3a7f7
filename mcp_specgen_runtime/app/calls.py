"""How an app calls the functions it is made of.

A plain `def` runs in a worker thread (anyio's `to_thread.run_sync`), so a slow
one does not stall the event loop and with it every other client; at most
`App(max_threads=...)` run at once (default 40), the others wait for a
thread. `run_in_thread=False` at registration keeps a quick function on the
loop, where it costs no thread hop. Coroutine functions always run on the
loop. Context variables (`current_request()`, the `Context`'s state) follow
the call into its thread; `Context.sync` reaches the loop from there.

Python cannot stop a thread: a cancelled call of a threaded function ends
when the function returns, and keeps its thread until then.

A function's `SystemExit` or `KeyboardInterrupt` is not an order to stop the
server: it becomes `FunctionExit`, an ordinary error of that one call (a tool
error for a tool, -32603 for a resource or prompt). Only a signal to the
process stops it.
"""

from __future__ import annotations

import inspect
import typing
from types import CoroutineType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["DEFAULT_MAX_THREADS", "FunctionExit", "call", "runs_in_thread"]

DEFAULT_MAX_THREADS = 40
"""Worker threads an app's plain functions may use at once (anyio's default)."""


class FunctionExit(Exception):
    """A function raised `SystemExit` or `KeyboardInterrupt` (its `__cause__`)."""


def runs_in_thread(func: Callable[..., Any], run_in_thread: bool) -> bool:
    """Whether calls of `func` go to a worker thread: a plain function's do,
    unless `run_in_thread` is False; a coroutine function's never."""
    dunder = type(func).__call__  # an object whose __call__ is a coroutine
    is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(dunder)
    return run_in_thread and not is_async


async def call(
    func: Callable[[], Any], limiter: anyio.CapacityLimiter | None = None
) -> Any:
    """`func()`, in a worker thread under `limiter` when one is given; an
    awaitable it returns is awaited on the loop.

    Raises:
        FunctionExit: the function raised `SystemExit` or `KeyboardInterrupt`.
    """
    try:
        if limiter is None:
            value = func()
        else:
            value = await anyio.to_thread.run_sync(func, limiter=limiter)
        # A coroutine first: one type check where `isawaitable` is a call.
        if type(value) is CoroutineType or inspect.isawaitable(value):
            awaited: Awaitable[Any] = typing.cast("Any", value)
            value = await awaited
    except (SystemExit, KeyboardInterrupt) as exc:
        raise FunctionExit(f"raised {exc!r}") from exc
    return value

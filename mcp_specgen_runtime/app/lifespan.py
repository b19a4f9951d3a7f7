"""The app's lifespan: what it opens before serving and closes after.

    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[State]:
        pool = await open_pool()
        try:
            yield State(pool=pool)
        finally:
            await pool.close()

    app = App("demo", lifespan=lifespan)

`App(lifespan=...)` takes a function of the app returning an async context
manager (an `@asynccontextmanager` generator). Its value is `ctx.lifespan`
(typed with `Context[State]`), or a parameter annotated
`Annotated[State, Lifespan]`.

It is entered once however many clients are served, and exited after the
last one: `serve_stdio` holds it while it serves (entered before the first
line is read), the HTTP server from the ASGI lifespan start-up to its
shutdown (one per process, whatever the number of sessions), an in-memory
`Client(app)` while it is connected; `async with app.running():` holds it
for code of your own. It is exited even when serving fails, and sees the
error. A lifespan failing to start stops the server before it serves
(`LifespanError`, its exception as the cause).

Enter and exit happen in the task holding it first and last; a lifespan
running a task group across its `yield` needs both to be one task, which
they are for each of the servers above.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable
    from contextlib import AbstractAsyncContextManager

__all__ = ["LifespanError", "LifespanRunner"]


class LifespanError(Exception):
    """The app's lifespan failed to start (its exception is the cause)."""


class LifespanRunner:
    """Enters an app's lifespan for its first holder, exits it after the
    last; see the module docstring."""

    def __init__(
        self,
        factory: Callable[[Any], AbstractAsyncContextManager[Any]] | None,
        app: Any,
        name: str = "app",
    ) -> None:
        self.factory = factory
        self._app = app
        self._name = name
        self._holders = 0
        self._manager: AbstractAsyncContextManager[Any] | None = None
        self._value: Any = None
        self._lock = anyio.Lock()

    @property
    def running(self) -> bool:
        """Whether the lifespan is entered."""
        return self._manager is not None

    @property
    def value(self) -> Any:
        """What the lifespan yielded.

        Raises:
            RuntimeError: the app has no lifespan, or it is not entered.
        """
        if self._manager is None:
            if self.factory is None:
                raise RuntimeError(
                    f"{self._name} has no lifespan: give App(lifespan=...) to "
                    "have ctx.lifespan"
                )
            raise RuntimeError(
                f"the lifespan of {self._name} is not running: it runs while "
                "the app serves (stdio, HTTP with the ASGI lifespan on, "
                "Client(app)) or inside `async with app.running()`"
            )
        return self._value

    async def enter(self) -> None:
        """Hold the lifespan, entering it when nobody held it.

        Raises:
            LifespanError: it failed to start (nothing is held then).
        """
        async with self._lock:
            if self.factory is not None and self._holders == 0:
                manager = self.factory(self._app)
                try:
                    self._value = await manager.__aenter__()
                except Exception as exc:
                    raise LifespanError(
                        f"the lifespan of {self._name} failed to start: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                self._manager = manager
            self._holders += 1

    async def exit(self, error: BaseException | None = None) -> None:
        """Let go of the lifespan, exiting it (with `error`, the reason
        serving ended, if any) when this was the last holder."""
        async with self._lock:
            if self._holders == 0:
                return
            self._holders -= 1
            manager = self._manager
            if self._holders or manager is None:
                return
            self._manager, self._value = None, None
            if error is None:
                await manager.__aexit__(None, None, None)
            else:
                await manager.__aexit__(type(error), error, error.__traceback__)

    @asynccontextmanager
    async def held(self) -> AsyncGenerator[None]:
        """Hold the lifespan for the block (see `enter` and `exit`)."""
        await self.enter()
        try:
            yield
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await self.exit(exc)
            raise
        with anyio.CancelScope(shield=True):
            await self.exit()

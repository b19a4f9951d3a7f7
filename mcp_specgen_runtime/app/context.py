"""`Context`: what a tool, resource or prompt function may ask of its request.

Declare a parameter annotated `Context` and the app passes one in (it is not
part of the tool's input schema). Every call works with clients of either
protocol era: logging follows the client's level, and elicitation, sampling
and roots are one call each (a request over the connection for a legacy
client, an `InputRequiredResult` round for a 2026 one; see
`client_requests`). `key=` names a question in the 2026 `inputRequests`, and
`ask_many` asks several in one round.

A plain `def` runs in a worker thread (see `calls.py`), where it cannot await:
`ctx.sync` offers the same calls, each run on the event loop (anyio's
`from_thread.run`) while the thread waits for its result::

    @app.tool()
    def crunch(n: int, ctx: Context) -> str:
        for i in range(n):
            ctx.sync.report_progress(i + 1, n)
        return "done"

The properties (`request_id`, `state`, ...) work in the thread as they are.

`ctx.lifespan` is what the app's lifespan yielded (see `lifespan.py`);
annotate `ctx: Context[State]` to have it typed. `ctx.http` is the HTTP
request that carried the call (`HttpInfo`), None over stdio.
"""

from __future__ import annotations

import typing
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio
import anyio.from_thread

from mcp_specgen_runtime.codec.wire import to_builtins
from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_runtime.protocol.client_requests import (
    client_capabilities,
    handler_state,
    log_to_client,
    request_client,
    request_client_many,
    require_client_capabilities,
    set_handler_state,
)

from .http_info import HttpInfo, current_http

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from typing_extensions import TypeVar as DefaultTypeVar

    from .lifespan import LifespanRunner

    # A bare `Context` means `Context[Any]` (typing_extensions is the
    # checker's; at run time a plain TypeVar does).
    L = DefaultTypeVar("L", default=Any)
else:
    L = TypeVar("L")

__all__ = ["Context", "SyncContext", "elicit_params", "sample_params"]

T = TypeVar("T")


class Context(Generic[L]):
    """The request being served, as a handler function sees it;
    `Context[State]` types `lifespan`."""

    def __init__(self, lifespan: LifespanRunner | None = None) -> None:
        self._lifespan = lifespan

    @property
    def lifespan(self) -> L:
        """What the app's lifespan yielded (see `lifespan.py`).

        Raises:
            RuntimeError: the app has no lifespan, or it is not running.
        """
        if self._lifespan is None:
            raise RuntimeError("this Context belongs to no app with a lifespan")
        value: L = self._lifespan.value
        return value

    @property
    def http(self) -> HttpInfo | None:
        """The HTTP request that carried the call (headers, client address,
        path, query...); None when it did not come over HTTP."""
        return current_http()

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of the request."""
        return current_request().request_id

    @property
    def principal(self) -> Any:
        """Who sent the request, as the transport authenticated it (with
        `auth=`, a `Principal`: subject, client, scopes, claims); None when
        it was not authenticated."""
        return current_request().principal

    @property
    def sync(self) -> SyncContext:
        """The waiting calls, blocking, for a plain function in a worker
        thread."""
        return SyncContext(self)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` (when the client asked for it)."""
        await current_request().report_progress(progress, total, message)

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send a log message at the client's level; whether it was sent."""
        return await log_to_client(level, data, logger)

    async def info(self, data: Any) -> bool:
        """`log("info", data)`."""
        return await self.log("info", data)

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (per connection or request)."""
        return dict(client_capabilities())

    def require_capabilities(self, *names: str) -> None:
        """Refuse the request (-32021, `data.requiredCapabilities`; HTTP 400)
        unless the client declared every capability named."""
        require_client_capabilities(*names)

    async def start_task(self) -> None:
        """Answer the call with a task now and go on as its body (a tool
        registered with `task_start="explicit"`, called by a 2026 client of
        the tasks extension). Nothing happens where the call cannot be a
        task: it simply goes on."""
        from mcp_specgen_runtime.protocol.tasks.wire2026 import start_task

        await start_task()

    @property
    def state(self) -> Any:
        """The handler's own state kept across 2026 rounds (None at first)."""
        return handler_state()

    @state.setter
    def state(self, value: Any) -> None:
        set_handler_state(value)

    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        *,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the user, through the client, for data of `requested_schema`;
        the `ElicitResult` (`action`, and `content` when accepted)."""
        return await _ask(
            "elicitation/create", elicit_params(message, requested_schema), key
        )

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        key: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion; the `CreateMessageResult`."""
        params = sample_params(messages, max_tokens, system_prompt, **options)
        return await _ask("sampling/createMessage", params, key)

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (`uri`, `name`)."""
        result = await _ask("roots/list", {}, key)
        roots: list[dict[str, Any]] = result.get("roots", [])
        return roots

    async def ask_many(
        self, questions: dict[str, tuple[str, dict[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """Ask several questions in one round: key -> (method, params), e.g.
        `{"name": ("elicitation/create", elicit_params(...)), "roots":
        ("roots/list", {})}`; key -> the result, as builtins."""
        asked: dict[str | None, tuple[str, Any, type[Any]]] = {
            key: (method, params, object) for key, (method, params) in questions.items()
        }
        answers = await request_client_many(asked)
        return {
            key: typing.cast("dict[str, Any]", to_builtins(answer))
            for key, answer in answers.items()
        }


class SyncContext:
    """`Context`'s waiting calls for a plain function running in a worker
    thread: each runs on the event loop and blocks the thread until done."""

    def __init__(self, context: Context) -> None:
        self._context = context

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """`Context.report_progress`."""
        _on_loop(partial(self._context.report_progress, progress, total, message))

    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """`Context.log`."""
        return _on_loop(partial(self._context.log, level, data, logger))

    def info(self, data: Any) -> bool:
        """`Context.info`."""
        return _on_loop(partial(self._context.info, data))

    def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        *,
        key: str | None = None,
    ) -> dict[str, Any]:
        """`Context.elicit`."""
        return _on_loop(
            partial(self._context.elicit, message, requested_schema, key=key)
        )

    def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        key: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """`Context.sample`."""
        sample = partial(
            self._context.sample,
            messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            key=key,
            **options,
        )
        return _on_loop(sample)

    def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """`Context.list_roots`."""
        return _on_loop(partial(self._context.list_roots, key=key))

    def ask_many(
        self, questions: dict[str, tuple[str, dict[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """`Context.ask_many`."""
        return _on_loop(partial(self._context.ask_many, questions))


def _on_loop(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run `coroutine()` on the event loop from a worker thread; its result.

    Raises:
        RuntimeError: called on the event loop itself, where it would wait
            for itself.
    """
    try:
        anyio.get_current_task()
    except RuntimeError:
        return anyio.from_thread.run(coroutine)
    raise RuntimeError(
        "Context.sync blocks, so it is for plain functions running in a worker "
        "thread; on the event loop (async functions, run_in_thread=False), "
        "await the Context's own methods"
    )


def elicit_params(message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
    """The params of a form `elicitation/create`."""
    return {"message": message, "requestedSchema": requested_schema}


def sample_params(
    messages: list[dict[str, Any]],
    max_tokens: int,
    system_prompt: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The params of a `sampling/createMessage`."""
    params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    params.update(options)
    return params


async def _ask(
    method: str, params: dict[str, Any], key: str | None = None
) -> dict[str, Any]:
    """A server→client request with builtins params; the result as builtins."""
    answer: object = await request_client(method, params, object, key=key)
    return typing.cast("dict[str, Any]", to_builtins(answer))

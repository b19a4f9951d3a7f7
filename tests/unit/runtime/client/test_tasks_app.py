"""`Client` tasks against our `App`, which serves 2025-11-25 core tasks and
the 2026-07-28 tasks extension (branches tasks-core and tasks-ext): in this
process over the memory transport, and over Streamable HTTP."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.client.tasks import (
    TaskCancelledError,
    TaskState,
    TaskSupportError,
)
from mcp_specgen_runtime.errors import (
    CapabilityError,
    RequestTimeoutError,
    RpcError,
)
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from mcp_specgen_types import latest
from tests.unit.runtime.transports.http.test_http_client import serving

LIMIT = 10.0
ERAS = ["2025-11-25", "2026-07-28"]
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def task_app() -> App:
    app = App("tasks-demo", version="1")

    @app.tool(task_support="optional")
    async def slow(seconds: float) -> str:
        """Sleep, then say so."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @app.tool(task_support="required")
    async def ask(ctx: Context) -> str:
        """Ask the user's name."""
        answer = await ctx.elicit("Your name?", SCHEMA)
        return f"hello {answer['content']['name']}"

    @app.tool(task_support="required")
    async def haiku(ctx: Context) -> str:
        """Ask the client's model."""
        sampled = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "a haiku"}}],
            max_tokens=5,
        )
        text: str = sampled["content"]["text"]
        return text

    @app.tool(task_support="required")
    async def broken() -> str:
        """Fail with a JSON-RPC error."""
        raise RpcError(-32050, "the job broke", {"why": "test"})

    @app.tool(task_support="required")
    async def oops() -> str:
        """Fail as a tool."""
        raise ValueError("bad input")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message."""
        return message

    return app


async def sampling(
    params: latest.CreateMessageRequestParams,
) -> latest.CreateMessageResult:
    return latest.CreateMessageResult(
        role="assistant", content=latest.TextContent(text="an old pond"), model="m"
    )


async def elicitation(params: latest.ElicitRequestParams) -> latest.ElicitResult:
    return latest.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def connected(
    target: Any = None, version: str = "2026-07-28", **options: Any
) -> AsyncGenerator[Client]:
    with anyio.fail_after(LIMIT):
        async with Client(
            task_app() if target is None else target,
            versions=[version],
            cache=None,
            sampling=sampling,
            elicitation=elicitation,
            **options,
        ) as client:
            yield client


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ERAS)
async def test_a_task_tool_call_becomes_a_task(version: str) -> None:
    seen: list[str] = []

    async def on_status(state: TaskState) -> None:
        seen.append(state.status)

    async with connected(version=version) as client:
        handle = await client.call_tool_as_task(
            "slow", {"seconds": 0.2}, on_status=on_status
        )
        assert not handle.immediate
        assert handle.state.status == "working"
        assert (await handle.status()).status == "working"
        assert text_of(await handle.result()) == "slept 0.2"
        assert seen == ["completed"]


@pytest.mark.anyio
async def test_a_plain_tool_is_answered_at_once() -> None:
    async with connected() as client:
        handle = await client.call_tool_as_task("echo", {"message": "hi"})
        assert handle.immediate
        assert text_of(await handle.result()) == "hi"


@pytest.mark.anyio
async def test_a_plain_tool_is_no_2025_task() -> None:
    async with connected(version="2025-11-25") as client:
        with pytest.raises(TaskSupportError):
            await client.call_tool_as_task("echo", {"message": "hi"})


@pytest.mark.anyio
async def test_call_tool_waits_on_the_task_with_accept_tasks() -> None:
    async with connected(accept_tasks=True) as client:
        assert text_of(await client.call_tool("slow", {"seconds": 0.1})) == "slept 0.1"
        assert text_of(await client.call_tool("ask")) == "hello Ada"
        assert text_of(await client.call_tool("echo", {"message": "hi"})) == "hi"


@pytest.mark.anyio
async def test_without_accept_tasks_call_tool_runs_plain_or_is_refused() -> None:
    async with connected() as client:
        assert text_of(await client.call_tool("slow", {"seconds": 0})) == "slept 0.0"
        with pytest.raises(RpcError) as refused:
            await client.call_tool("ask")
        assert refused.value.code == -32021


@pytest.mark.anyio
@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize(
    ("tool", "expected"), [("ask", "hello Ada"), ("haiku", "an old pond")]
)
async def test_input_inside_the_task_is_answered_by_the_callbacks(
    version: str, tool: str, expected: str
) -> None:
    seen: list[str] = []

    async def on_status(state: TaskState) -> None:
        seen.append(state.status)

    async with connected(version=version) as client:
        handle = await client.call_tool_as_task(tool, on_status=on_status)
        assert text_of(await handle.result()) == expected
        assert seen[-1] == "completed"


@pytest.mark.anyio
@pytest.mark.parametrize("version", ERAS)
async def test_failures_in_the_task(version: str) -> None:
    async with connected(version=version) as client:
        with pytest.raises(RpcError) as failed:
            await (await client.call_tool_as_task("broken")).result()
        assert (failed.value.code, failed.value.data) == (-32050, {"why": "test"})
        handle = await client.call_tool_as_task("oops")
        result = await handle.result()
        assert result.is_error is True
        assert "bad input" in text_of(result)
        # 2025-11-25 fails the task of an isError result; SEP-2663 completes it.
        expected = "failed" if version == "2025-11-25" else "completed"
        assert handle.state.status == expected


@pytest.mark.anyio
@pytest.mark.parametrize("version", ERAS)
async def test_cancel_timeout_unknown_and_list(version: str) -> None:
    async with connected(version=version) as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 30})
        with pytest.raises(RequestTimeoutError):
            await handle.wait(timeout=0.1)
        assert (await handle.cancel()).status == "cancelled"
        with pytest.raises(TaskCancelledError):
            await handle.result()
        with pytest.raises(RpcError) as unknown:
            await client.task("no-such-task").status()
        assert unknown.value.code == -32602
        if version == "2026-07-28":
            with pytest.raises(CapabilityError):
                await client.list_tasks()
            return
        listed = {t.task_id: t.status for t in (await client.list_tasks()).tasks}
        assert listed[handle.task_id] == "cancelled"


@pytest.mark.anyio
@pytest.mark.parametrize("version", ERAS)
async def test_tasks_over_streamable_http(version: str) -> None:
    with serving(McpHttpApp(task_app().session())) as served:
        async with connected(served.url, version, accept_tasks=True) as client:
            handle = await client.call_tool_as_task("slow", {"seconds": 0.1})
            assert not handle.immediate
            assert text_of(await handle.result()) == "slept 0.1"
            for tool, expected in (("ask", "hello Ada"), ("haiku", "an old pond")):
                asked = await client.call_tool_as_task(tool)
                assert text_of(await asked.result()) == expected
            if version == "2026-07-28":
                assert text_of(await client.call_tool("ask")) == "hello Ada"

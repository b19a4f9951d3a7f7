"""`Context` from a plain `def` running in a worker thread: its properties read
the request's context variables there, and `ctx.sync` runs its coroutines on
the event loop and waits for them."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import msgspec
import pytest

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.app.context import elicit_params
from mcp_specgen_runtime.codec.wire import UNSET
from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_types import v2025_11_25, v2026_07_28

from .test_application import Answers, client_of

NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Watcher(Answers):
    """Answers elicitations and keeps the notifications it gets."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None]] = []
        self.logged: list[Any] = []

    async def notifications_progress(
        self, params: v2025_11_25.ProgressNotificationParams
    ) -> None:
        total = None if params.total is UNSET else params.total
        self.progress.append((params.progress, total))

    async def notifications_message(
        self, params: v2025_11_25.LoggingMessageNotificationParams
    ) -> None:
        self.logged.append(params.data)


class Helper(Watcher):
    """Also samples and lists roots."""

    async def sampling_create_message(
        self, params: v2025_11_25.CreateMessageRequestParams
    ) -> v2025_11_25.CreateMessageResult:
        text = v2025_11_25.TextContent(text=f"max {params.max_tokens}")
        return v2025_11_25.CreateMessageResult(
            role="assistant", content=text, model="m"
        )

    async def roots_list(
        self, params: v2025_11_25.RequestParams
    ) -> v2025_11_25.ListRootsResult:
        return v2025_11_25.ListRootsResult(
            roots=[v2025_11_25.Root(uri="file:///work", name="work")]
        )


def make_app(loop_thread: list[int]) -> App:
    app = App("threaded-context")

    @app.tool()
    def work(ctx: Context) -> str:
        assert threading.get_ident() != loop_thread[0]
        assert current_request().method == "tools/call"
        ctx.sync.report_progress(1, 2)
        ctx.sync.report_progress(2, 2)
        sent = ctx.sync.info({"step": "done"})
        answer = ctx.sync.elicit("Your name?", NAME)
        return f"{ctx.request_id} {sent} {answer['content']['name']}"

    @app.tool()
    def gather(ctx: Context) -> str:
        hello = [{"role": "user", "content": {"type": "text", "text": "hi"}}]
        sampled = ctx.sync.sample(hello, max_tokens=7, system_prompt="be brief")
        roots = ctx.sync.list_roots()
        both = ctx.sync.ask_many(
            {"name": ("elicitation/create", elicit_params("Name?", NAME))}
        )
        logged = ctx.sync.log("warning", "careful", logger="gather")
        return (
            f"{sampled['content']['text']} {roots[0]['name']} "
            f"{both['name']['content']['name']} {logged}"
        )

    @app.tool(run_in_thread=False)
    def on_loop(ctx: Context) -> str:
        ctx.sync.report_progress(1)
        return "unreachable"

    return app


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_threaded_tool_reports_progress_logs_and_asks(version: str) -> None:
    watcher = Watcher()
    app = make_app([threading.get_ident()])
    options: dict[str, Any] = {"handlers": [watcher]}
    if version == "2026-07-28":
        options["log_level"] = "debug"
    async with client_of(app, version, **options) as client:
        if version == "2026-07-28":
            meta = v2026_07_28.dispatch.request_meta()
            meta = msgspec.structs.replace(meta, progress_token="p")
            modern = await v2026_07_28.Client(client).call_tool(name="work", meta=meta)
            assert isinstance(modern, v2026_07_28.CallToolResult)
            assert modern.is_error is not True, modern
            content: Any = modern.content[0]
        else:
            typed = v2025_11_25.Client(client)
            legacy = v2025_11_25.CallToolRequestParamsMeta(progress_token="p")
            result = await typed.call_tool(name="work", meta=legacy)
            assert result.is_error is not True, result
            content = result.content[0]
        request_id, sent, name = str(content.text).split()
        assert sent == "True" and name == "Ada"
        # The notifications came before the result; let their handlers run.
        await anyio.wait_all_tasks_blocked()
    assert request_id
    assert watcher.progress[-2:] == [(1, 2), (2, 2)]
    assert {"step": "done"} in watcher.logged


@pytest.mark.anyio
async def test_a_threaded_tool_samples_lists_roots_and_asks_many() -> None:
    helper = Helper()
    app = make_app([threading.get_ident()])
    async with client_of(app, "2025-11-25", handlers=[helper]) as client:
        result = await v2025_11_25.Client(client).call_tool(name="gather")
        content = result.content[0]
        assert isinstance(content, v2025_11_25.TextContent)
        assert content.text == "max 7 work Ada True"
        await anyio.wait_all_tasks_blocked()
    assert "careful" in helper.logged


@pytest.mark.anyio
async def test_ctx_sync_on_the_event_loop_says_what_to_do_instead() -> None:
    app = make_app([threading.get_ident()])
    async with client_of(app, "2025-11-25") as client:
        result = await v2025_11_25.Client(client).call_tool(name="on_loop")
        assert result.is_error is True
        content = result.content[0]
        assert isinstance(content, v2025_11_25.TextContent)
        assert "worker thread" in content.text and "await" in content.text

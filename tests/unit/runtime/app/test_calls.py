"""How the app calls its functions: plain `def`s in worker threads (bounded),
coroutines on the loop, and a function's SystemExit or KeyboardInterrupt as an
error of its call, not the end of the server."""

from __future__ import annotations

import functools
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.calls import DEFAULT_MAX_THREADS, runs_in_thread
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.transports.stdio import connect_stdio
from mcp_specgen_types import v2025_11_25

from .test_app_extras import call, http
from .test_application import client_of

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text_of(result: v2025_11_25.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, v2025_11_25.TextContent)
    return content.text


def threads_app(**options: Any) -> tuple[App, dict[str, int]]:
    """An app whose functions record the thread they ran in, by name."""
    app = App("threads", **options)
    ran: dict[str, int] = {}

    @app.tool()
    def plain() -> str:
        ran["plain"] = threading.get_ident()
        return "plain"

    @app.tool(run_in_thread=False)
    def inline() -> str:
        ran["inline"] = threading.get_ident()
        return "inline"

    @app.tool()
    async def coroutine() -> str:
        ran["coroutine"] = threading.get_ident()
        return "coroutine"

    @app.resource("info://about")
    def about() -> str:
        ran["about"] = threading.get_ident()
        return "about"

    @app.resource("users://{user_id}")
    def user(user_id: str) -> str:
        ran["user"] = threading.get_ident()
        return user_id

    @app.prompt()
    def greet(name: str) -> str:
        ran["greet"] = threading.get_ident()
        return f"hello {name}"

    @app.prompt(run_in_thread=False)
    def greet_inline(name: str) -> str:
        ran["greet_inline"] = threading.get_ident()
        return f"hello {name}"

    return app, ran


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_plain_functions_run_in_worker_threads_coroutines_on_the_loop(
    version: str,
) -> None:
    app, ran = threads_app()
    loop_thread = threading.get_ident()
    async with client_of(app, version) as client:
        typed = v2025_11_25.Client(client)
        for name in ("plain", "inline", "coroutine"):
            assert text_of(await typed.call_tool(name=name)) == name
        await typed.read_resource(uri="info://about")
        await typed.read_resource(uri="users://7")
        await typed.get_prompt(name="greet", arguments={"name": "Ada"})
        await typed.get_prompt(name="greet_inline", arguments={"name": "Ada"})
    threaded = {name for name, ident in ran.items() if ident != loop_thread}
    assert threaded == {"plain", "about", "user", "greet"}


def test_only_plain_functions_that_did_not_opt_out_run_in_threads() -> None:
    def plain() -> None: ...

    async def coroutine() -> None: ...

    class Awaitable:
        async def __call__(self) -> None: ...

    assert runs_in_thread(plain, True)
    assert not runs_in_thread(plain, False)
    assert not runs_in_thread(coroutine, True)
    assert not runs_in_thread(functools.partial(coroutine), True)
    assert not runs_in_thread(Awaitable(), True)


def test_the_thread_limit_defaults_to_40_and_can_be_set() -> None:
    assert DEFAULT_MAX_THREADS == 40
    assert App("a").threads.total_tokens == DEFAULT_MAX_THREADS
    assert App("b", max_threads=3).threads.total_tokens == 3


@pytest.mark.anyio
async def test_a_sleeping_sync_tool_does_not_delay_another_clients_echo() -> None:
    """The sleeper blocks for up to 1 s; another client's echo must come back
    while it still sleeps (ordering, not timing), and well under that second."""
    app = App("sleepy")
    started, release = threading.Event(), threading.Event()
    finished: list[bool] = []

    @app.tool()
    def nap() -> str:
        started.set()
        release.wait(1.0)  # the 1 s sleep, cut short once the echo is back
        finished.append(True)
        return "rested"

    @app.tool()
    def echo(message: str) -> str:
        return message

    napped: list[v2025_11_25.CallToolResult] = []
    async with (
        client_of(app, "2025-11-25") as sleeper,
        client_of(app, "2025-11-25") as other,
        anyio.create_task_group() as tasks,
    ):

        async def call_nap() -> None:
            napped.append(await v2025_11_25.Client(sleeper).call_tool(name="nap"))

        tasks.start_soon(call_nap)
        await anyio.to_thread.run_sync(started.wait, LIMIT)
        began = anyio.current_time()
        echoed = await v2025_11_25.Client(other).call_tool(
            name="echo", arguments={"message": "hi"}
        )
        latency = anyio.current_time() - began
        assert not finished, "the echo waited for the sleeping tool"
        assert text_of(echoed) == "hi"
        assert latency < 0.5
        release.set()
    assert text_of(napped[0]) == "rested"


@pytest.mark.anyio
async def test_the_thread_limit_bounds_concurrent_sync_calls() -> None:
    app = App("bounded", max_threads=1)
    release = threading.Event()

    @app.tool()
    def hold() -> str:
        release.wait(LIMIT)
        return "held"

    async with client_of(app, "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        results: list[str] = []

        async def call() -> None:
            results.append(text_of(await typed.call_tool(name="hold")))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            tasks.start_soon(call)
            await anyio.wait_all_tasks_blocked()
            assert app.threads.borrowed_tokens == 1
            assert app.threads.statistics().tasks_waiting == 1
            release.set()
        assert results == ["held", "held"]


def exiting_app() -> App:
    app = App("exits")

    @app.tool()
    def exit_in_thread() -> str:
        sys.exit(3)

    @app.tool(run_in_thread=False)
    def interrupt_on_loop() -> str:
        raise KeyboardInterrupt

    @app.tool()
    async def exit_async() -> str:
        raise SystemExit("bye")

    @app.tool()
    def echo(message: str) -> str:
        return message

    @app.resource("info://exit")
    def exit_resource() -> str:
        raise SystemExit(1)

    @app.prompt()
    async def exit_prompt() -> str:
        raise KeyboardInterrupt

    return app


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "raised"),
    [
        ("exit_in_thread", "SystemExit(3)"),
        ("interrupt_on_loop", "KeyboardInterrupt()"),
        ("exit_async", "SystemExit('bye')"),
    ],
)
async def test_a_tool_exiting_is_a_tool_error_and_the_app_serves_on(
    tool: str, raised: str
) -> None:
    async with client_of(exiting_app(), "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        failed = await typed.call_tool(name=tool)
        assert failed.is_error is True
        assert text_of(failed) == f"Error in tool {tool}: raised {raised}"
        echoed = await typed.call_tool(name="echo", arguments={"message": "on"})
        assert text_of(echoed) == "on"


@pytest.mark.anyio
async def test_a_resource_or_prompt_exiting_is_an_internal_error() -> None:
    async with client_of(exiting_app(), "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        with pytest.raises(RpcError) as read:
            await typed.read_resource(uri="info://exit")
        assert read.value.code == ErrorCode.INTERNAL_ERROR
        with pytest.raises(RpcError) as got:
            await typed.get_prompt(name="exit_prompt")
        assert got.value.code == ErrorCode.INTERNAL_ERROR
        echoed = await typed.call_tool(name="echo", arguments={"message": "on"})
        assert text_of(echoed) == "on"


@pytest.mark.anyio
async def test_over_http_a_tool_exiting_is_a_tool_error_and_the_app_serves_on() -> None:
    async with http(exiting_app()) as client:
        for tool in ("exit_in_thread", "interrupt_on_loop", "exit_async"):
            failed = (await call(client, "tools/call", {"name": tool})).json()
            assert failed["result"]["isError"] is True
        arguments = {"name": "echo", "arguments": {"message": "on"}}
        echoed = (await call(client, "tools/call", arguments)).json()
        assert echoed["result"]["content"] == [{"type": "text", "text": "on"}]


SERVER = textwrap.dedent("""
    import sys

    from mcp_specgen_runtime.app import App

    app = App("exits")


    @app.tool()
    def leave() -> str:
        sys.exit(0)


    @app.tool()
    async def interrupt() -> str:
        raise KeyboardInterrupt


    @app.tool()
    def echo(message: str) -> str:
        return message


    if __name__ == "__main__":
        app.run()
    """)


@pytest.mark.anyio
async def test_over_stdio_the_process_survives_a_tool_that_exits(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    with anyio.fail_after(30):
        async with connect_stdio(
            [sys.executable, str(script)], name="tests", version="0.1.0"
        ) as session:
            typed = v2025_11_25.Client(session)
            for tool, raised in (
                ("leave", "SystemExit(0)"),
                ("interrupt", "KeyboardInterrupt()"),
            ):
                failed = await typed.call_tool(name=tool)
                assert failed.is_error is True
                assert text_of(failed) == f"Error in tool {tool}: raised {raised}"
            echoed = await typed.call_tool(name="echo", arguments={"message": "hi"})
            assert text_of(echoed) == "hi"

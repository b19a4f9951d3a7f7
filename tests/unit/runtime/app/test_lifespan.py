"""`App(lifespan=...)`: entered once before serving, exited after, over
memory (`Client(app)`), real stdio and real HTTP (uvicorn); a lifespan that
fails to start stops the server before it serves."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App, Context, Depends, LifespanError
from mcp_specgen_runtime.app.lifespan import LifespanRunner
from tests.unit.runtime.transports.http.test_http_client import serving

LIMIT = 10.0
PROGRAM = Path(__file__).with_name("lifespan_app.py")
ORIGIN = "http://127.0.0.1:8000"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def recording(
    events: list[str], *, fail: bool = False
) -> Any:  # the factory App(lifespan=...) takes
    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[str]:
        if fail:
            raise ConnectionRefusedError("the database is down")
        events.append(f"enter {app.name}")
        try:
            yield "pool"
        except BaseException as exc:
            events.append(f"saw {exc!r}")
            raise
        finally:
            events.append("exit")

    return lifespan


def app_of(events: list[str], **options: Any) -> App:
    app = App("life", lifespan=recording(events, **options))

    @app.tool()
    async def pool(ctx: Context[str]) -> str:
        return f"{ctx.lifespan} {events}"

    return app


def text(result: Any) -> str:
    return result.content[0].text


# -- the runner ------------------------------------------------------------


@pytest.mark.anyio
async def test_it_is_entered_for_the_first_holder_and_exited_after_the_last() -> None:
    events: list[str] = []
    runner = LifespanRunner(recording(events), App("life"), "app 'life'")
    assert not runner.running
    await runner.enter()
    await runner.enter()
    assert runner.value == "pool" and events == ["enter life"]
    await runner.exit()
    assert runner.running and events == ["enter life"]
    await runner.exit()
    assert not runner.running and events == ["enter life", "exit"]
    with pytest.raises(RuntimeError, match="is not running"):
        _ = runner.value


@pytest.mark.anyio
async def test_a_holder_leaving_on_an_error_shows_it_to_the_lifespan() -> None:
    events: list[str] = []
    runner = LifespanRunner(recording(events), App("life"))
    with pytest.raises(KeyError):
        async with runner.held():
            raise KeyError("served badly")
    assert events == ["enter life", "saw KeyError('served badly')", "exit"]


@pytest.mark.anyio
async def test_a_lifespan_failing_to_start_is_a_lifespan_error_and_holds_nothing() -> (
    None
):
    runner = LifespanRunner(recording([], fail=True), App("life"), "app 'life'")
    with pytest.raises(LifespanError, match="app 'life' failed to start") as caught:
        await runner.enter()
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
    assert not runner.running
    await runner.exit()  # nothing held: nothing to do


@pytest.mark.anyio
async def test_ctx_lifespan_says_when_the_app_has_none() -> None:
    app = App("plain")

    @app.tool()
    def value(ctx: Context) -> str:
        return str(ctx.lifespan)

    with anyio.fail_after(LIMIT):
        async with Client(app) as client:
            result = await client.call_tool("value", {})
    assert result.is_error and "has no lifespan" in text(result)


# -- in memory -------------------------------------------------------------


@pytest.mark.anyio
async def test_client_of_an_app_holds_its_lifespan_while_connected() -> None:
    events: list[str] = []
    app = app_of(events)
    with anyio.fail_after(LIMIT):
        async with Client(app) as first, Client(app) as second:
            assert text(await first.call_tool("pool", {})) == "pool ['enter life']"
            assert text(await second.call_tool("pool", {})) == "pool ['enter life']"
        assert events == ["enter life", "exit"]
        async with app.running():
            assert events == ["enter life", "exit", "enter life"]
    assert events == ["enter life", "exit", "enter life", "exit"]


@pytest.mark.anyio
async def test_client_of_an_app_whose_lifespan_fails_does_not_connect() -> None:
    with anyio.fail_after(LIMIT), pytest.raises(LifespanError, match="database"):
        async with Client(app_of([], fail=True)):
            pytest.fail("connected to an app that did not start")


# -- stdio -----------------------------------------------------------------


@pytest.mark.anyio
async def test_stdio_enters_the_lifespan_before_serving_and_exits_at_the_end(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    with anyio.fail_after(LIMIT):
        async with Client([sys.executable, str(PROGRAM), str(log)]) as client:
            assert text(await client.call_tool("events", {})) == "enter"
            assert text(await client.call_tool("whoami", {})) == "null"
    assert log.read_text().split() == ["enter", "exit"]


def test_stdio_stops_before_serving_when_the_lifespan_fails(tmp_path: Path) -> None:
    initialize = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{'
        b'"protocolVersion":"2025-11-25","capabilities":{},'
        b'"clientInfo":{"name":"t","version":"1"}}}\n'
    )
    done = subprocess.run(
        [sys.executable, str(PROGRAM), str(tmp_path / "log")],
        input=initialize,
        capture_output=True,
        env={"LIFESPAN_FAIL": "1", "PATH": ""},
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == b""  # the initialize was never answered
    assert done.stderr.decode().strip().splitlines()[-1] == (
        "error: the lifespan of app 'lifespan-app' failed to start: "
        "RuntimeError: the database is down"
    )


# -- HTTP ------------------------------------------------------------------


@pytest.mark.anyio
async def test_http_holds_the_lifespan_once_from_start_up_to_shutdown() -> None:
    events: list[str] = []
    app = app_of(events)
    with serving(app.asgi()) as server:
        assert events == ["enter life"]  # before any request
        base = server.url.removesuffix("/mcp")
        with anyio.fail_after(LIMIT):
            async with (
                Client(server.url) as modern,
                Client(server.url, versions=["2025-11-25"]) as session,
                Client(base + "/sse", versions=["2024-11-05"]) as sse,
            ):
                for client in (modern, session, sse):
                    result = await client.call_tool("pool", {})
                    assert text(result) == "pool ['enter life']"
        assert events == ["enter life"]
    assert events == ["enter life", "exit"]


def test_http_stops_before_serving_when_the_lifespan_fails(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(PROGRAM), str(tmp_path / "log"), "http", "0"],
        capture_output=True,
        env={"LIFESPAN_FAIL": "1", "PATH": ""},
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode != 0
    stderr = done.stderr.decode()
    assert "RuntimeError: the database is down" in stderr
    assert "Uvicorn running" not in stderr


class Pool:
    """What a lifespan opens: handing out connections while open."""

    def __init__(self) -> None:
        self.open = True
        self.events: list[str] = []

    def use(self, event: str) -> None:
        assert self.open, f"{event} after the pool closed"
        self.events.append(event)


@asynccontextmanager
async def pooled(app: App) -> AsyncIterator[Pool]:
    pool = POOLS[app.name] = Pool()
    try:
        yield pool
    finally:
        pool.open = False


POOLS: dict[str, Pool] = {}


async def connection(ctx: Context[Pool]) -> AsyncIterator[str]:
    """A dependency taking a connection from the pool, giving it back after."""
    ctx.lifespan.use("take")
    try:
        yield "connection"
    finally:
        ctx.lifespan.use("give back")


@pytest.mark.anyio
async def test_http_shutdown_exits_the_lifespan_after_running_calls_end() -> None:
    # A legacy session's call runs in a task of the server's own: shutting
    # down cancels it, and its cleanup (a generator dependency's here) still
    # needs what the lifespan opened, so the lifespan must exit after it.
    started = anyio.Event()
    app = App("shutdown", lifespan=pooled)

    @app.tool()
    async def slow(db: Annotated[str, Depends(connection)]) -> str:
        started.set()
        await anyio.sleep_forever()
        return db

    http = app.asgi(legacy_sse=False)
    transport = httpx.ASGITransport(http)
    headers = {"accept": "application/json, text/event-stream"}
    call = {"name": "slow", "arguments": {}}
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
    with anyio.fail_after(LIMIT):
        async with (
            httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client,
            anyio.create_task_group() as tasks,
        ):
            opened = await client.post("/mcp", json=INITIALIZE, headers=headers)
            headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = "2025-11-25"
            post = partial(client.post, "/mcp", json=message, headers=headers)
            tasks.start_soon(post)
            await started.wait()
            await http.aclose()  # what the ASGI lifespan's shutdown runs
            tasks.cancel_scope.cancel()
    pool = POOLS.pop("shutdown")
    assert (pool.events, pool.open) == (["take", "give back"], False)


async def unhurried(ctx: Context[Pool]) -> AsyncIterator[str]:
    """Like `connection`, with a release that takes a few turns of the loop."""
    ctx.lifespan.use("take")
    try:
        yield "connection"
    finally:
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        ctx.lifespan.use("give back")


@pytest.mark.anyio
async def test_http_shutdown_waits_for_cancelled_2026_calls_to_unwind() -> None:
    # uvicorn cancels the requests outliving its graceful shutdown and runs
    # the lifespan's shutdown at once: a 2026 call, served in its request's
    # task, is still unwinding then, and needs the pool to give back to.
    started = anyio.Event()
    app = App("modern-shutdown", lifespan=pooled)

    @app.tool()
    async def slow(db: Annotated[str, Depends(unhurried)]) -> str:
        started.set()
        await anyio.sleep_forever()
        return db

    http = app.asgi(legacy_sse=False)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {"name": "slow", "arguments": {}, "_meta": meta}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "slow",
    }
    request = anyio.CancelScope()

    async def post(client: httpx.AsyncClient) -> None:
        with request:
            await client.post("/mcp", json=message, headers=headers)

    transport = httpx.ASGITransport(http)
    with anyio.fail_after(LIMIT):
        async with (
            httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client,
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(post, client)
            await started.wait()
            request.cancel()  # as uvicorn does after its graceful timeout
            await http.aclose()  # and then the lifespan's shutdown
    pool = POOLS.pop("modern-shutdown")
    assert (pool.events, pool.open) == (["take", "give back"], False)


def test_http_shutdown_waits_for_the_calls_of_http_sse_sessions() -> None:
    # An HTTP+SSE (2024-11-05) session runs in its GET request's task; uvicorn
    # cancels that past its graceful timeout, then runs the lifespan's
    # shutdown, which must wait for the call's cleanup.
    started = threading.Event()
    app = App("sse-shutdown", lifespan=pooled)

    @app.tool()
    async def slow(db: Annotated[str, Depends(unhurried)]) -> str:
        started.set()
        await anyio.sleep_forever()
        return db

    async def call(url: str) -> None:
        with anyio.fail_after(LIMIT):
            async with Client(url, versions=["2024-11-05"]) as client:
                with contextlib.suppress(Exception):  # the server went away
                    await client.call_tool("slow", {})

    with serving(app.asgi()) as server:
        url = server.url.removesuffix("/mcp") + "/sse"
        caller = threading.Thread(target=anyio.run, args=(call, url))
        caller.start()
        assert started.wait(LIMIT)
    caller.join(LIMIT)
    pool = POOLS.pop("sse-shutdown")
    assert (pool.events, pool.open) == (["take", "give back"], False)

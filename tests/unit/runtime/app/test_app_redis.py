"""`App(redis=...)`: two apps on one Redis are one server to their clients (a
list cursor, a `tasks/list` cursor or an MRTR `requestState` minted by one is
taken by the other); another prefix is another server; where the URL comes
from (argument, `use_redis`, `$MCP_REDIS_URL`, `redis=None`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from benchmarks.redis_server import RedisServer
from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_specgen_runtime.stores.sqlite_tasks import SQLiteTaskStore
from mcp_specgen_runtime.stores.tasks import MemoryTaskStore

from .test_app_extras import ACCEPT, NAME, call
from .test_tasks import connected, get, refused

LEGACY = "2025-11-25"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app(url: str | None, prefix: str) -> App:
    app = App("shared", page_size=1, redis=url, redis_prefix=prefix)
    for name in ("one", "two", "three"):

        @app.tool(name=name)
        def tool() -> str:
            return "x"

    @app.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME, key="user_name")
        return f"hello {answer['content']['name']}"

    @app.tool(task_support="optional")
    async def later(text: str) -> str:
        return text

    return app


@asynccontextmanager
async def lifespan(asgi: Any) -> AsyncIterator[dict[str, Any]]:
    """Run `asgi`'s lifespan: yields the start-up answer, shuts down after."""
    to_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    from_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
    running = asyncio.create_task(asgi(scope, to_app.get, from_app.put))
    await to_app.put({"type": "lifespan.startup"})
    started = await from_app.get()
    try:
        yield started
    finally:
        if started["type"] == "lifespan.startup.complete":
            await to_app.put({"type": "lifespan.shutdown"})
            assert (await from_app.get())["type"] == "lifespan.shutdown.complete"
        await running


@asynccontextmanager
async def http(app: App) -> AsyncIterator[httpx.AsyncClient]:
    asgi = app.asgi()
    transport = httpx.ASGITransport(asgi)
    async with (
        lifespan(asgi) as started,
        httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as client,
    ):
        assert started["type"] == "lifespan.startup.complete", started
        yield client


@asynccontextmanager
async def served(app: App) -> AsyncIterator[Any]:
    """`connected`, then the app's tasks closed (its Redis client with them)."""
    try:
        async with connected(app) as session:
            yield session
    finally:
        await app.tasks.aclose()


@pytest.mark.anyio
async def test_a_list_cursor_from_one_app_pages_on_the_other(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    first = make_app(redis_server.url, redis_prefix)
    second = make_app(redis_server.url, redis_prefix)
    async with served(first) as on_first, served(second) as on_second:
        page = await get(on_first, "tools/list", {})
        assert [t["name"] for t in page["tools"]] == ["one"]
        following = await get(on_second, "tools/list", {"cursor": page["nextCursor"]})
        assert [t["name"] for t in following["tools"]] == ["two"]
    other = make_app(redis_server.url, redis_prefix + "other:")
    async with served(other) as on_other:
        error = await refused(on_other, "tools/list", {"cursor": page["nextCursor"]})
        assert error.code == -32602


@pytest.mark.anyio
async def test_without_redis_each_app_refuses_the_others_cursor() -> None:
    first, second = make_app(None, "x:"), make_app(None, "x:")
    async with connected(first) as on_first, connected(second) as on_second:
        page = await get(on_first, "tools/list", {})
        error = await refused(on_second, "tools/list", {"cursor": page["nextCursor"]})
        assert error.code == -32602


@pytest.mark.anyio
async def test_an_mrtr_round_started_on_one_app_completes_on_the_other(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    first = make_app(redis_server.url, redis_prefix)
    second = make_app(redis_server.url, redis_prefix)
    other = make_app(redis_server.url, redis_prefix + "other:")
    async with http(first) as one, http(second) as two, http(other) as three:
        asked = (await call(one, "tools/call", {"name": "greet"})).json()["result"]
        assert asked["resultType"] == "input_required"
        retry = {
            "name": "greet",
            "inputResponses": {"user_name": ACCEPT},
            "requestState": asked["requestState"],
        }
        done = (await call(two, "tools/call", retry)).json()["result"]
        assert done["content"][0]["text"] == "hello Ada"
        foreign = (await call(three, "tools/call", retry)).json()
        assert foreign["error"]["code"] == -32602
        assert "requestState is not valid" in foreign["error"]["message"]


@pytest.mark.anyio
async def test_tasks_and_their_list_cursor_are_shared(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    """Tasks of one owner made through one app are listed page by page
    through the other, with the cursor the first one signed."""
    first = make_app(redis_server.url, redis_prefix)
    second = make_app(redis_server.url, redis_prefix)
    assert isinstance(first.tasks.store, RedisTaskStore)
    first.tasks.page_size = second.tasks.page_size = 1
    sessions = [first.session(), second.session()]
    for session in sessions:
        await session.start()
    assert first.tasks.cursor_key == second.tasks.cursor_key

    async def work(_: Any) -> dict[str, Any]:
        return {}

    try:
        made = [
            await first.tasks.start("alice", LEGACY, "tools/call", work, 60_000)
            for _ in range(2)
        ]
        page, cursor = await first.tasks.list("alice")
        assert cursor is not None
        rest, end = await second.tasks.list("alice", cursor)
        assert [t.task_id for t in page + rest] == [t.task_id for t in made]
        assert end is None
    finally:
        for session in sessions:
            await session.aclose()


def test_where_the_url_comes_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_REDIS_URL", "redis://from-env:6379/0")
    assert App("a").redis_url == "redis://from-env:6379/0"
    assert isinstance(App("a").tasks.store, RedisTaskStore)
    assert App("a", redis="redis://given:1/0").redis_url == "redis://given:1/0"
    off = App("a", redis=None)
    assert off.redis_url is None
    assert isinstance(off.tasks.store, MemoryTaskStore)
    monkeypatch.setenv("MCP_REDIS_URL", "")
    assert App("a").redis_url is None
    monkeypatch.delenv("MCP_REDIS_URL")
    assert App("a").redis_url is None


def test_use_redis_switches_later_and_keeps_a_given_task_store(
    tmp_path: Any,
) -> None:
    app = App("a", redis=None)
    app.use_redis("redis://later:1/0", prefix="blue:")
    assert (app.redis_url, app.redis_prefix) == ("redis://later:1/0", "blue:")
    store = app.tasks.store
    assert isinstance(store, RedisTaskStore) and store.prefix == b"blue:tasks:"
    mine = SQLiteTaskStore(str(tmp_path / "tasks.db"))
    kept = App("a", redis="redis://x:1/0", task_store=mine)
    assert kept.tasks.store is mine


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis of this test's own, which it may stop or freeze."""
    with RedisServer() as server:
        yield server


async def call_tool(session: Any, name: str, **arguments: Any) -> Any:
    return await get(session, "tools/call", {"name": name, "arguments": arguments})


@pytest.mark.anyio
async def test_redis_stopped_mid_run_fails_task_requests_saying_so(
    own_redis: RedisServer,
) -> None:
    app = make_app(own_redis.url, "mid:")
    params = {"name": "later", "arguments": {"text": "hi"}, "task": {"ttl": 60_000}}
    async with served(app) as session:
        made = (await get(session, "tools/call", params))["task"]
        own_redis.stop()
        for method, asked in (
            ("tasks/get", {"taskId": made["taskId"]}),
            ("tasks/list", {}),
            ("tools/call", params),
        ):
            error = await refused(session, method, asked)
            assert error.code == -32603
            assert error.message.startswith(
                f"the task store is unreachable (Redis at {own_redis.url}): "
            ), error.message
        answer = await call_tool(session, "one")
        assert answer["content"] == [{"type": "text", "text": "x"}]


@pytest.mark.anyio
async def test_a_frozen_redis_times_out_instead_of_hanging(
    own_redis: RedisServer,
) -> None:
    """A Redis that takes connections but never answers (SIGSTOP) fails
    each task request after the socket timeout (here from the URL)."""
    import signal

    app = make_app(f"{own_redis.url}?socket_timeout=0.2", "frozen:")
    # Frozen by signal: this test's own server, nobody else's.
    process = own_redis._proc
    assert process is not None
    async with served(app) as session:
        await call_tool(session, "one")  # the keys are loaded
        process.send_signal(signal.SIGSTOP)
        try:
            error = await refused(session, "tasks/list", {})
        finally:
            process.send_signal(signal.SIGCONT)
        assert error.code == -32603
        assert "the task store is unreachable" in error.message
        assert "Timeout" in error.message


@pytest.mark.anyio
async def test_a_redis_named_when_serving_is_the_whole_apps(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    """`asgi(redis=...)` switches the app too: its tasks and list cursors."""
    app = make_app(None, "unused:")
    asgi = app.asgi(redis=redis_server.url, redis_prefix=redis_prefix)
    assert (app.redis_url, app.redis_prefix) == (redis_server.url, redis_prefix)
    assert isinstance(app.tasks.store, RedisTaskStore)
    async with lifespan(asgi):
        pass
    other = make_app(redis_server.url, redis_prefix)
    async with served(other) as session:
        await get(session, "tools/list", {})
    assert app._cursor_key == other._cursor_key

"""`list_all_*` keeps what the server allows it to: a 2026 result for its
`ttlMs`, a legacy listing until the server's list_changed (when it declared
`listChanged`); nothing otherwise."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime import Client, ServerSession
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import MemoryTransport, memory_pair
from mcp_specgen_types import v2026_07_28 as modern

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorder:
    """A transport that counts the requests it sends, by method."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.methods: list[str] = []

    async def send(self, message: bytes) -> None:
        self.methods.append(json.loads(message).get("method", ""))
        await self.inner.send(message)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


def echo_app(**options: Any) -> App:
    app = App("echo", **options)

    @app.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    return app


async def settle(done: Callable[[], bool]) -> None:
    """Wait until `done()` holds (a server-side effect with no event of its own)."""
    for _ in range(500):
        if done():
            return
        await anyio.sleep(0.01)
    raise AssertionError("never settled")


class Tools(modern.ServerHandlers):
    def __init__(self, ttl_ms: int) -> None:
        self.ttl_ms = ttl_ms
        self.calls = 0

    async def tools_list(
        self, params: modern.PaginatedRequestParams
    ) -> modern.ListToolsResult:
        self.calls += 1
        tool = modern.Tool(
            name=f"t{self.calls}", input_schema=modern.ToolInputSchema(type="object")
        )
        return modern.ListToolsResult(
            tools=[tool], ttl_ms=self.ttl_ms, cache_scope="public"
        )


@pytest.mark.anyio
@pytest.mark.parametrize(("ttl_ms", "calls"), [(60_000, 1), (0, 2)])
async def test_a_modern_listing_is_kept_for_its_ttl(ttl_ms: int, calls: int) -> None:
    tools = Tools(ttl_ms)
    server = ServerSession([tools], name="s", version="1")
    with anyio.fail_after(LIMIT):
        async with Client(server) as client:
            first = await client.list_all_tools()
            again = await client.list_all_tools()
    assert tools.calls == calls
    assert [t.name for t in first] == ["t1"]
    assert [t.name for t in again] == ["t1" if calls == 1 else "t2"]


@pytest.mark.anyio
async def test_a_legacy_listing_is_kept_until_the_list_changes() -> None:
    app = echo_app()
    changed: list[str] = []
    heard = anyio.Event()

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)
        heard.set()

    client_end, server_end = memory_pair()
    recorder = Recorder(client_end)
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            Client(
                recorder, versions=["2025-11-25"], on_list_changed=on_list_changed
            ) as client,
        ):
            assert [t.name for t in await client.list_all_tools()] == ["echo"]
            assert [t.name for t in await client.list_all_tools()] == ["echo"]
            assert recorder.methods.count("tools/list") == 1
            app.tool("second")(lambda: "two")
            await heard.wait()
            names = [t.name for t in await client.list_all_tools()]
            assert names == ["echo", "second"]
            assert recorder.methods.count("tools/list") == 2
    assert changed == ["tools"]


@pytest.mark.anyio
async def test_without_a_list_changed_promise_nothing_is_kept() -> None:
    client_end, server_end = memory_pair()
    recorder = Recorder(client_end)
    app = echo_app(list_changed=False)
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            Client(recorder, versions=["2025-11-25"]) as client,
        ):
            await client.list_all_tools()
            await client.list_all_tools()
    assert recorder.methods.count("tools/list") == 2


@pytest.mark.anyio
async def test_a_2026_client_listens_for_changes_when_asked() -> None:
    app = echo_app()
    changed: list[str] = []
    heard = anyio.Event()

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)
        heard.set()

    with anyio.fail_after(LIMIT):
        async with Client(app, on_list_changed=on_list_changed) as client:
            assert client.negotiated.era == "modern"
            await settle(lambda: bool(app.changes.listeners))
            app.tool("second")(lambda: "two")
            await heard.wait()
            names = [t.name for t in await client.list_all_tools()]
            assert names == ["echo", "second"]
        await settle(lambda: not app.changes.listeners)  # ended with the client
    assert changed == ["tools"]

"""Resource subscriptions through `Client`, the same in both eras: legacy
`resources/subscribe`, the 2026 `subscriptions/listen` stream's
`resourceSubscriptions`; updates reach `on_resource_updated`."""

from __future__ import annotations

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from tests.unit.runtime.transports.http.test_http_client import serving

LIMIT = 10.0
VERSIONS = ["2025-11-25", "2026-07-28"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def notes_app() -> App:
    app = App("notes", subscriptions=True)

    @app.resource("mem://a", name="a")
    def a() -> str:
        return "a"

    @app.resource("mem://b", name="b")
    def b() -> str:
        return "b"

    @app.tool()
    async def touch(uri: str) -> str:
        """Tell the subscribers that `uri` changed (from the server's loop)."""
        await app.notify_resource_updated(uri)
        return uri

    return app


class Updates:
    """The URIs `on_resource_updated` got, with a way to wait for the next."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.arrived = anyio.Event()

    async def __call__(self, uri: str) -> None:
        self.uris.append(uri)
        self.arrived.set()

    async def next(self) -> str:
        await self.arrived.wait()
        self.arrived = anyio.Event()
        return self.uris[-1]


@pytest.mark.parametrize("version", VERSIONS)
async def test_subscribe_hears_updates_until_unsubscribed(version: str) -> None:
    app, updates = notes_app(), Updates()
    with anyio.fail_after(LIMIT):
        async with Client(
            app, versions=[version], on_resource_updated=updates
        ) as client:
            await app.notify_resource_updated("mem://a")  # not subscribed yet
            await client.subscribe_resource("mem://a")
            await client.subscribe_resource("mem://b")
            await app.notify_resource_updated("mem://a")
            assert await updates.next() == "mem://a"
            await app.notify_resource_updated("mem://b")
            assert await updates.next() == "mem://b"
            await client.unsubscribe_resource("mem://a")
            await app.notify_resource_updated("mem://a")  # no longer heard
            await app.notify_resource_updated("mem://b")
            assert await updates.next() == "mem://b"
            await client.unsubscribe_resource("mem://b")
            await app.notify_resource_updated("mem://b")
            await client.list_resources()  # a round trip: nothing more came
    # Each update heard once: the 2026 stream re-opened for each change
    # delivers nothing twice.
    assert updates.uris == ["mem://a", "mem://b", "mem://b"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_subscription_the_server_refuses_raises(version: str) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(notes_app(), versions=[version]) as client:
            with pytest.raises(RpcError, match="mem://unknown") as caught:
                await client.subscribe_resource("mem://unknown")
    assert caught.value.code == ErrorCode.INVALID_PARAMS


async def test_a_2026_subscription_keeps_list_changes_coming() -> None:
    """One stream carries both: re-opening it for a resource keeps the
    list_changed the client asked for."""
    app, updates = notes_app(), Updates()
    app.tool("first")(lambda: "first")  # so the app offers tools' changes
    changed: list[str] = []
    heard = anyio.Event()

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)
        heard.set()

    with anyio.fail_after(LIMIT):
        async with Client(
            app, on_list_changed=on_list_changed, on_resource_updated=updates
        ) as client:
            assert client.negotiated.era == "modern"
            await client.subscribe_resource("mem://a")
            await app.notify_resource_updated("mem://a")
            assert await updates.next() == "mem://a"
            app.tool("second")(lambda: "second")
            await heard.wait()
        assert not app.changes.listeners  # every stream ended with the client
    assert changed == ["tools"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_subscriptions_over_streamable_http(version: str) -> None:
    """Each 2026 stream is a POST answered by an event stream: re-opening
    one and closing the other works as in memory."""
    app, updates = notes_app(), Updates()
    with serving(McpHttpApp(app.session())) as served:
        with anyio.fail_after(LIMIT):
            async with Client(
                served.url, versions=[version], on_resource_updated=updates
            ) as client:
                await client.subscribe_resource("mem://a")
                await client.subscribe_resource("mem://b")
                await client.call_tool("touch", {"uri": "mem://a"})
                assert await updates.next() == "mem://a"
                await client.unsubscribe_resource("mem://a")
                await client.call_tool("touch", {"uri": "mem://a"})
                await client.call_tool("touch", {"uri": "mem://b"})
                assert await updates.next() == "mem://b"
    assert updates.uris == ["mem://a", "mem://b"]

"""List changes reach the clients of both eras: legacy connections get
`notifications/<kind>/list_changed`, 2026 `subscriptions/listen` streams get
an acknowledgement and then the changes they asked for."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from mcp_specgen_types import v2025_11_25
from tests.unit.runtime.transports.http.test_server import (
    modern,
    open_session,
    served,
    session_headers,
    sse_events,
)

LIMIT = 10.0
MODERN = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app(**options: Any) -> App:
    app = App("changing", version="1", **options)
    app.tool("first")(lambda: "one")
    app.prompt("greet")(lambda: "hello")
    app.resource("mem://a")(lambda: "a")
    return app


class Recorder(v2025_11_25.ClientHandlers):
    """Records the list_changed notifications a legacy client gets."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.arrived = anyio.Event()

    def _note(self, kind: str) -> None:
        self.seen.append(kind)
        self.arrived.set()
        self.arrived = anyio.Event()

    async def notifications_tools_list_changed(
        self, params: v2025_11_25.NotificationParams
    ) -> None:
        self._note("tools")

    async def notifications_prompts_list_changed(
        self, params: v2025_11_25.NotificationParams
    ) -> None:
        self._note("prompts")

    async def notifications_resources_list_changed(
        self, params: v2025_11_25.NotificationParams
    ) -> None:
        self._note("resources")


@asynccontextmanager
async def legacy_client(
    app: App, recorder: Recorder | None = None
) -> AsyncGenerator[ClientSession]:
    client_end, server_end = memory_pair()
    handlers = [] if recorder is None else [recorder]
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            ClientSession(
                client_end,
                name="t",
                version="1",
                versions=["2025-11-25"],
                handlers=handlers,
            ) as client,
        ):
            yield client


async def next_seen(recorder: Recorder, count: int) -> list[str]:
    while len(recorder.seen) < count:
        await recorder.arrived.wait()
    return recorder.seen


@pytest.mark.anyio
async def test_capabilities_advertise_list_changed_unless_turned_off() -> None:
    async with legacy_client(make_app()) as client:
        capabilities = client.server_capabilities
        assert capabilities["tools"] == {"listChanged": True}
        assert capabilities["prompts"] == {"listChanged": True}
        assert capabilities["resources"] == {"listChanged": True}
    async with legacy_client(make_app(list_changed=False)) as client:
        assert client.server_capabilities["tools"] == {}


@pytest.mark.anyio
async def test_a_legacy_client_hears_of_registrations_and_removals() -> None:
    app = make_app(list_changed=True)
    recorder = Recorder()
    async with legacy_client(app, recorder) as client:
        typed = v2025_11_25.Client(client)
        app.tool("second")(lambda: "two")
        assert await next_seen(recorder, 1) == ["tools"]
        names = [tool.name for tool in (await typed.list_tools()).tools]
        assert names == ["first", "second"]
        app.remove_tool("second")
        assert await next_seen(recorder, 2) == ["tools", "tools"]
        assert [tool.name for tool in (await typed.list_tools()).tools] == ["first"]
        app.prompt("bye")(lambda: "bye")
        app.remove_resource("mem://a")
        assert await next_seen(recorder, 4) == [
            "tools",
            "tools",
            "prompts",
            "resources",
        ]
        await app.notify_list_changed("prompts")
        assert (await next_seen(recorder, 5))[-1] == "prompts"
        with pytest.raises(ValueError, match="unknown list"):
            await app.notify_list_changed("roots")


@pytest.mark.anyio
async def test_without_list_changed_legacy_clients_are_not_told() -> None:
    app = make_app(list_changed=False)
    recorder = Recorder()
    async with legacy_client(app, recorder) as client:
        app.tool("second")(lambda: "two")
        await app.notify_list_changed("tools")
        await v2025_11_25.Client(client).list_tools()  # a round trip
        assert recorder.seen == []


def test_removing_what_is_not_there_is_a_key_error() -> None:
    app = make_app()
    for remove, key in [
        (app.remove_tool, "nope"),
        (app.remove_prompt, "nope"),
        (app.remove_resource, "mem://nope"),
    ]:
        with pytest.raises(KeyError):
            remove(key)
    app.resource("mem://{name}")(lambda name: name)
    app.remove_resource("mem://{name}")
    assert app.templates == []


async def settle(check: Callable[[], bool]) -> None:
    """Wait (polling, at most LIMIT seconds) until `check()` holds."""
    for _ in range(int(LIMIT * 100)):
        if check():
            return
        await anyio.sleep(0.01)
    raise AssertionError("never settled")


def listen_params(**wanted: bool) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    return {"_meta": meta, "notifications": wanted}


@pytest.mark.anyio
async def test_a_2026_subscription_is_acknowledged_then_told_of_changes() -> None:
    app = App("changing", version="1")
    app.tool("first")(lambda: "one")  # no prompts: promptsListChanged refused
    client_end, server_end = memory_pair()
    received: list[dict[str, Any]] = []
    arrived = anyio.Event()

    async def on_message(method: str, params: bytes | None) -> bytes | None:
        nonlocal arrived
        received.append({"method": method, "params": json.loads(params or b"{}")})
        arrived.set()
        arrived = anyio.Event()
        return None

    async def until(count: int) -> None:
        while len(received) < count:
            await arrived.wait()

    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            Connection(client_end, on_message) as client,
            anyio.create_task_group() as tasks,
        ):
            params = listen_params(toolsListChanged=True, promptsListChanged=True)
            tasks.start_soon(
                client.request, "subscriptions/listen", params, dict[str, Any]
            )
            await until(1)
            acknowledged = received[0]
            assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
            subscription_id = acknowledged["params"]["_meta"][SUBSCRIPTION_ID]
            assert acknowledged["params"]["notifications"] == {"toolsListChanged": True}
            app.prompt("greet")(lambda: "hello")  # not asked for: not sent
            app.tool("second")(lambda: "two")
            await until(2)
            changed = received[1]
            assert changed["method"] == "notifications/tools/list_changed"
            assert changed["params"]["_meta"] == {SUBSCRIPTION_ID: subscription_id}
            assert len(app.changes.listeners) == 1
            tasks.cancel_scope.cancel()  # the client gives up: cancelled
        await settle(lambda: not app.changes.listeners)
    assert len(received) == 2


@pytest.mark.anyio
async def test_ending_subscriptions_answers_the_listen_request() -> None:
    app = App("changing", version="1")
    app.tool("first")(lambda: "one")
    client_end, server_end = memory_pair()

    async def ignore(method: str, params: bytes | None) -> bytes | None:
        return None

    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            Connection(client_end, ignore) as client,
            anyio.create_task_group() as tasks,
        ):
            results: list[Any] = []

            async def listen() -> None:
                params = listen_params(toolsListChanged=True)
                results.append(
                    await client.request("subscriptions/listen", params, dict[str, Any])
                )

            tasks.start_soon(listen)
            await settle(lambda: bool(app.changes.listeners))
            app.end_subscriptions()
    assert results[0]["_meta"][SUBSCRIPTION_ID] is not None
    assert app.changes.listeners == set()


# --- over Streamable HTTP (uvicorn) ------------------------------------------------


@pytest.mark.anyio
async def test_over_http_a_listen_stream_carries_the_changes() -> None:
    app = App("changing", version="1")
    app.tool("first")(lambda: "one")
    server = McpHttpApp(app.session())
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        body, headers = modern(
            9, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
        )
        async with client.stream("POST", url, json=body, headers=headers) as answer:
            events = sse_events(answer)
            acknowledged = await anext(events)
            assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
            assert acknowledged["params"] == {
                "notifications": {"toolsListChanged": True},
                "_meta": {SUBSCRIPTION_ID: 9},
            }
            app.tool("second")(lambda: "two")
            changed = await anext(events)
            assert changed["method"] == "notifications/tools/list_changed"
            assert changed["params"]["_meta"] == {SUBSCRIPTION_ID: 9}
        # Closing the stream cancels the request: the subscription ends.
        await settle(lambda: not app.changes.listeners)


@pytest.mark.anyio
async def test_over_http_a_legacy_session_hears_on_its_get_stream() -> None:
    app = make_app(list_changed=True)
    server = McpHttpApp(app.session())
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        session_id = await open_session(client, url=url)
        get_headers = {"accept": "text/event-stream", **session_headers(session_id)}
        async with client.stream("GET", url, headers=get_headers) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            app.remove_prompt("greet")
            message = await anext(events)
            assert message["method"] == "notifications/prompts/list_changed"


class UpdateRecorder(v2025_11_25.ClientHandlers):
    """Records the `notifications/resources/updated` a legacy client gets."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.arrived = anyio.Event()

    async def notifications_resources_updated(
        self, params: v2025_11_25.ResourceUpdatedNotificationParams
    ) -> None:
        self.updated.append(params.uri)
        self.arrived.set()
        self.arrived = anyio.Event()


@pytest.mark.anyio
async def test_resource_updates_reach_the_legacy_subscribers_only() -> None:
    app = make_app(subscriptions=True)
    recorder = UpdateRecorder()
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            ClientSession(
                client_end,
                name="t",
                version="1",
                versions=["2025-11-25"],
                handlers=[recorder],
            ) as client,
        ):
            typed = v2025_11_25.Client(client)
            await app.notify_resource_updated("mem://a")  # not subscribed yet
            await typed.subscribe(uri="mem://a")
            await app.notify_resource_updated("mem://a")
            while not recorder.updated:
                await recorder.arrived.wait()
            await typed.unsubscribe(uri="mem://a")
            await app.notify_resource_updated("mem://a")
            await typed.list_tools()  # a round trip: nothing more came
    assert recorder.updated == ["mem://a"]


@pytest.mark.anyio
async def test_a_2026_subscription_gets_updates_of_the_resources_it_named() -> None:
    app = make_app()
    client_end, server_end = memory_pair()
    received: list[dict[str, Any]] = []
    arrived = anyio.Event()

    async def on_message(method: str, params: bytes | None) -> bytes | None:
        nonlocal arrived
        received.append({"method": method, "params": json.loads(params or b"{}")})
        arrived.set()
        arrived = anyio.Event()
        return None

    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            Connection(client_end, on_message) as client,
            anyio.create_task_group() as tasks,
        ):
            params = listen_params()
            params["notifications"] = {
                "resourceSubscriptions": ["mem://a", "mem://unknown"]
            }
            tasks.start_soon(
                client.request, "subscriptions/listen", params, dict[str, Any]
            )
            while not received:
                await arrived.wait()
            acknowledged = received[0]["params"]
            assert acknowledged["notifications"] == {
                "resourceSubscriptions": ["mem://a"]
            }
            await app.notify_resource_updated("mem://b")  # not asked for
            await app.notify_resource_updated("mem://a")
            while len(received) < 2:
                await arrived.wait()
            update = received[1]
            assert update["method"] == "notifications/resources/updated"
            assert update["params"]["uri"] == "mem://a"
            assert update["params"]["_meta"] == acknowledged["_meta"]
            app.end_subscriptions()
    assert len(received) == 2

"""Bursts of registrations are told as one list_changed per list and client,
in both eras; `list_changed_debounce_s=None` tells each change at once.

A burst's notifications are counted when a marker (`notify_list_changed`,
always sent at once, after whatever the burst queued) arrives, so no test
waits for something not to happen."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.changes import ChangeFeed
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import memory_pair
from tests.unit.runtime.app.test_list_changed import (
    LIMIT,
    Recorder,
    legacy_client,
    listen_params,
    make_app,
    next_seen,
)

BURST = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def register_burst(app: App) -> None:
    for index in range(BURST):
        app.tool(f"tool{index}")(lambda: "x")
    app.prompt("another")(lambda: "p")
    app.resource("mem://b")(lambda: "b")
    app.remove_tool("tool0")


@pytest.mark.anyio
@pytest.mark.parametrize("window", [0, 0.05])
async def test_a_burst_is_one_notification_per_list(window: float) -> None:
    app = make_app(list_changed_debounce_s=window)
    recorder = Recorder()
    async with legacy_client(app, recorder):
        register_burst(app)
        await next_seen(recorder, 3)
        await app.notify_list_changed("tools")  # the marker
        await next_seen(recorder, 4)
    assert recorder.seen == ["tools", "prompts", "resources", "tools"]


@pytest.mark.anyio
async def test_changes_across_awaits_within_the_window_are_one() -> None:
    app = make_app(list_changed_debounce_s=0.5)
    recorder = Recorder()
    async with legacy_client(app, recorder):
        for index in range(5):
            app.tool(f"tool{index}")(lambda: "x")
            await anyio.lowlevel.checkpoint()
        await next_seen(recorder, 1)
        await app.notify_list_changed("prompts")
        await next_seen(recorder, 2)
    assert recorder.seen == ["tools", "prompts"]


@pytest.mark.anyio
async def test_without_debouncing_every_change_is_told() -> None:
    app = make_app(list_changed_debounce_s=None)
    recorder = Recorder()
    async with legacy_client(app, recorder):
        for index in range(BURST):
            app.tool(f"tool{index}")(lambda: "x")
        await next_seen(recorder, BURST)
        await app.notify_list_changed("prompts")
        await next_seen(recorder, BURST + 1)
    assert recorder.seen == ["tools"] * BURST + ["prompts"]


@pytest.mark.anyio
async def test_a_2026_subscription_gets_one_notification_per_burst() -> None:
    app = make_app()
    client_end, server_end = memory_pair()
    received: list[str] = []
    arrived = anyio.Event()

    async def on_message(method: str, params: bytes | None) -> bytes | None:
        nonlocal arrived
        meta = json.loads(params or b"{}").get("_meta", {})
        assert "io.modelcontextprotocol/subscriptionId" in meta
        received.append(method)
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
            register_burst(app)
            await until(3)
            await app.notify_list_changed("tools")  # the marker
            await until(4)
            app.end_subscriptions()
    assert received == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
    ]


@pytest.mark.anyio
async def test_changes_made_in_a_worker_thread_are_gathered_on_the_loop() -> None:
    app = make_app(list_changed_debounce_s=0.5)
    recorder = Recorder()
    async with legacy_client(app, recorder):

        def register_in_thread() -> None:
            for index in range(5):
                app.tool(f"tool{index}")(lambda: "x")

        await anyio.to_thread.run_sync(register_in_thread)
        await next_seen(recorder, 1)
        await app.notify_list_changed("prompts")
        await next_seen(recorder, 2)
    assert recorder.seen == ["tools", "prompts"]


def test_a_negative_window_is_refused() -> None:
    with pytest.raises(ValueError, match="debounce_s must be 0 or more"):
        ChangeFeed(-1)
    with pytest.raises(ValueError, match="debounce_s must be 0 or more"):
        App("x", list_changed_debounce_s=float("nan"))


def test_an_unknown_kind_fails_where_it_is_named() -> None:
    with pytest.raises(ValueError, match="unknown list"):
        ChangeFeed().changed("roots", legacy=True)


def test_a_flush_left_by_a_loop_that_ended_does_not_stop_the_next() -> None:
    app = make_app()

    async def change_and_leave() -> None:
        async with legacy_client(app):
            app.tool("quick")(lambda: "x")  # its flush never runs: the loop ends

    async def change_and_hear() -> list[str]:
        recorder = Recorder()
        async with legacy_client(app, recorder):
            app.tool("later")(lambda: "x")
            return await next_seen(recorder, 1)

    anyio.run(change_and_leave)
    assert anyio.run(change_and_hear) == ["tools"]

"""`RequestLogger`: one line per message, with duration and outcome."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.request_log import RequestLogger
from mcp_specgen_runtime.errors import RpcError


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ticking() -> Iterator[float]:
    now = 0.0
    while True:
        yield now
        now += 0.0025  # each reading 2.5 ms after the last


def make_app(**options: Any) -> App:
    app = App("demo", **options)

    @app.tool()
    def echo(message: str) -> str:
        return message

    @app.tool()
    def broken() -> str:
        raise RuntimeError("boom")

    @app.resource("greeting://hello")
    def hello() -> str:
        return "Hello!"

    return app


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_one_line_per_message_with_duration_and_outcome(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ticking()
    logger = RequestLogger(clock=lambda: next(clock))
    app = make_app(middleware=[logger])
    caplog.set_level(logging.INFO, logger="mcp_specgen_runtime.requests")
    async with Client(app, versions=[version]) as client:
        caplog.clear()
        await client.call_tool("echo", {"message": "hi"})
        await client.call_tool("broken", {})
        with pytest.raises(RpcError):
            await client.read_resource("greeting://nope")
    # notifications/initialized may be served after the clear: left out
    records = [
        r
        for r in caplog.records
        if r.name == logger.logger.name and " id=" in r.getMessage()
    ]
    lines = [r.getMessage() for r in records]
    assert len(lines) == 3
    assert lines[0].startswith("tools/call echo id=")
    assert lines[0].endswith(" 2.5 ms ok")
    assert lines[1].startswith("tools/call broken id=")
    assert lines[1].endswith(" 2.5 ms tool error")
    assert lines[2].startswith("resources/read greeting://nope id=")
    assert re.search(r" error -32\d{3} Resource not found$", lines[2])
    levels = [r.levelno for r in records]
    assert levels == [logging.INFO, logging.WARNING, logging.WARNING]


@pytest.mark.anyio
async def test_notifications_and_the_handshake_are_logged_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_app(middleware=[RequestLogger("my.requests")])
    caplog.set_level(logging.INFO, logger="my.requests")
    async with Client(app, versions=["2025-11-25"]):
        pass
    lines = [r.getMessage() for r in caplog.records if r.name == "my.requests"]
    assert lines[0].startswith("initialize id=") and lines[0].endswith(" ok")
    assert lines[1].startswith("notifications/initialized ")
    assert lines[1].endswith(" notification")


@pytest.mark.anyio
async def test_nothing_is_formatted_when_the_level_is_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="quiet.requests")
    app = make_app(middleware=[RequestLogger("quiet.requests")])
    async with Client(app, versions=["2026-07-28"]) as client:
        await client.call_tool("echo", {"message": "hi"})
    assert not [r for r in caplog.records if r.name == "quiet.requests"]


@pytest.mark.anyio
async def test_a_ping_is_answered_and_logged_as_such(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_app(middleware=[RequestLogger("ping.requests")])
    caplog.set_level(logging.INFO, logger="ping.requests")
    async with Client(app, versions=["2025-11-25"]) as client:
        await client.session.connection.request("ping", None, dict[str, Any])
    lines = [r.getMessage() for r in caplog.records if r.name == "ping.requests"]
    assert any(line.startswith("ping id=") and line.endswith(" ok") for line in lines)

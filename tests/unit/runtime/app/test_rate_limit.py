"""`RateLimit`: a token bucket per caller, refusing with a clear error."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.rate_limit import RATE_LIMITED, RateLimit
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports import memory_pair


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_app(limit: RateLimit) -> App:
    app = App("demo", middleware=[limit])

    @app.tool()
    def echo(message: str) -> str:
        return message

    return app


async def echo(client: Client) -> Any:
    return await client.call_tool("echo", {"message": "hi"})


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
async def test_a_burst_then_a_refusal_saying_when_to_retry(version: str) -> None:
    clock = Clock()
    app = make_app(RateLimit(rate=2, burst=3, clock=clock))
    async with Client(app, versions=[version]) as client:
        for _ in range(3):
            await echo(client)
        with pytest.raises(RpcError) as caught:
            await echo(client)
        clock.now += 0.5  # one token back
        await echo(client)
        with pytest.raises(RpcError):
            await echo(client)
    error = caught.value
    assert error.code == RATE_LIMITED
    assert error.message == (
        "Rate limit exceeded for tools/call: at most 2 requests a second "
        "(bursts of 3); retry in 500 ms"
    )
    assert error.data == {"retryAfterMs": 500}


@pytest.mark.anyio
async def test_each_connection_has_its_own_bucket() -> None:
    clock = Clock()
    app = make_app(RateLimit(rate=1, burst=1, clock=clock))
    async with (
        Client(app, versions=["2025-11-25"]) as first,
        Client(app, versions=["2025-11-25"]) as second,
    ):
        await echo(first)
        with pytest.raises(RpcError):
            await echo(first)
        await echo(second)  # another caller: a full bucket


@pytest.mark.anyio
async def test_callers_are_told_apart_by_the_key_given() -> None:
    clock = Clock()
    limit = RateLimit(rate=1, burst=1, key=lambda call: "everyone", clock=clock)
    app = make_app(limit)
    async with (
        Client(app, versions=["2026-07-28"]) as first,
        Client(app, versions=["2026-07-28"]) as second,
    ):
        await echo(first)
        with pytest.raises(RpcError):
            await echo(second)  # the same bucket


@pytest.mark.anyio
async def test_the_handshake_is_not_counted() -> None:
    clock = Clock()
    app = make_app(RateLimit(rate=1, burst=1, clock=clock))
    async with Client(app, versions=["2025-11-25"]) as client:
        await echo(client)  # initialize and the notification spent nothing


def test_a_limit_must_let_something_through() -> None:
    with pytest.raises(ValueError):
        RateLimit(rate=0, burst=1)
    with pytest.raises(ValueError):
        RateLimit(rate=1, burst=0)


async def call_as(app: App, principal: str, times: int) -> list[str]:
    """`times` echo calls on a fresh connection authenticated as
    `principal`; each outcome, "ok" or the error code."""
    client_end, server_end = memory_pair()
    server_end.principal_of = lambda _id: principal  # type: ignore[attr-defined]
    outcomes: list[str] = []
    async with (
        Connection(server_end, app.session().handler()),
        ClientSession(
            client_end, name="t", version="1", versions=["2026-07-28"]
        ) as session,
    ):
        for _ in range(times):
            try:
                await session.request_raw(
                    "tools/call", {"name": "echo", "arguments": {"message": "x"}}
                )
                outcomes.append("ok")
            except RpcError as exc:
                outcomes.append(str(exc.code))
    return outcomes


@pytest.mark.anyio
async def test_an_authenticated_caller_has_one_bucket_across_connections() -> None:
    clock = Clock()
    app = make_app(RateLimit(rate=1, burst=2, clock=clock))
    assert await call_as(app, "alice", 1) == ["ok"]
    assert await call_as(app, "alice", 2) == ["ok", str(RATE_LIMITED)]
    assert await call_as(app, "bob", 2) == ["ok", "ok"]

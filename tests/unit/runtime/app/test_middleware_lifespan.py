"""Middleware sees the app's lifespan value through `call.ctx`, like tools do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App, Call, CallNext


def test_a_middleware_reads_the_lifespan_value_from_its_context() -> None:
    seen: list[Any] = []

    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[str]:
        yield "the pool"

    app = App("lifespan-and-middleware", lifespan=lifespan)

    @app.on("tools/call")
    async def remember(call: Call, call_next: CallNext) -> Any:
        assert call.ctx is not None
        seen.append(call.ctx.lifespan)
        return await call_next(call)

    @app.tool()
    async def echo(message: str) -> str:
        return message

    async def main() -> None:
        async with Client(app) as client:
            await client.call_tool("echo", {"message": "hi"})

    anyio.run(main)
    assert seen == ["the pool"]

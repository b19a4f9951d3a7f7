"""Fakes for the HTTP client tests: an `HttpClientTransport` or an httpx
client whose HTTP requests a handler answers (`httpx.MockTransport`), for
answers a real server never gives."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import msgspec

from mcp_specgen_runtime.transports.http.client import HttpClientTransport

MockHandler = Callable[[httpx.Request], Awaitable[httpx.Response]]


@asynccontextmanager
async def mocked(
    handler: MockHandler, **options: Any
) -> AsyncIterator[HttpClientTransport]:
    """A transport whose HTTP requests `handler` answers."""
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with (
        client,
        HttpClientTransport("http://mcp.test/mcp", http_client=client, **options) as t,
    ):
        yield t


def request(request_id: int, method: str = "tools/list") -> bytes:
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}}
    )


async def answer_of(transport: HttpClientTransport, message: bytes) -> Any:
    await transport.send(message)
    with anyio.fail_after(5):
        return msgspec.json.decode(await transport.receive())


@asynccontextmanager
async def mock_client(handler: MockHandler) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        yield client

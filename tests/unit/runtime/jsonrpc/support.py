"""Shared pieces of the JSON-RPC engine tests: an in-memory peer speaking raw
JSON, serving and connected pairs, an echo server."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcp_specgen_runtime.errors import (
    MethodNotFoundError,
)
from mcp_specgen_runtime.jsonrpc.connection import (
    Connection,
)
from mcp_specgen_runtime.transports import MemoryTransport, memory_pair
from mcp_specgen_types import v2025_11_25 as rev

LIMIT = 5.0
"""Seconds any one test may take."""

Route = Callable[[bytes | None], Awaitable[bytes | None]]


def routes(**table: Route) -> Callable[[str, bytes | None], Awaitable[bytes | None]]:
    """A handler serving the given methods (`tools_call` → `tools/call`)."""
    by_method = {name.replace("__", "/"): route for name, route in table.items()}

    async def handle(method: str, params: bytes | None) -> bytes | None:
        route = by_method.get(method)
        if route is None:
            raise MethodNotFoundError(method)
        return await route(params)

    return handle


async def echo(params: bytes | None) -> bytes:
    return params or b"{}"


class Peer:
    """The far end of a pair, speaking raw JSON."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    async def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self.transport.send(data)

    async def receive(self) -> Any:
        return json.loads(await self.transport.receive())

    async def call(self, message: Any) -> Any:
        await self.send(message)
        return await self.receive()

    async def assert_alive(self, request_id: int = 999) -> None:
        """Ping; the very next message must be the answer (nothing else was sent)."""
        reply = await self.call(request(request_id, "ping"))
        assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {}}


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


@asynccontextmanager
async def serving(
    handler: Callable[[str, bytes | None], Awaitable[bytes | None]] | None,
    **options: Any,
) -> AsyncGenerator[tuple[Connection, Peer]]:
    ours, theirs = memory_pair()
    try:
        with anyio.fail_after(LIMIT):
            async with Connection(ours, handler, **options) as connection:
                yield connection, Peer(theirs)
    finally:
        await theirs.aclose()


@asynccontextmanager
async def connected(
    server: Callable[[str, bytes | None], Awaitable[bytes | None]] | None,
    client: Callable[[str, bytes | None], Awaitable[bytes | None]] | None = None,
) -> AsyncGenerator[tuple[Connection, Connection]]:
    a, b = memory_pair()
    with anyio.fail_after(LIMIT):
        async with Connection(a, server) as left, Connection(b, client) as right:
            yield left, right


class EchoServer(rev.ServerHandlers):
    async def tools_call(self, params: rev.CallToolRequestParams) -> rev.CallToolResult:
        text = str((params.arguments or {}).get("message", ""))
        return rev.CallToolResult(content=[rev.TextContent(text=text)])

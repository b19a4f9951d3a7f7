"""`ServerSession`: notifications a handler sends fit the negotiated revision
(what it lacks is dropped), as its results do; at the revision the handler
was written for they go as sent.

The legacy handler is written against 2025-11-25 and reports progress with a
`message`, which 2024-11-05 does not define. The modern one, written against
2026-07-28, sends a progress with a key no revision defines (2026-07-28 and
draft define the same notifications)."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from mcp_specgen_runtime.jsonrpc.connection import Connection, current_request
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import v2025_11_25, v2026_07_28

LIMIT = 5.0
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28", "draft")
CLIENT_INFO = {"name": "notification-tests", "version": "0.0.0"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Reporting(v2025_11_25.ServerHandlers):
    async def tools_call(self, params: Any) -> Any:
        await current_request().report_progress(1, 2, "half way")
        return v2025_11_25.CallToolResult(content=[])


async def progress_at(version: str) -> dict[str, Any]:
    """The params of the progress a tool call reports at `version`."""
    served = ServerSession([Reporting()], name="n", version="v", versions=list(LEGACY))
    seen: list[dict[str, Any]] = []

    async def incoming(method: str, params: bytes | None) -> None:
        assert method == "notifications/progress" and params is not None
        seen.append(msgspec.json.decode(params))

    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, served.handler()),
            Connection(client_end, incoming) as client,
        ):
            initialize = {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            }
            await client.request("initialize", initialize, Any)
            call = {"name": "t", "arguments": {}, "_meta": {"progressToken": 7}}
            await client.request("tools/call", call, Any)
    (progress,) = seen
    return progress


@pytest.mark.anyio
async def test_progress_at_2024_11_05_has_no_message() -> None:
    assert await progress_at("2024-11-05") == {
        "progressToken": 7,
        "progress": 1,
        "total": 2,
    }


@pytest.mark.anyio
@pytest.mark.parametrize("version", LEGACY[1:])
async def test_progress_from_2025_03_26_keeps_its_message(version: str) -> None:
    assert await progress_at(version) == {
        "progressToken": 7,
        "progress": 1,
        "total": 2,
        "message": "half way",
    }


class Modern(v2026_07_28.ServerHandlers):
    async def tools_call(self, params: Any) -> Any:
        progress = {"progressToken": 7, "progress": 1, "nobodys": "key"}
        await current_request().notify("notifications/progress", progress)
        return v2026_07_28.CallToolResult(content=[])


async def modern_progress_at(version: str) -> dict[str, Any]:
    """The params of the progress a modern tool call sends at `version`."""
    served = ServerSession([Modern()], name="n", version="v", versions=list(MODERN))
    seen: list[dict[str, Any]] = []

    async def incoming(method: str, params: bytes | None) -> None:
        assert method == "notifications/progress" and params is not None
        seen.append(msgspec.json.decode(params))

    client_end, server_end = memory_pair()
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": 7,
    }
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, served.handler()),
            Connection(client_end, incoming) as client,
        ):
            call = {"name": "t", "arguments": {}, "_meta": meta}
            await client.request("tools/call", call, Any)
    (progress,) = seen
    return progress


@pytest.mark.anyio
async def test_a_modern_notification_fits_an_adapted_revision() -> None:
    assert await modern_progress_at("draft") == {"progressToken": 7, "progress": 1}


@pytest.mark.anyio
async def test_a_notification_goes_as_sent_at_the_handlers_own_revision() -> None:
    assert await modern_progress_at("2026-07-28") == {
        "progressToken": 7,
        "progress": 1,
        "nobodys": "key",
    }

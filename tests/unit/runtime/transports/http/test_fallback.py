"""`fallback`: servers of the HTTP+SSE era. `LegacyServerError`, and the seam
`connect_http` falls back through (`legacy_sse.LegacySseClientTransport`);
the end-to-end fallback to our own `LegacySseApp` is in test_http_client.py."""

from __future__ import annotations

import sys
import types
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.http.client import LegacyServerError, connect_http
from mcp_specgen_types import v2025_11_25
from tests.unit.runtime.session_programs.echo_session import session
from tests.unit.runtime.transports.http.http_mocks import mock_client

LIMIT = 20.0
"""Seconds any one test may take."""
CLIENT = {"name": "http-client-tests", "version": "0.0.1"}
LEGACY_SSE_MODULE = "mcp_specgen_runtime.transports.http.legacy_sse"
MODERN = "2026-07-28"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


async def not_found(request: httpx.Request) -> httpx.Response:
    """A server with nothing at the URL for POST (an HTTP+SSE server's SSE URL)."""
    return httpx.Response(404, text="Not Found")


@pytest.mark.anyio
async def test_initialize_refused_with_404_raises_legacy_server_error() -> None:
    async with mock_client(not_found) as client:
        with pytest.raises(LegacyServerError) as raised:
            async with connect_http(
                "http://mcp.test/sse",
                **CLIENT,
                http_client=client,
                legacy_sse_fallback=False,
            ):
                pytest.fail("connected to nothing")
    assert raised.value.status == 404
    assert raised.value.url == "http://mcp.test/sse"


@pytest.mark.anyio
async def test_without_legacy_sse_the_fallback_reports_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, LEGACY_SSE_MODULE, types.ModuleType("empty"))
    async with mock_client(not_found) as client:
        with pytest.raises(LegacyServerError, match="LegacySseClientTransport"):
            async with connect_http(
                "http://mcp.test/sse", **CLIENT, http_client=client
            ):
                pytest.fail("connected to nothing")


@pytest.mark.anyio
async def test_the_fallback_uses_legacy_sse_client_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`legacy_sse.LegacySseClientTransport(url, http_client=...)` is built at
    the same URL, with the same client, and only legacy versions negotiated."""
    made: list[tuple[str, httpx.AsyncClient]] = []
    client_end, server_end = memory_pair()

    def factory(url: str, *, http_client: httpx.AsyncClient) -> Any:
        made.append((url, http_client))
        return client_end

    fake = types.ModuleType(LEGACY_SSE_MODULE)
    fake.__dict__["LegacySseClientTransport"] = factory
    monkeypatch.setitem(sys.modules, LEGACY_SSE_MODULE, fake)
    with anyio.fail_after(LIMIT):
        async with (
            mock_client(not_found) as client,
            Connection(server_end, session("2025-11-25", MODERN).handler()),
            connect_http("http://mcp.test/sse", **CLIENT, http_client=client) as s,
        ):
            assert made == [("http://mcp.test/sse", client)]
            assert s.protocol_version == "2025-11-25"
            echoed = await v2025_11_25.Client(s).call_tool(
                name="echo", arguments={"message": "old"}
            )
            assert texts(echoed) == ["old"]

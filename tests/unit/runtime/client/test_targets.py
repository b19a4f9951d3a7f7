"""What `Client` connects to, and how it negotiates with each target: a
target known to be legacy gets `initialize` without a `server/discover` first."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime import Client, VersionCache
from mcp_specgen_runtime._version import __version__
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.client.targets import cache_key_of
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import MemoryTransport, memory_pair
from mcp_specgen_types import latest

LIMIT = 20.0
SILENT = [sys.executable, str(Path(__file__).with_name("silent_server.py"))]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def echo_app() -> App:
    app = App("echo")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    return app


async def methods_seen(client: Client) -> list[str]:
    block = (await client.call_tool("seen")).content[0]
    assert isinstance(block, latest.TextContent)
    return block.text.split(",")


@pytest.mark.anyio
async def test_a_target_known_to_be_legacy_is_not_probed() -> None:
    cache = VersionCache()
    with anyio.fail_after(LIMIT):
        async with Client(SILENT, cache=cache, probe_timeout=0.5) as client:
            assert client.negotiated.era == "legacy"
            first = await methods_seen(client)
        # The same command as a string is the same target.
        async with Client(shlex.join(SILENT), cache=cache) as client:
            second = await methods_seen(client)
    assert first == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert second == ["initialize", "notifications/initialized", "tools/call"]


@pytest.mark.anyio
async def test_a_server_session_or_a_transport_is_a_target() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(echo_app().session()) as client:
            assert client.negotiated.era == "modern"
        client_end, server_end = memory_pair()
        async with (
            Connection(server_end, echo_app().session().handler()),
            Client(client_end, versions=["2025-06-18"]) as client,
        ):
            assert client.protocol_version == "2025-06-18"
            assert [t.name for t in await client.list_all_tools()] == ["echo"]


@pytest.mark.anyio
async def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError, match="Client target"):
        async with Client(42):  # type: ignore[arg-type]
            pass


def test_the_cache_key_is_the_command_line_or_the_url() -> None:
    assert cache_key_of(["python", "my server.py"]) == "python 'my server.py'"
    assert cache_key_of("python 'my server.py'") == "python 'my server.py'"
    assert cache_key_of("https://example.com/mcp") == "https://example.com/mcp"
    assert cache_key_of(echo_app()) is None


class Recorder:
    """A transport that keeps what it sends."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[Any] = []

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
async def test_the_client_names_itself_mcp_codegen_by_default() -> None:
    client_end, server_end = memory_pair()
    recorder = Recorder(client_end)
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, echo_app().session().handler()),
            Client(recorder, versions=["2025-11-25"]),
        ):
            pass
    info = recorder.sent[0]["params"]["clientInfo"]
    assert info["name"] == "mcp-specgen"
    assert info["version"] == __version__

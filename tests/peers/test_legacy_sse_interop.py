"""The HTTP+SSE transport of 2024-11-05 against the official SDKs.

(a) The TypeScript SDK client (npm `@modelcontextprotocol/sdk@1.32.2`,
    `SSEClientTransport`, `programs/ts_sdk_sse_client.mjs`) against our
    `LegacySseApp`, served by uvicorn in this process. The client GETs /sse,
    resolves the relative `endpoint` event against it and POSTs there. It runs
    the initialize handshake offering 2025-11-25, so a 2024-11-05-only session
    answers 2024-11-05 and a session of every legacy revision 2025-11-25. It
    lists the tools, calls `echo` and an unknown tool, sends `{name: 42}`,
    pings, and closes the stream, which ends our session.
(b) Our `connect_legacy_sse` against the Python SDK's SSE server (PyPI
    `mcp==2.3.0`, `MCPServer.sse_app()`, `programs/python_sdk_sse_server.py`,
    run with the peer venv's python). Its endpoint is
    `/messages/?session_id=<uuid hex>`. An unknown tool is a `CallToolResult`
    with `isError: true` ("Unknown tool: <name>"), and `{name: 42}` gets
    -32602 "Invalid request parameters".
(c) Our `connect_legacy_sse` against the TypeScript SDK's `SSEServerTransport`
    on node's http (`programs/ts_sdk_sse_server.mjs`). Its endpoint is
    `/messages?sessionId=<uuid>`. An unknown tool is a `CallToolResult` with
    `isError: true` ("MCP error -32602: Tool <name> not found"), and
    `{name: 42}` gets -32603 whose message is the zod issue list (the peer
    quirk `test_client_interop` also records over stdio).

Both SDK servers print their bound port (port 0: a free one) on stdout, so
no port is guessed. They are terminated (then killed) at the end of each test.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from benchmarks import peers
from benchmarks._common import REPO
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports.http.legacy_sse import (
    LegacySseApp,
    connect_legacy_sse,
)
from mcp_specgen_types import v2024_11_05, v2025_11_25
from tests.unit.runtime.session_programs.echo_session import (
    DESCRIPTION,
    INPUT_SCHEMA,
    INSTRUCTIONS,
    NAME,
    VERSION,
    session,
)
from tests.unit.runtime.transports.http.test_legacy_sse import serving

PROGRAMS = Path(__file__).parent / "programs"
TS_CLIENT = PROGRAMS / "ts_sdk_sse_client.mjs"
TS_SERVER = PROGRAMS / "ts_sdk_sse_server.mjs"
PYTHON_SERVER = PROGRAMS / "python_sdk_sse_server.py"

LIMIT = 60.0
"""Seconds one test may take (the TypeScript client gives up on a request
after 20; the Python SDK server takes about a second to start)."""
MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
CLIENT = {"name": "mcp-codegen-legacy-sse-interop", "version": "0.0.1"}
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn and the engine's request tasks need asyncio


@pytest.fixture(scope="module")
def node() -> Path:
    peers.ensure_node_peers(print)
    return peers.node_executable()


@pytest.fixture(scope="module")
def peer_python() -> Path:
    return peers.peer_python(print)


# --- (a) the TypeScript SDK client against our server --------------------------


def error(code: int, message: str) -> dict[str, Any]:
    """An error outcome as the SDK's `McpError` presents it."""
    return {
        "error": {"code": code, "message": f"MCP error {code}: {message}", "data": None}
    }


async def run_ts_client(node: Path, app: LegacySseApp) -> dict[str, Any]:
    """Serve `app`, run the TypeScript client against it; its report, once the
    session it opened has ended."""
    async with serving(app) as base:
        done = await anyio.run_process(
            [str(node), str(TS_CLIENT), f"{base}/sse", MESSAGE],
            cwd=REPO,
            check=False,
        )
        assert done.stderr == b""
        assert done.returncode == 0, done.stdout
        while True:  # the client's close ends the session
            if not app.sessions:
                break
            await anyio.sleep(0.01)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def assert_ts_report(report: dict[str, Any], base_version: str) -> None:
    assert report["connected"] is True
    assert report["protocol_version"] == base_version
    assert "/messages?session_id=" in report["endpoint"]
    assert report["server_info"] == {"name": NAME, "version": VERSION}
    assert report["capabilities"] == {"tools": {}}
    assert report["instructions"] == INSTRUCTIONS
    assert report["tools"] == [
        {"name": "echo", "description": DESCRIPTION, "inputSchema": INPUT_SCHEMA}
    ]
    echoed: dict[str, Any] = {
        "content": [{"type": "text", "text": MESSAGE}],
        "isError": False,
    }
    if base_version == "2025-11-25":
        echoed["structuredContent"] = {"result": MESSAGE}
    assert report["echo"] == {"result": echoed}
    assert report["unknown_tool"] == error(-32602, "Unknown tool: no-such-tool")
    assert report["bad_params"] == error(
        -32602, "Invalid params for tools/call: Expected `str`, got `int` - at `$.name`"
    )
    assert report["ping"] == {"result": {}}


@pytest.mark.anyio
async def test_ts_sdk_sse_client_against_a_2024_11_05_session(node: Path) -> None:
    with anyio.fail_after(LIMIT):
        report = await run_ts_client(node, LegacySseApp(session("2024-11-05")))
    assert_ts_report(report, "2024-11-05")


@pytest.mark.anyio
async def test_ts_sdk_sse_client_gets_its_newest_version_over_sse(node: Path) -> None:
    with anyio.fail_after(LIMIT):
        report = await run_ts_client(node, LegacySseApp(session(*LEGACY)))
    assert_ts_report(report, "2025-11-25")


# --- (b), (c) our client against the SDK servers --------------------------------


@asynccontextmanager
async def peer_server(command: Sequence[str]) -> AsyncGenerator[str]:
    """Start a server program printing its port; its SSE URL. Terminated (then
    killed) on the way out."""
    process: Process = await anyio.open_process(
        [*command], cwd=REPO, stdin=subprocess.DEVNULL, stderr=None
    )
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(64)
        yield f"http://127.0.0.1:{int(line)}/sse"
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()


async def assert_echo(
    client: ClientSession, version: str, unknown_tool: str, bad_params: RpcError
) -> None:
    """What our client gets from an SDK echo server at `version`."""
    assert client.protocol_version == version
    typed: Any = (v2024_11_05 if version == "2024-11-05" else v2025_11_25).Client(
        client
    )
    tools = await typed.list_tools()
    assert [tool.name for tool in tools.tools] == ["echo"]
    assert tools.tools[0].input_schema.required == ["message"]
    result = await typed.call_tool(name="echo", arguments={"message": MESSAGE})
    assert result.content[0].text == MESSAGE
    refused = await typed.call_tool(name="no-such-tool", arguments={})
    assert refused.is_error is True
    assert refused.content[0].text == unknown_tool
    with pytest.raises(RpcError) as caught:
        await client.request("tools/call", {"name": 42}, dict)
    assert caught.value.code == bad_params.code
    assert bad_params.message in caught.value.message
    await typed.ping()


@pytest.mark.anyio
@pytest.mark.parametrize("versions", [None, LEGACY])
async def test_our_client_against_the_python_sdk_sse_server(
    peer_python: Path, versions: tuple[str, ...] | None
) -> None:
    options = {} if versions is None else {"versions": versions}
    with anyio.fail_after(LIMIT):
        async with (
            peer_server([str(peer_python), str(PYTHON_SERVER)]) as url,
            connect_legacy_sse(url, **CLIENT, **options) as client,
        ):
            assert client.server_info.name == "python-sdk-sse-echo"
            assert client.server_capabilities["tools"] == {"listChanged": False}
            transport: Any = client.connection.transport
            assert "/messages/?session_id=" in transport.endpoint
            await assert_echo(
                client,
                "2024-11-05" if versions is None else "2025-11-25",
                "Unknown tool: no-such-tool",
                RpcError(-32602, "Invalid request parameters"),
            )


@pytest.mark.anyio
@pytest.mark.parametrize("versions", [None, LEGACY])
async def test_our_client_against_the_ts_sdk_sse_server(
    node: Path, versions: tuple[str, ...] | None
) -> None:
    options = {} if versions is None else {"versions": versions}
    with anyio.fail_after(LIMIT):
        async with (
            peer_server([str(node), str(TS_SERVER)]) as url,
            connect_legacy_sse(url, **CLIENT, **options) as client,
        ):
            assert client.server_info.name == "typescript-sdk-sse-echo"
            assert client.server_capabilities["tools"] == {"listChanged": True}
            transport: Any = client.connection.transport
            assert "/messages?sessionId=" in transport.endpoint
            await assert_echo(
                client,
                "2024-11-05" if versions is None else "2025-11-25",
                "MCP error -32602: Tool no-such-tool not found",
                RpcError(-32603, "expected string, received number"),
            )

"""`connect_http` (our client) against real Streamable HTTP servers.

The servers, installed pinned by `benchmarks.peers`, each started once per
module on a free port (they print `ready PORT`) and killed at the end:

- ts-sdk: `programs/ts_sdk_http_server.mjs`, npm `@modelcontextprotocol/sdk`
  1.32.2's `McpServer` + `StreamableHTTPServerTransport` with session ids.
  It speaks the four handshake revisions; the `server/discover` probe POSTed
  without a session gets 400 with -32000 "Bad Request: No valid session ID
  provided", so our client falls back to `initialize` (default 2025-11-25).
  Run three ways: SSE answers (the SDK's default), JSON answers (`--json`),
  and resumable (`--resumable`: an event store, priming events with ids,
  and `slow_echo` closing its request's stream mid-call so our client must
  resume it with GET and `Last-Event-ID`).
- python-sdk: `programs/python_sdk_http_server.py`, PyPI `mcp==2.3.0`'s
  `MCPServer.streamable_http_app()`. It speaks the four handshake revisions
  (stateful sessions, GET stream, DELETE) and 2026-07-28 (answers
  `server/discover`), so the default is modern. Run with SSE answers and
  with JSON answers (`--json`).

Both have `echo(message)` (the message unchanged) and `slow_echo(message)`
(one progress notification, then the message after 300 ms).

What the peers answer on the error paths, as pinned below: an unknown tool
is an `isError` result (ts-sdk "MCP error -32602: Tool <name> not found",
python-sdk "Unknown tool: <name>"); `tools/call` with `{"name": 42}` is an
error response: ts-sdk -32603 (a zod issue list), python-sdk -32602 up to
2025-11-25 and, at 2026-07-28, 400 with -32020 `HeaderMismatch` (our client
sends no `Mcp-Name` for a name that is not a string).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from benchmarks import peers
from mcp_specgen_runtime.errors import NegotiationError, RpcError
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports.http.client import (
    HttpClientTransport,
    LegacyServerError,
    SessionExpiredError,
    connect_http,
)
from mcp_specgen_types import v2025_11_25, v2026_07_28

PROGRAMS = Path(__file__).parent / "programs"
TS_SERVER = PROGRAMS / "ts_sdk_http_server.mjs"
PYTHON_SERVER = PROGRAMS / "python_sdk_http_server.py"

LIMIT = 30.0
"""Seconds any one test may take."""
START_TIMEOUT = 30.0
"""Seconds a server may take to print its ready line."""
MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
CLIENT = {"name": "mcp-codegen-http-client-interop", "version": "0.0.1"}

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"

TS = "ts-sdk"
PYTHON = "python-sdk"


@dataclass(frozen=True)
class Peer:
    """A server under test and what it is known to answer."""

    name: str
    """serverInfo.name"""
    versions: tuple[str, ...]
    default: str
    """What an unrestricted client negotiates."""
    unknown_tool: str
    bad_name_code: int
    """The error code of `tools/call` with `{"name": 42}` (legacy revisions)."""


PEERS = {
    TS: Peer(
        "typescript-sdk-http-echo",
        LEGACY,
        "2025-11-25",
        "MCP error -32602: Tool no-such-tool not found",
        -32603,
    ),
    PYTHON: Peer(
        "python-sdk-http-echo",
        (*LEGACY, MODERN),
        MODERN,
        "Unknown tool: no-such-tool",
        -32602,
    ),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------
# Servers
# --------------------------------------------------------------------------


def peer_env() -> dict[str, str]:
    """This environment without anything that would steer the peer venv's python."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


@contextlib.contextmanager
def running(argv: list[str], path: str = "/mcp") -> Iterator[str]:
    """Start a server printing `ready PORT`; its URL. Killed on exit."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=peer_env(),
    )
    try:
        assert proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT
        line = b""
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{argv} printed no ready line in time"
            assert selector.select(remaining), f"{argv} printed no ready line"
            chunk = os.read(proc.stdout.fileno(), 256)
            assert chunk, f"{argv} exited with {proc.wait()}"
            line += chunk
        selector.close()
        word, port = line.split(b"\n", 1)[0].decode().split()
        assert word == "ready"
        yield f"http://127.0.0.1:{int(port)}{path}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    """The URL of every server, by peer and mode."""
    python = peers.ensure_python_peers(print)
    peers.ensure_node_peers(print)
    node = str(peers.node_executable())
    servers = {
        TS: [node, str(TS_SERVER), "0"],
        f"{TS}-json": [node, str(TS_SERVER), "0", "--json"],
        f"{TS}-resumable": [node, str(TS_SERVER), "0", "--resumable"],
        PYTHON: [str(python), str(PYTHON_SERVER), "0"],
        f"{PYTHON}-json": [str(python), str(PYTHON_SERVER), "0", "--json"],
    }
    with contextlib.ExitStack() as stack:
        found = {
            name: stack.enter_context(running(argv)) for name, argv in servers.items()
        }
        sse = [str(python), str(PYTHON_SERVER), "0", "--sse"]
        found[f"{PYTHON}-sse"] = stack.enter_context(running(sse, "/sse"))
        yield found


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


@dataclass
class Recorder:
    """An httpx client recording (method, headers, JSON body) of each request."""

    sent: list[tuple[str, dict[str, str], Any]] = field(
        default_factory=list[tuple[str, dict[str, str], Any]]
    )

    async def hook(self, request: httpx.Request) -> None:
        body = json.loads(request.content) if request.content else None
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.sent.append((request.method, headers, body))

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(event_hooks={"request": [self.hook]}, timeout=20)

    def rpc_methods(self) -> list[str | None]:
        return [
            body.get("method") if isinstance(body, dict) else None
            for method, _, body in self.sent
            if method == "POST"
        ]


@asynccontextmanager
async def connected(
    url: str, recorder: Recorder | None = None, **options: Any
) -> AsyncIterator[ClientSession]:
    recorder = recorder or Recorder()
    async with (
        recorder.client() as client,
        connect_http(url, **CLIENT, http_client=client, **options) as session,
    ):
        yield session


class Progress1125(v2025_11_25.ClientHandlers):
    def __init__(self, seen: list[float]) -> None:
        self.seen = seen

    async def notifications_progress(
        self, params: v2025_11_25.ProgressNotificationParams
    ) -> None:
        self.seen.append(params.progress)


class Progress2026(v2026_07_28.ClientHandlers):
    def __init__(self, seen: list[float]) -> None:
        self.seen = seen

    async def notifications_progress(
        self, params: v2026_07_28.ProgressNotificationParams
    ) -> None:
        self.seen.append(params.progress)


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def transport_of(session: ClientSession) -> HttpClientTransport:
    transport = session.connection.transport
    assert isinstance(transport, HttpClientTransport)
    return transport


# --------------------------------------------------------------------------
# 1. Every revision each peer speaks, SSE and JSON answers
# --------------------------------------------------------------------------

CASES = [
    pytest.param(peer, mode, allowed, id=f"{peer}{mode}-{allowed or 'default'}")
    for peer in PEERS
    for mode in ("", "-json")
    for allowed in (None, *PEERS[peer].versions)
]


@pytest.mark.anyio
@pytest.mark.parametrize(("peer_id", "mode", "allowed"), CASES)
async def test_echo_at_each_revision(
    urls: dict[str, str], peer_id: str, mode: str, allowed: str | None
) -> None:
    """Negotiate, list tools, call echo, and call slow_echo asking for
    progress (which SSE answers deliver before the result)."""
    peer = PEERS[peer_id]
    negotiated = allowed or peer.default
    seen: list[float] = []
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(
            urls[peer_id + mode],
            recorder,
            versions=None if allowed is None else [allowed],
            handlers=[Progress1125(seen), Progress2026(seen)],
        ) as session:
            transport = transport_of(session)
            assert session.protocol_version == negotiated
            assert session.server_info.name == peer.name
            client = session.package.Client(session)
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == {"echo", "slow_echo"}
            echoed = await client.call_tool(name="echo", arguments={"message": MESSAGE})
            assert texts(echoed) == [MESSAGE]
            slow = await session.request(
                "tools/call",
                {
                    "name": "slow_echo",
                    "arguments": {"message": "slow"},
                    "_meta": {"progressToken": "p-1"},
                },
                session.package.METHODS["tools/call"].result,
            )
            assert texts(slow) == ["slow"]
            if negotiated == MODERN:
                assert session.era == "modern"
                assert transport.session_id is None
            else:
                assert session.era == "legacy"
                assert transport.session_id is not None
                assert transport.protocol_version == negotiated
    if mode == "":
        assert seen == [1]
    sent = recorder.sent
    if negotiated == MODERN:
        assert {method for method, _, _ in sent} == {"POST"}
        for _, headers, body in sent:
            assert headers["mcp-method"] == body["method"]
            assert headers["mcp-protocol-version"] == MODERN
    else:
        assert sent[-1][0] == "DELETE"
        assert "GET" in {method for method, _, _ in sent}  # the standalone stream
        initialize = next(i for i, (_, _, b) in enumerate(sent) if _is(b, "initialize"))
        for method, headers, _ in sent[initialize + 1 :]:
            assert headers["mcp-session-id"] == transport.session_id, method
            assert headers["mcp-protocol-version"] == negotiated, method
    if peer_id == TS and allowed is None:
        assert recorder.rpc_methods()[:2] == ["server/discover", "initialize"]


def _is(body: Any, method: str) -> bool:
    return isinstance(body, dict) and body.get("method") == method


@pytest.mark.anyio
async def test_a_modern_only_client_cannot_reach_the_typescript_sdk(
    urls: dict[str, str],
) -> None:
    recorder = Recorder()
    with anyio.fail_after(LIMIT), pytest.raises(NegotiationError):
        async with connected(urls[TS], recorder, versions=[MODERN]):
            pytest.fail("negotiated a version the server does not speak")
    assert recorder.rpc_methods() == ["server/discover"]


# --------------------------------------------------------------------------
# 2. Error paths
# --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("peer_id", "allowed"),
    [(TS, "2025-11-25"), (PYTHON, "2025-11-25"), (PYTHON, MODERN)],
)
async def test_errors(urls: dict[str, str], peer_id: str, allowed: str) -> None:
    """Unknown tool: an isError result; a non-string tool name: an error
    response (for python-sdk at 2026, 400 HeaderMismatch mapped to it)."""
    peer = PEERS[peer_id]
    with anyio.fail_after(LIMIT):
        async with connected(urls[peer_id], versions=[allowed]) as session:
            client = session.package.Client(session)
            unknown = await client.call_tool(name="no-such-tool", arguments={})
            assert unknown.is_error is True
            assert texts(unknown) == [peer.unknown_tool]
            with pytest.raises(RpcError) as raised:
                await session.request(
                    "tools/call",
                    {"name": 42},
                    session.package.METHODS["tools/call"].result,
                )
            expected = -32020 if allowed == MODERN else peer.bad_name_code
            assert raised.value.code == expected
            echoed = await client.call_tool(name="echo", arguments={"message": "ok"})
            assert texts(echoed) == ["ok"]


# --------------------------------------------------------------------------
# 3. Sessions: expiry (404), re-initialization, DELETE, resumption
# --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("peer_id", list(PEERS))
async def test_a_deleted_session_is_expired_then_renegotiated(
    urls: dict[str, str], peer_id: str
) -> None:
    """The session is DELETEd behind the client's back: the next request
    raises SessionExpiredError; `negotiate()` starts a new session."""
    with anyio.fail_after(LIMIT):
        async with connected(urls[peer_id], versions=["2025-11-25"]) as session:
            transport = transport_of(session)
            first = transport.session_id
            assert first is not None
            async with httpx.AsyncClient() as other:
                gone = await other.delete(
                    urls[peer_id],
                    headers={
                        "Mcp-Session-Id": first,
                        "MCP-Protocol-Version": "2025-11-25",
                    },
                )
                assert gone.status_code == 200
            client = v2025_11_25.Client(session)
            with pytest.raises(SessionExpiredError):
                await client.list_tools()
            await session.negotiate()
            assert transport.session_id not in (None, first)
            echoed = await client.call_tool(name="echo", arguments={"message": "x"})
            assert texts(echoed) == ["x"]


@pytest.mark.anyio
@pytest.mark.parametrize("peer_id", list(PEERS))
async def test_reinitialize_replays_the_handshake(
    urls: dict[str, str], peer_id: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(
            urls[peer_id], recorder, versions=["2025-06-18"], reinitialize=True
        ) as session:
            transport = transport_of(session)
            first = transport.session_id
            async with httpx.AsyncClient() as other:
                await other.delete(
                    urls[peer_id],
                    headers={
                        "Mcp-Session-Id": first or "",
                        "MCP-Protocol-Version": "2025-06-18",
                    },
                )
            echoed = await v2025_11_25.Client(session).call_tool(
                name="echo", arguments={"message": "again"}
            )
            assert texts(echoed) == ["again"]
            assert transport.session_id not in (None, first)
    assert recorder.rpc_methods().count("initialize") == 2


@pytest.mark.anyio
@pytest.mark.parametrize("peer_id", list(PEERS))
async def test_closing_deletes_the_session(urls: dict[str, str], peer_id: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(urls[peer_id], versions=["2025-11-25"]) as session:
            session_id = transport_of(session).session_id
            assert session_id is not None
        async with httpx.AsyncClient() as other:
            after = await other.post(
                urls[peer_id],
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={
                    "Mcp-Session-Id": session_id,
                    "MCP-Protocol-Version": "2025-11-25",
                    "Accept": "application/json, text/event-stream",
                },
            )
        assert after.status_code == 404


@pytest.mark.anyio
async def test_a_stream_closed_mid_call_is_resumed_with_last_event_id(
    urls: dict[str, str],
) -> None:
    """ts-sdk --resumable: slow_echo closes its SSE stream after the priming
    event and the progress notification; the result comes on the GET our
    client opens with Last-Event-ID."""
    seen: list[float] = []
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(
            urls[f"{TS}-resumable"],
            recorder,
            versions=["2025-11-25"],
            handlers=[Progress1125(seen)],
        ) as session:
            result = await session.request(
                "tools/call",
                {
                    "name": "slow_echo",
                    "arguments": {"message": "resumed"},
                    "_meta": {"progressToken": 5},
                },
                v2025_11_25.CallToolResult,
            )
            assert texts(result) == ["resumed"]
            assert seen == [1]
    resumed = [h for method, h, _ in recorder.sent if "last-event-id" in h]
    assert resumed, "no GET with Last-Event-ID"
    assert all(h["mcp-session-id"] for h in resumed)


# --------------------------------------------------------------------------
# 4. A server of the deprecated HTTP+SSE transport
# --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_http_sse_server_is_reached_through_the_fallback(
    urls: dict[str, str],
) -> None:
    """python-sdk --sse: the discover and initialize POSTs to /sse get 405, so
    `connect_http` falls back to `legacy_sse.LegacySseClientTransport` (GET
    /sse, POSTs to the endpoint event's URL) and negotiates a legacy version."""
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(urls[f"{PYTHON}-sse"], recorder) as session:
            assert session.protocol_version == "2025-11-25"
            assert session.server_info.name == PEERS[PYTHON].name
            client = v2025_11_25.Client(session)
            echoed = await client.call_tool(name="echo", arguments={"message": MESSAGE})
            assert texts(echoed) == [MESSAGE]
    assert recorder.rpc_methods()[:2] == ["server/discover", "initialize"]
    assert [method for method, _, _ in recorder.sent][2] == "GET"


@pytest.mark.anyio
async def test_without_the_fallback_an_http_sse_server_is_refused(
    urls: dict[str, str],
) -> None:
    with anyio.fail_after(LIMIT), pytest.raises(LegacyServerError) as raised:
        async with connected(urls[f"{PYTHON}-sse"], legacy_sse_fallback=False):
            pytest.fail("connected without the fallback")
    assert raised.value.status == 405

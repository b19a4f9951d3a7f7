"""`McpHttpApp` (our Streamable HTTP server) against the official SDK clients.

The server is `programs/http_echo_server.py`: `serve_http` (uvicorn) serving
`echo_session.session(*versions)` on a free loopback port, in a subprocess of
this repository's python; with ``--legacy-sse`` it is `serve_legacy_sse` (the
deprecated 2024-11-05 HTTP+SSE transport at `/sse` and `/messages`) with the
same `McpHttpApp` behind it. One server runs per set of arguments, for the
whole module; each is terminated at the end, and its stderr must hold no
error.

The clients, installed pinned by `benchmarks.peers`:

- the Python SDK (PyPI `mcp==2.3.0`, `programs/python_sdk_http_client.py`,
  `Client(url, mode=...)` over its `streamable_http_client`): `legacy` (the
  initialize handshake, a session, its GET stream, DELETE at the end),
  `2026-07-28` (stateless POSTs with the standard headers; no probe, so the
  server never names itself) and `auto` (`server/discover` first; initialize
  when the server has no modern revision). It lists the tools, calls `echo`,
  an unknown tool (-32602 from the handler, HTTP 400 in 2026) and
  `prompts/list` (-32601, HTTP 404 in 2026), which it surfaces as `MCPError`.
- the TypeScript SDK (npm `@modelcontextprotocol/sdk@1.32.2`,
  `programs/ts_sdk_http_client.mjs`): `StreamableHTTPClientTransport` against
  each handshake revision (the server restricted to it: the client offers
  2025-11-25 and accepts any older answer), and `SSEClientTransport` against
  the legacy HTTP+SSE endpoints. It lists the tools, calls `echo`, an unknown
  tool, `tools/call` with `{name: 42}` (-32602 from the session's params
  check), pings, and ends the session with DELETE.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import peers
from benchmarks._common import REPO
from tests.peers.stderr import without_start_line
from tests.unit.runtime.session_programs.echo_session import (
    DESCRIPTION,
    INPUT_SCHEMA,
    NAME,
    VERSION,
)

PROGRAMS = Path(__file__).parent / "programs"
SERVER = PROGRAMS / "http_echo_server.py"
PYTHON_CLIENT = PROGRAMS / "python_sdk_http_client.py"
TS_CLIENT = PROGRAMS / "ts_sdk_http_client.mjs"
MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
CLIENT_TIMEOUT = 90.0
"""Seconds one client run may take (the clients give up on a request after 20)."""
READY_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STRUCTURED = frozenset({"2025-06-18", "2025-11-25", "2026-07-28"})
"""The revisions whose tool results carry `structuredContent`."""
MODERN = "2026-07-28"

Server = Callable[..., str]
"""Starts (once) the server for these arguments; its base URL."""


# --- the server -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RunningServer:
    """One `http_echo_server.py` process."""

    def __init__(self, args: tuple[str, ...]) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.port = free_port()
        options, versions = (
            (args[:1], args[1:])
            if args[:1] and args[0].startswith("--")
            else ((), args)
        )
        command = [sys.executable, str(SERVER), *options, str(self.port), *versions]
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.url = self._wait_ready()

    def _wait_ready(self) -> str:
        """The ready line's URL; "" when the server did not start."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], READY_TIMEOUT)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("READY "):
            self.stop()
            return ""
        return line.split()[1]

    def errors(self) -> str:
        self.stderr.seek(0)
        return without_start_line(self.stderr.read().decode(errors="replace"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    running: dict[tuple[str, ...], RunningServer] = {}

    def start(*args: str) -> str:
        errors = ""
        for _ in range(3):  # another process may take the free port first
            if args in running:
                break
            candidate = RunningServer(args)
            if candidate.url:
                running[args] = candidate
            else:
                errors = candidate.errors()
                candidate.stderr.close()
        assert args in running, f"the server did not start:\n{errors}"
        return running[args].url

    try:
        yield start
    finally:
        for each in running.values():
            each.stop()
        logs = {" ".join(args): each.errors() for args, each in running.items()}
        for each in running.values():
            each.stderr.close()
        assert {args: log for args, log in logs.items() if log} == {}


# --- the clients ------------------------------------------------------------------


@pytest.fixture(scope="module")
def peer_python() -> Path:
    return peers.ensure_python_peers(print)


@pytest.fixture(scope="module")
def node() -> Path:
    peers.ensure_node_peers(print)
    return peers.node_executable()


def peer_env() -> dict[str, str]:
    """This environment without anything that would steer the peer venv's python."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a client; its JSON report (with its exit code as `exit_code`)."""
    proc = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    assert proc.returncode in (0, 2), proc.stderr
    assert proc.stderr == ""
    report: dict[str, Any] = json.loads(proc.stdout)
    report["exit_code"] = proc.returncode
    return report


def python_client(python: Path, mode: str, url: str) -> dict[str, Any]:
    return run([str(python), str(PYTHON_CLIENT), mode, url, MESSAGE], peer_env())


def ts_client(node: Path, transport: str, url: str) -> dict[str, Any]:
    return run([str(node), str(TS_CLIENT), transport, url, MESSAGE])


# --- the Python SDK ---------------------------------------------------------------


def python_echo(version: str) -> dict[str, Any]:
    structured = {"result": MESSAGE} if version in STRUCTURED else None
    return {"is_error": False, "texts": [MESSAGE], "structured": structured}


UNKNOWN_TOOL = {"error": {"code": -32602, "message": "Unknown tool: no-such-tool"}}
NO_PROMPTS = {"error": {"code": -32601, "message": "Method not found: prompts/list"}}


@pytest.mark.parametrize(
    ("mode", "negotiated", "identified"),
    [
        ("legacy", "2025-11-25", True),
        ("auto", MODERN, True),
        (MODERN, MODERN, False),
    ],
)
def test_python_sdk_client_against_a_dual_era_server(
    server: Server, peer_python: Path, mode: str, negotiated: str, identified: bool
) -> None:
    report = python_client(peer_python, mode, server() + "/mcp")
    assert report["connected"] is True
    assert report["protocol_version"] == negotiated
    info = report["server_info"]
    if identified:
        assert (info["name"], info["version"]) == (NAME, VERSION)
    else:
        assert info is None
    assert report["tools"] == ["echo"]
    assert report["echo"] == python_echo(negotiated)
    assert report["unknown_tool"] == UNKNOWN_TOOL
    assert report["list_prompts"] == NO_PROMPTS


def test_python_sdk_auto_mode_falls_back_to_a_legacy_session(
    server: Server, peer_python: Path
) -> None:
    url = server("2025-03-26", "2025-06-18") + "/mcp"
    report = python_client(peer_python, "auto", url)
    assert report["protocol_version"] == "2025-06-18"
    assert report["echo"] == python_echo("2025-06-18")
    assert report["unknown_tool"] == UNKNOWN_TOOL
    assert report["list_prompts"] == NO_PROMPTS


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_python_sdk_client_against_a_stateless_server(
    server: Server, peer_python: Path, version: str
) -> None:
    report = python_client(
        peer_python, "legacy", server("--stateless", version) + "/mcp"
    )
    assert report["connected"] is True
    assert report["protocol_version"] == version
    assert report["tools"] == ["echo"]
    assert report["echo"] == python_echo(version)
    assert report["unknown_tool"] == UNKNOWN_TOOL
    assert report["list_prompts"] == NO_PROMPTS


def test_python_sdk_legacy_mode_is_refused_by_a_modern_only_server(
    server: Server, peer_python: Path
) -> None:
    report = python_client(peer_python, "legacy", server(MODERN) + "/mcp")
    assert report["exit_code"] == 2
    assert report["connected"] is False
    # -32022 naming what the server speaks (the 2026 versioning rule).
    assert report["error"]["code"] == -32022


# --- the TypeScript SDK -----------------------------------------------------------


def ts_error(code: int, message: str) -> dict[str, Any]:
    return {
        "error": {"code": code, "message": f"MCP error {code}: {message}", "data": None}
    }


def check_ts_report(report: dict[str, Any], version: str) -> None:
    assert report["connected"] is True
    assert report["protocol_version"] == version
    assert report["server_info"] == {"name": NAME, "version": VERSION}
    assert report["capabilities"] == {"tools": {}}
    assert report["tools"] == [
        {"name": "echo", "description": DESCRIPTION, "inputSchema": INPUT_SCHEMA}
    ]
    echo: dict[str, Any] = {
        "content": [{"type": "text", "text": MESSAGE}],
        "isError": False,
    }
    if version in STRUCTURED:
        echo["structuredContent"] = {"result": MESSAGE}
    assert report["echo"] == {"result": echo}
    assert report["unknown_tool"] == ts_error(-32602, "Unknown tool: no-such-tool")
    bad = report["bad_params"]["error"]
    assert bad["code"] == -32602
    assert "$.name" in bad["message"]
    assert report["ping"] == {"result": {}}
    assert report["transport_errors"] == []


@pytest.mark.parametrize("version", LEGACY)
def test_ts_sdk_streamable_http_client_at_each_legacy_revision(
    server: Server, node: Path, version: str
) -> None:
    report = ts_client(node, "streamable", server(version) + "/mcp")
    check_ts_report(report, version)
    session_id = report["session_id"]
    assert isinstance(session_id, str)
    assert all(0x21 <= ord(c) <= 0x7E for c in session_id)
    assert report["terminated"] is True


def test_ts_sdk_streamable_http_client_against_a_dual_era_server(
    server: Server, node: Path
) -> None:
    report = ts_client(node, "streamable", server() + "/mcp")
    check_ts_report(report, "2025-11-25")
    assert report["terminated"] is True


def test_ts_sdk_streamable_http_client_against_a_stateless_server(
    server: Server, node: Path
) -> None:
    report = ts_client(node, "streamable", server("--stateless", "2025-11-25") + "/mcp")
    check_ts_report(report, "2025-11-25")
    assert report["session_id"] is None


def test_ts_sdk_streamable_http_client_is_refused_by_a_modern_only_server(
    server: Server, node: Path
) -> None:
    report = ts_client(node, "streamable", server(MODERN) + "/mcp")
    assert report["exit_code"] == 2
    assert report["connected"] is False
    assert report["error"]["status"] == 400
    assert '"supported":["2026-07-28"]' in report["error"]["message"]


@pytest.mark.parametrize("versions", [("2024-11-05",), ()])
def test_ts_sdk_legacy_sse_client(
    server: Server, node: Path, versions: tuple[str, ...]
) -> None:
    report = ts_client(node, "sse", server("--legacy-sse", *versions) + "/sse")
    check_ts_report(report, versions[0] if versions else "2025-11-25")
    assert report["session_id"] is None
    assert report["terminated"] is None

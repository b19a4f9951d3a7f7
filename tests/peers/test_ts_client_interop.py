"""`ServerSession` against the official TypeScript SDK client (npm
`@modelcontextprotocol/sdk@1.32.2`).

The server is `tests/unit/runtime/session_programs/echo_session.py` over stdio,
restricted to the revisions named on its command line. The SDK client
(`tests/peers/programs/ts_sdk_client.mjs`, run with node) spawns it, runs the
initialize handshake, lists the tools, calls `echo`, calls an unknown tool, sends
`tools/call` with `{name: 42}`, pings, and reports what it saw.

The client always offers its newest version (2025-11-25) and accepts any answer
in its supported list, so each older revision is reached by serving only it. A
modern-only server answers initialize with -32022, which the SDK surfaces as an
`McpError` from `connect()`: the client reports it and exits 2, no hang.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import peers
from benchmarks._common import REPO
from tests.unit.runtime.session_programs.echo_session import (
    DESCRIPTION,
    INPUT_SCHEMA,
    INSTRUCTIONS,
    NAME,
    VERSION,
)

CLIENT = Path(__file__).parent / "programs" / "ts_sdk_client.mjs"
SERVER = REPO / "tests" / "unit" / "runtime" / "session_programs" / "echo_session.py"
MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
TIMEOUT = 90.0
"""Seconds one client run may take (the client gives up on a request after 20)."""

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The revisions both the TypeScript SDK and `ServerSession` speak."""
STRUCTURED = frozenset({"2025-06-18", "2025-11-25"})
"""The revisions whose tool results carry `structuredContent`."""
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def node() -> Path:
    peers.ensure_node_peers(print)
    return peers.node_executable()


def run_client(node: Path, *server_args: str) -> tuple[int, dict[str, Any]]:
    """The client's exit code and report against echo_session.py `server_args`."""
    proc = subprocess.run(
        [
            str(node),
            str(CLIENT),
            MESSAGE,
            "--",
            sys.executable,
            str(SERVER),
            *server_args,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.stderr == ""
    report: dict[str, Any] = json.loads(proc.stdout)
    return proc.returncode, report


def error(code: int, message: str, data: Any = None) -> dict[str, Any]:
    """An error outcome as the SDK's `McpError` presents it."""
    return {
        "error": {"code": code, "message": f"MCP error {code}: {message}", "data": data}
    }


def assert_session(report: dict[str, Any], version: str) -> None:
    """Everything a connected client saw of echo_session.py at `version`."""
    assert report["connected"] is True
    assert report["protocol_version"] == version
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
    if version in STRUCTURED:
        echoed["structuredContent"] = {"result": MESSAGE}
    assert report["echo"] == {"result": echoed}
    assert report["unknown_tool"] == error(-32602, "Unknown tool: no-such-tool")
    assert report["bad_params"] == error(
        -32602, "Invalid params for tools/call: Expected `str`, got `int` - at `$.name`"
    )
    assert report["ping"] == {"result": {}}


@pytest.mark.parametrize("version", LEGACY)
def test_ts_sdk_client_against_a_single_revision_session(
    node: Path, version: str
) -> None:
    returncode, report = run_client(node, version)
    assert returncode == 0
    assert_session(report, version)


def test_ts_sdk_client_gets_its_newest_version_from_the_default_session(
    node: Path,
) -> None:
    returncode, report = run_client(node)
    assert returncode == 0
    assert_session(report, "2025-11-25")


def test_ts_sdk_client_against_every_revision_at_once(node: Path) -> None:
    returncode, report = run_client(node, *LEGACY, MODERN)
    assert returncode == 0
    assert_session(report, "2025-11-25")


def test_ts_sdk_client_cannot_connect_to_a_modern_only_session(node: Path) -> None:
    returncode, report = run_client(node, MODERN)
    assert returncode == 2
    assert report == {
        "connected": False,
        **error(
            -32022,
            "Unsupported protocol version",
            {"supported": [MODERN], "requested": "2025-11-25"},
        ),
    }

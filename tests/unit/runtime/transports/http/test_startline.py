"""`serve_http` logs one line once it listens: its URL (the bound port, even
for port 0), the revisions it serves and how, auth and CORS on or off."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.transports.http.startline import Served, listening_urls

LIMIT = 30.0
URL = re.compile(r"listening on (http://\S+/mcp)")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_line_names_the_revisions_and_how_they_are_served() -> None:
    session = App("demo", version="1.0").session()
    served = Served(
        session, "/mcp", legacy_sse=True, stateless=False, auth=False, cors=False
    )
    assert served.line(["http://127.0.0.1:8000/mcp"]) == (
        'MCP server "demo" 1.0 listening on http://127.0.0.1:8000/mcp: '
        "2026-07-28 (stateless), 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 "
        "(sessions), HTTP+SSE at /sse; auth off, CORS off"
    )
    legacy_only = App("old", version="2", versions=["2025-06-18"]).session()
    served = Served(
        legacy_only, "/mcp", legacy_sse=False, stateless=True, auth=True, cors=True
    )
    assert served.line(["http://[::1]:1/mcp", "http://127.0.0.1:1/mcp"]) == (
        'MCP server "old" 2 listening on http://[::1]:1/mcp, http://127.0.0.1:1/mcp: '
        "2025-06-18 (stateless); auth on, CORS on"
    )


def test_the_urls_are_those_of_the_bound_sockets() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as four:
        four.bind(("127.0.0.1", 0))
        port = four.getsockname()[1]
        assert listening_urls([four, four], "/mcp") == [f"http://127.0.0.1:{port}/mcp"]
    if socket.has_ipv6:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as six:
            try:
                six.bind(("::1", 0))
            except OSError:
                return  # no IPv6 loopback here
            port = six.getsockname()[1]
            assert listening_urls([six], "/x") == [f"http://[::1]:{port}/x"]


PROGRAM = """
import logging, sys
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.transports.http import Cors

if len(sys.argv) > 1:  # the program's own choice
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout, format="configured: %(message)s"
    )
app = App("announced", version="3")
app.tool("ping")(lambda: "pong")
app.run("http", port=0, cors=Cors(allow_origins=["https://app.example"]))
"""


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    program = tmp_path / "announced.py"
    program.write_text(textwrap.dedent(PROGRAM))
    return subprocess.Popen(
        [sys.executable, str(program), *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def stop(process: subprocess.Popen[str]) -> str:
    """SIGINT, then the rest of its stderr once it exited."""
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=LIMIT)
    assert process.returncode == 0
    return rest


@pytest.mark.anyio
async def test_a_server_on_port_0_prints_the_url_it_listens_on(tmp_path: Path) -> None:
    process = start(tmp_path)
    try:
        assert process.stderr is not None
        line = await anyio.to_thread.run_sync(process.stderr.readline)
        found = URL.search(line)
        assert found is not None, line
        assert line.startswith(
            'MCP server "announced" 3 listening on http://127.0.0.1:'
        )
        assert line.rstrip().endswith("auth off, CORS on")
        with anyio.fail_after(LIMIT):
            async with Client(found.group(1)) as client:
                result = await client.call_tool("ping", {})
                assert "pong" in str(result.content)
    finally:
        rest = stop(process)
    assert "listening on" not in rest  # one line


@pytest.mark.anyio
async def test_logging_configured_by_the_program_decides(tmp_path: Path) -> None:
    process = start(tmp_path, "configured")
    try:
        assert process.stdout is not None
        line = await anyio.to_thread.run_sync(process.stdout.readline)
        assert line.startswith('configured: MCP server "announced" 3 listening on')
    finally:
        rest = stop(process)
    assert "listening on" not in rest  # no handler of ours added

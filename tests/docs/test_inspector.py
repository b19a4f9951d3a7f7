"""The Inspector guide's HTTP commands, run: the official MCP Inspector's CLI
against the docs' example `App` served over Streamable HTTP (`/mcp`) and the
2024-11-05 HTTP+SSE endpoint (`/sse`). Over stdio the scaffold's tests
(tests/packaging/test_scaffold_inspector.py) already run it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks import node22
from tests.docs.blocks import python_blocks

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("inspector")
    served = next(
        b for b in python_blocks(ROOT / "docs/getting-started/server.md") if b.serve
    )
    (folder / "server.py").write_text(served.code, encoding="utf-8")
    port = _free_port()
    program = f"from server import app\napp.run('http', port={port})\n"
    proc = subprocess.Popen([sys.executable, "-c", program], cwd=folder)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + LIMIT
        while True:
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(LIMIT)


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    node22.ensure_inspector(print)
    return node22.inspector_cli_command()


def inspect(inspector: list[str], *args: str) -> Any:
    proc = subprocess.run(
        [*inspector, *args],
        capture_output=True,
        text=True,
        env=node22.inspector_env(),
        timeout=LIMIT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_the_inspector_calls_a_tool_over_streamable_http(
    inspector: list[str], url: str
) -> None:
    args = ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"]
    called = inspect(inspector, f"{url}/mcp", *args)
    assert called["content"] == [{"type": "text", "text": "hi"}]


def test_the_inspector_lists_tools_over_http_sse(
    inspector: list[str], url: str
) -> None:
    listed = inspect(inspector, f"{url}/sse", "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == ["echo"]

"""A project made by `mcp-codegen new` from the built wheels (the `demo`
fixture: made outside the checkout, installed into a fresh venv with its
declared requirements, offline from our dists) serves over stdio and HTTP.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

LIMIT = 30.0
"""Seconds to wait for any one answer or for the HTTP server to start."""

PROTOCOL = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "wheel-test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL_ECHO = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "hi"}},
}
ECHOED = {"content": [{"type": "text", "text": "hi"}]}


@pytest.fixture(scope="module")
def venv(product_bin: Path) -> Path:
    """The bin folder of the venv `demo` is installed in."""
    return product_bin


class Lines:
    """The lines a process writes, read by a thread so reads can time out."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,))
        self._thread.daemon = True
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)

    def next(self) -> Any:
        return json.loads(self._lines.get(timeout=LIMIT))


def test_python_m_demo_answers_over_stdio(venv: Path, demo: Path) -> None:
    """Raw JSON lines on stdin and stdout, as an MCP host speaks to it."""
    process = subprocess.Popen(
        [str(venv / "python"), "-m", "demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=demo.parent,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    lines = Lines(process.stdout)

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    try:
        send(INITIALIZE)
        initialized = lines.next()
        assert initialized["id"] == 1
        assert initialized["result"]["protocolVersion"] == PROTOCOL
        assert initialized["result"]["serverInfo"] == {
            "name": "demo",
            "version": "0.1.0",
        }
        send(INITIALIZED)
        send(CALL_ECHO)
        assert lines.next() == {"jsonrpc": "2.0", "id": 2, "result": ECHOED}
        process.stdin.close()
        assert process.wait(timeout=LIMIT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()
        process.stdout.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def answer(response: httpx.Response) -> Any:
    """The JSON-RPC message of a POST's answer: a JSON body or one SSE event."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [
            line.removeprefix("data:").strip()
            for line in response.text.splitlines()
            if line.startswith("data:") and line.removeprefix("data:").strip()
        ]
        return json.loads(data[-1])
    return response.json()


def wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} after {LIMIT} s")


def test_python_m_demo_http_answers_over_streamable_http(
    venv: Path, demo: Path
) -> None:
    port = free_port()
    process = subprocess.Popen(
        [str(venv / "python"), "-m", "demo", "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=demo.parent,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    try:
        wait_until_listening(port, process)
        with httpx.Client(timeout=LIMIT) as client:
            first = client.post(url, json=INITIALIZE, headers=headers)
            initialized = answer(first)
            assert initialized["result"]["protocolVersion"] == PROTOCOL
            assert initialized["result"]["serverInfo"]["name"] == "demo"
            headers["MCP-Protocol-Version"] = PROTOCOL
            session = first.headers.get("mcp-session-id")
            if session is not None:
                headers["Mcp-Session-Id"] = session
            notified = client.post(url, json=INITIALIZED, headers=headers)
            assert notified.status_code == 202, notified.text
            called = client.post(url, json=CALL_ECHO, headers=headers)
            assert answer(called) == {"jsonrpc": "2.0", "id": 2, "result": ECHOED}
    finally:
        process.terminate()
        try:
            process.wait(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

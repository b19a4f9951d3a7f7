"""A stream still open when the server stops is ended cleanly (its last
chunk), not cancelled into an "Exception in ASGI application" log and a cut
connection: each `mcp-codegen dev` reload with an Inspector attached, each
Ctrl+C with a client listening."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.transports.http.stopping import EndedOnStop

LIMIT = 30.0
URL = re.compile(r"listening on (http://\S+/mcp)")
PROGRAM = """
from mcp_specgen_runtime.app import App

app = App("listened", version="1")
app.tool("ping")(lambda: "pong")
app.run("http", port=0, shutdown_timeout_s=0.1)
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def start(tmp_path: Path) -> subprocess.Popen[str]:
    program = tmp_path / "listened.py"
    program.write_text(textwrap.dedent(PROGRAM))
    return subprocess.Popen(
        [sys.executable, str(program)], stderr=subprocess.PIPE, text=True
    )


@pytest.mark.anyio
async def test_a_listening_client_s_stream_ends_cleanly_on_stop(
    tmp_path: Path,
) -> None:
    process = start(tmp_path)
    assert process.stderr is not None
    try:
        line = await anyio.to_thread.run_sync(process.stderr.readline)
        found = URL.search(line)
        assert found is not None, line
        url = found.group(1)
        accept = {"accept": "application/json, text/event-stream"}
        with anyio.fail_after(LIMIT):
            async with httpx.AsyncClient(timeout=LIMIT) as http:
                opened = await http.post(url, json=INITIALIZE, headers=accept)
                session = opened.headers["mcp-session-id"]
                headers = {
                    "accept": "text/event-stream",
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-06-18",
                }
                async with http.stream("GET", url, headers=headers) as stream:
                    assert stream.status_code == 200
                    process.send_signal(signal.SIGINT)
                    # Ends without RemoteProtocolError (a cut chunked body).
                    async for _ in stream.aiter_bytes():
                        pass
        _, rest = await anyio.to_thread.run_sync(
            lambda: process.communicate(timeout=LIMIT)
        )
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert "Exception in ASGI application" not in rest
    assert "Traceback" not in rest


class Streaming:
    """An ASGI app streaming until cancelled."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x", "more_body": True})
        await asyncio.Event().wait()


async def cancelled(app: EndedOnStop) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    streaming = asyncio.Event()

    async def send(message: Any) -> None:
        sent.append(message)
        streaming.set()

    async def receive() -> Any:
        return {"type": "http.disconnect"}

    task = asyncio.create_task(app({"type": "http"}, receive, send))
    await streaming.wait()
    task.cancel()
    await asyncio.wait([task])
    if task.cancelled():
        sent.append({"type": "cancelled"})
    return sent


@pytest.mark.anyio
async def test_only_a_stop_ends_a_stream_other_cancellations_go_on() -> None:
    ended = await cancelled(EndedOnStop(Streaming(), lambda: True))
    assert ended[-1] == {"type": "http.response.body", "body": b""}
    going_on = await cancelled(EndedOnStop(Streaming(), lambda: False))
    assert going_on[-1] == {"type": "cancelled"}

"""`App.run()` over stdio: the limits it takes, in a real subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.transports.stdio import stdio_client

LIMIT = 10.0
"""Seconds any one test may take."""
PROGRAM = Path(__file__).with_name("stdio_app.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


@pytest.mark.anyio
async def test_run_takes_the_limit_of_requests_in_flight() -> None:
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    sleep = {"method": "tools/call", "params": {"name": "sleep", "arguments": {}}}
    with anyio.fail_after(LIMIT):
        async with stdio_client(
            [sys.executable, str(PROGRAM), "2"], stderr="capture"
        ) as transport:
            await transport.send(
                line({"id": 0, "method": "initialize", "params": init})
            )
            assert json.loads(await transport.receive())["id"] == 0
            await transport.send(line({"method": "notifications/initialized"}))
            for n in (1, 2, 3):
                await transport.send(line({"id": n, **sleep}))
            refused = json.loads(await transport.receive())
            assert refused["id"] == 3 and refused["error"]["data"] == {"maxInFlight": 2}
    assert "Traceback" not in transport.stderr_text

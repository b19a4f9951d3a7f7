"""Fuzzing the stdio server: every malformed line gets the answer it deserves.

In process, an `App` session serves a `Connection` over the real stdio framing
(`StdioTransport`, `max_line_length` = `LINE_LIMIT`) on in-memory byte
streams, in each connection state; after each case a ping (2026-07-28, which
has no ping: a `server/discover`) must be answered. A smaller run goes through
a real subprocess (`App.run()`), whose stderr must hold no traceback.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports.lines import LineReader, StdioTransport
from mcp_specgen_runtime.transports.stdio import stdio_client
from tests.fuzz.cases import ENVELOPE, LINE_LIMIT, STATES, VERSION, Case, generate
from tests.fuzz.support import SEED, Tally, make_app, mismatch

CASES = 1500
"""Cases per state, in process."""
SUBPROCESS_CASES = 300
CASE_LIMIT = 5.0
"""Seconds one case may take to be answered."""
APP_PROGRAM = Path(__file__).parents[1] / "unit" / "runtime" / "app" / "stdio_app.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Receiving(ByteReceiveStream):
    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self.stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self.stream.receive()

    async def aclose(self) -> None:
        await self.stream.aclose()


class _Sending(ByteSendStream):
    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self.stream = stream

    async def send(self, item: bytes) -> None:
        await self.stream.send(item)

    async def aclose(self) -> None:
        await self.stream.aclose()


class Client:
    """The client's end: writes raw lines, reads answers line by line."""

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        read: Callable[[], Awaitable[bytes]],
    ) -> None:
        self.write = write
        self.read = read
        self.syncs = 0
        self.sync_request: dict[str, Any] = {"method": "ping"}
        """What follows each case (2026-07-28 has no ping: `server/discover`)."""

    async def send(self, data: bytes) -> None:
        await self.write(data)

    async def receive(self) -> Any:
        return json.loads(await self.read())

    async def exchange(self, case: Case) -> list[Any]:
        """Send the case and a ping; what came back besides the ping's answer."""
        self.syncs += 1
        sync = f"sync-{self.syncs}"
        await self.send(case.data)
        await self.send(_line({"id": sync, **self.sync_request}))
        received: list[Any] = []
        wanted = (
            1
            if case.expected.batch and case.expected.replies
            else len(case.expected.replies)
        )
        synced = False
        with anyio.fail_after(CASE_LIMIT):
            while not synced or len(received) < wanted:
                message = await self.receive()
                if isinstance(message, dict) and message.get("id") == sync:
                    assert "result" in message, message
                    synced = True
                else:
                    received.append(message)
        return received

    async def open(self, state: str) -> None:
        """Bring the connection to `state`."""
        if state in ("legacy", "batch"):
            params = {
                "protocolVersion": VERSION[state],
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "0"},
            }
            await self.send(
                _line({"id": "init", "method": "initialize", "params": params})
            )
            assert (await self.receive())["result"]["protocolVersion"] == VERSION[state]
            await self.send(_line({"method": "notifications/initialized"}))
        elif state == "modern":
            params = {"_meta": ENVELOPE}
            self.sync_request = {"method": "server/discover", "params": params}
            await self.send(_line({"id": "init", **self.sync_request}))
            assert "result" in await self.receive()


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


@asynccontextmanager
async def in_process() -> AsyncGenerator[Client]:
    """A client speaking to an app over the stdio framing, in memory."""
    to_server, server_in = anyio.create_memory_object_stream[bytes](math.inf)
    server_out, from_server = anyio.create_memory_object_stream[bytes](math.inf)
    transport = StdioTransport(
        _Receiving(server_in), _Sending(server_out), max_line_length=LINE_LIMIT
    )

    async def write(data: bytes) -> None:
        await to_server.send(data + b"\n")

    lines = LineReader(_Receiving(from_server))
    async with Connection(transport, make_app().session().handler()):
        yield Client(write, lines.receive_line)
        await to_server.aclose()
    await from_server.aclose()


async def run(client: Client, cases: list[Case], tally: Tally) -> None:
    for case in cases:
        try:
            problem = mismatch(case, await client.exchange(case))
        except TimeoutError:
            problem = "no answer"
        tally.record(case, problem)
        if problem == "no answer":
            break  # the framing may be lost; the failure is reported


@pytest.mark.parametrize("state", STATES)
@pytest.mark.anyio
async def test_every_malformed_line_gets_what_it_deserves(
    state: str, caplog: pytest.LogCaptureFixture
) -> None:
    tally = Tally()
    async with in_process() as client:
        await client.open(state)
        await run(client, generate(state, SEED, CASES), tally)
    print(f"stdio {state}: {tally.summary()}")
    assert not tally.failures, tally.summary()
    tracebacks = [r.getMessage() for r in caplog.records if r.exc_info]
    assert not tracebacks, tracebacks[:5]


@pytest.mark.anyio
async def test_a_real_app_process_survives_the_fuzz_without_a_traceback() -> None:
    cases = [
        case
        for case in generate("legacy", SEED + 1, SUBPROCESS_CASES)
        if case.kind != "too-long"  # the app has the default limit
    ]
    tally = Tally()
    with anyio.fail_after(60):
        async with stdio_client(
            [sys.executable, str(APP_PROGRAM)], stderr="capture"
        ) as transport:

            client = Client(transport.send, transport.receive)
            await client.open("legacy")
            await run(client, cases, tally)
    print(f"stdio subprocess: {tally.summary()}")
    assert not tally.failures, tally.summary()
    assert "Traceback" not in transport.stderr_text
    assert transport.returncode == 0

"""What resumable streams cost the HTTP server: legacy `tools/call`s with
resumability on (the default: a `MemoryEventStore`) and off.

    python -m benchmarks.stream_cost [CALLS]

`McpHttpApp` is called in-process through ASGI (no sockets, no HTTP
parsing), so the figures are the server's own work per call:

- `json`: an echo answered as one JSON body (the common case): nothing is
  stored, resumable or not;
- `sse`: a tool reporting progress twice before its result, answered as an
  SSE stream of 3 events (2025-11-25: plus a priming event when resumable),
  each stored before it is sent.

Reported: microseconds per call, median of 5 rounds, for both settings and
their difference; and the bytes the store holds per stored SSE call.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

import anyio
import anyio.lowlevel
import msgspec

from benchmarks.http_cost import asgi_post
from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.stores.events import MemoryEventStore
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from mcp_specgen_types import v2025_11_25

VERSION = "2025-11-25"
ROUNDS = 5


class Tools(v2025_11_25.ServerHandlers):
    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        if params.name == "progress":
            request = current_request()
            await request.report_progress(1, 2)
            await request.report_progress(2, 2)
        return v2025_11_25.CallToolResult(
            content=[v2025_11_25.TextContent(text="hello")]
        )


async def call(app: McpHttpApp, body: bytes, session_id: str | None) -> list[Any]:
    """One POST through ASGI; the messages the app sent."""
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", VERSION.encode()),
    ]
    if session_id is not None:
        headers.append((b"mcp-session-id", session_id.encode()))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    return await asgi_post(app, scope, body)


def request(request_id: int, name: str) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if name == "progress":
        params["_meta"] = {"progressToken": request_id}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    return msgspec.json.encode({**message, "params": params})


async def open_session(app: McpHttpApp) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    sent = await call(app, msgspec.json.encode(init), None)
    headers = dict(sent[0]["headers"])
    session_id = headers[b"mcp-session-id"].decode()
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await call(app, msgspec.json.encode(done), session_id)
    return session_id


async def per_call_us(resumable: bool, name: str, calls: int) -> tuple[float, int]:
    session = ServerSession([Tools()], name="bench", version="1", versions=[VERSION])
    store = MemoryEventStore()
    app = McpHttpApp(session, resumable=resumable, event_store=store)
    session_id = await open_session(app)
    for i in range(50):  # warm-up
        await call(app, request(i + 1, name), session_id)
    bodies = [request(i + 1000, name) for i in range(calls)]
    gc.collect()
    start = time.perf_counter()
    for body in bodies:
        await call(app, body, session_id)
    elapsed = time.perf_counter() - start
    await anyio.lowlevel.checkpoint()
    size = store.size
    await app.aclose()
    return elapsed / calls * 1e6, size


async def measure(calls: int) -> dict[str, dict[str, float]]:
    figures: dict[str, dict[str, float]] = {}
    for name, label in (("echo", "json"), ("progress", "sse")):
        runs: dict[bool, list[float]] = {True: [], False: []}
        size = 0
        for _ in range(ROUNDS):
            for resumable in (False, True):
                us, stored = await per_call_us(resumable, name, calls)
                runs[resumable].append(us)
                if resumable:
                    size = stored
        off = statistics.median(runs[False])
        on = statistics.median(runs[True])
        figures[label] = {
            "off_us": off,
            "on_us": on,
            "added_us": on - off,
            "added_pct": (on - off) / off * 100,
            "stored_bytes_per_call": size / (calls + 50),
        }
    return figures


def main(argv: list[str]) -> None:
    calls = int(argv[0]) if argv else 2000
    figures = anyio.run(measure, calls)
    print(
        f"{'answer':<6} {'off µs':>8} {'on µs':>8} {'added':>14} {'stored B/call':>14}"
    )
    for label, row in figures.items():
        added = f"{row['added_us']:+.1f} ({row['added_pct']:+.1f}%)"
        print(
            f"{label:<6} {row['off_us']:8.1f} {row['on_us']:8.1f} {added:>14} "
            f"{row['stored_bytes_per_call']:14.0f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])

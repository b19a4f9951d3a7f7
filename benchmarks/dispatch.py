"""Dispatch overhead per `tools/call`: decode params, call a no-op handler, encode.

Compared in one process with the floor a dispatcher cannot go below: a bare
`msgspec.json.decode` of the same params bytes (untyped), and a typed decode
into the params Struct alone. Times are per call, in microseconds; rounds
alternate the contenders.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import TYPE_CHECKING, Any

import msgspec

from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher
from mcp_specgen_types import v2025_11_25 as rev

from ._common import table

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._common import Echo

PARAMS = msgspec.json.encode(
    {
        "name": "echo",
        "arguments": {"message": "hello world", "count": 3, "tags": ["a", "b"]},
        "_meta": {"progressToken": "tok-1"},
    }
)
RESULT = rev.CallToolResult(content=[rev.TextContent(text="hello world")])


class NoOpServer(rev.ServerHandlers):
    async def tools_call(self, params: rev.CallToolRequestParams) -> rev.CallToolResult:
        return RESULT


def _per_call_us(body: Callable[[int], None], calls: int) -> float:
    started = time.perf_counter()
    body(calls)
    return (time.perf_counter() - started) / calls * 1e6


def contenders() -> dict[str, Callable[[int], None]]:
    dispatcher = Dispatcher(NoOpServer())
    typed = msgspec.json.Decoder(rev.CallToolRequestParams)
    untyped = msgspec.json.Decoder()

    def dispatch(calls: int) -> None:
        async def loop() -> None:
            for _ in range(calls):
                await dispatcher.dispatch("tools/call", PARAMS)

        asyncio.run(loop())

    def typed_decode(calls: int) -> None:
        for _ in range(calls):
            typed.decode(PARAMS)

    def bare_decode(calls: int) -> None:
        for _ in range(calls):
            untyped.decode(PARAMS)

    return {
        "dispatch (decode + no-op handler + encode)": dispatch,
        "typed decode into CallToolRequestParams": typed_decode,
        "msgspec.json.decode (untyped)": bare_decode,
    }


def run(*, quick: bool = False, echo: Echo = print) -> dict[str, Any]:
    """Measure, print a table, return the figures (microseconds per call)."""
    rounds, calls = (3, 2_000) if quick else (15, 20_000)
    bodies = contenders()
    samples: dict[str, list[float]] = {name: [] for name in bodies}
    for body in bodies.values():
        body(calls // 10)  # warm-up
    for round_no in range(rounds):
        order = list(bodies) if round_no % 2 == 0 else list(reversed(bodies))
        for name in order:
            samples[name].append(_per_call_us(bodies[name], calls))
    floor = statistics.median(samples["msgspec.json.decode (untyped)"])
    figures = {
        name: {
            "median_us": round(statistics.median(values), 3),
            "min_us": round(min(values), 3),
            "max_us": round(max(values), 3),
            "ratio_to_bare_decode": round(statistics.median(values) / floor, 2),
        }
        for name, values in samples.items()
    }
    rows = [
        (
            name,
            f"{f['median_us']:.2f}",
            f"{f['min_us']:.2f}-{f['max_us']:.2f}",
            f"{f['ratio_to_bare_decode']:.2f}x",
        )
        for name, f in figures.items()
    ]
    echo(table(("per tools/call", "median µs", "min-max", "vs bare decode"), rows))
    echo(f"({rounds} rounds x {calls} calls, params {len(PARAMS)} bytes)")
    return {"params_bytes": len(PARAMS), "rounds": rounds, "calls": calls, **figures}

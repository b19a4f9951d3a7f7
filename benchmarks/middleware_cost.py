"""What middleware costs an `App`: in-process `tools/call`s served without the
chain at all, with the empty chain every app has, with one pass-through
middleware, and with the shipped ones.

    python -m benchmarks.middleware_cost [CALLS] [ROUNDS]

Every variant serves the same app over the memory transport at 2025-11-25
and 2026-07-28, so the figures are the runtime's own work, no I/O. "no
chain" serves the app's session through the plain `ServerConnection` (the
code path before middleware existed); "empty chain" is what `App()` serves
through. Each round runs every variant, in a shuffled order, and the best
round of each is reported, so a noisy neighbour on the machine skews all of
them alike.
"""

from __future__ import annotations

import logging
import random
import sys
import time
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.request_log import RequestLogger
from mcp_specgen_runtime.app.result_cache import ResultCache
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports import memory_pair

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_specgen_runtime.app.middleware import Call, CallNext
    from mcp_specgen_runtime.jsonrpc.serving import Handler

Result = dict[str, Any]
VERSIONS = ("2025-11-25", "2026-07-28")


async def passing(call: Call, call_next: CallNext) -> Any:
    return await call_next(call)


def make_app(*middleware: Any) -> App:
    app = App("cost", middleware=middleware)

    @app.tool(run_in_thread=False)
    def echo(text: str) -> str:
        return text

    @app.resource("cost://fixed")
    def fixed() -> str:
        return "fixed"

    return app


def plain_handler(app: App) -> Handler:
    """The app's session served without `AppConnection`, hence no chain."""
    return ServerSession.handler(app.session())


def chained_handler(app: App) -> Handler:
    return app.session().handler()


VARIANTS: dict[str, tuple[Callable[[], App], Callable[[App], Handler]]] = {
    "no chain": (make_app, plain_handler),
    "empty chain": (make_app, chained_handler),
    "one middleware, other methods": (
        lambda: _only(make_app(), "prompts/get"),
        chained_handler,
    ),
    "one pass-through middleware": (lambda: make_app(passing), chained_handler),
    "RequestLogger, level off": (
        lambda: make_app(RequestLogger("benchmarks.quiet")),
        chained_handler,
    ),
}


def _only(app: App, method: str) -> App:
    app.add_middleware(passing, methods=[method])
    return app


async def timed(
    version: str, app: App, handler: Handler, calls: int, method: str = "tools/call"
) -> float:
    """Seconds per call of `calls` requests of `method`."""
    client_end, server_end = memory_pair()
    params = (
        {"name": "echo", "arguments": {"text": "hello"}}
        if method == "tools/call"
        else {"uri": "cost://fixed"}
    )
    async with (
        Connection(server_end, handler),
        ClientSession(client_end, name="b", version="1", versions=[version]) as session,
    ):
        package = session.package
        assert package is not None
        spec = package.METHODS[method]
        for _ in range(100):  # warm up
            await session.request(method, params, spec.result)
        start = time.perf_counter()
        for _ in range(calls):
            await session.request(method, params, spec.result)
        return (time.perf_counter() - start) / calls


async def measure(calls: int, rounds: int) -> dict[str, dict[str, float]]:
    logging.getLogger("benchmarks.quiet").setLevel(logging.WARNING)
    best: dict[str, dict[str, float]] = {v: {} for v in VERSIONS}
    order = list(VARIANTS.items())
    shuffler = random.Random(20)
    for _ in range(rounds):
        for version in VERSIONS:
            shuffler.shuffle(order)  # no variant always runs first
            for name, (build, serve) in order:
                app = build()
                seconds = await timed(version, app, serve(app), calls)
                kept = best[version].get(name, seconds)
                best[version][name] = min(kept, seconds)
    for version in VERSIONS:  # resources/read, uncached and cached
        for name, cache in (("read, no cache", None), ("read, ResultCache", 1)):
            app = make_app() if cache is None else make_app(ResultCache(60_000))
            seconds = min(
                [
                    await timed(
                        version, app, chained_handler(app), calls, "resources/read"
                    )
                    for _ in range(rounds)
                ]
            )
            best[version][name] = seconds
    return best


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    found = anyio.run(measure, calls, rounds)
    for version, figures in found.items():
        base = figures["no chain"]
        print(f"{version} (µs per call; tools/call unless said)")
        for name in [*VARIANTS, "read, no cache", "read, ResultCache"]:
            seconds = figures[name]
            added = (seconds - base) * 1e6 if "read" not in name else 0.0
            note = f"  {added:+6.2f}" if "read" not in name else ""
            print(f"  {name:32} {seconds * 1e6:8.2f}{note}")


if __name__ == "__main__":
    main()

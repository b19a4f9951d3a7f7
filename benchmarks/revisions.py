"""Every protocol revision at its own speed: a legacy run at 2025-06-18 beside
2025-11-25, and the 2026 era (2026-07-28), ours against the official SDKs.

Four tables, one run each of `run_round_trips` (rounds alternate the
contenders, the order reversed every other round; medians with min-max; ratios
of medians ours/other):

- `2025-06-18` and `2025-11-25` over stdio, the handshake at that revision:
  ours (`programs/app_tools_server.py`, the `App` API), the TypeScript SDK 1.x
  (`programs/ts_sdk_tools_server.mjs`) and the Python SDK
  (`programs/python_sdk_tools_server.py`);
- `2026-07-28` over stdio, no handshake, every request carrying the `_meta`
  envelope: ours (the same `App` program), the TypeScript SDK v2
  (`programs/ts_sdk_v2_tools_server.mjs`, `serveStdio`) and the Python SDK;
- `2026-07-28` over Streamable HTTP, stateless POSTs with the envelope and the
  2026 headers: ours (the scaffold with `--http`, as `benchmarks.http` runs it),
  the TypeScript SDK v2 (`createMcpHandler` behind `node:http`) and the Python
  SDK (`tests/peers/programs/python_sdk_http_server.py`, its default answers).

Over stdio each contender is spawned once per tool count of `TOOL_COUNTS`
(each tool `tool_0000` ... answers `{message}` with the message): the one-tool
server runs the `tools/call` modes, sequential (calls/s over the sum of the
latencies, p50 µs) and pipelined (`IN_FLIGHT` in flight, calls/s), with the
server's CPU per call and its peak RSS; every server runs sequential
`tools/list` calls (lists/s), each answer checked to list exactly its tools in
one page. Over HTTP: sequential calls from one client and calls from
`HTTP_CLIENTS` clients at once, each with its own keep-alive connection (the
load client of `benchmarks.http`). Every echo answer is checked
(`scaffold_server.echo_problem`).

Targets (issue 19, reported, never asserted): ours at least 1.5x the
TypeScript SDK of the era (1.x for the legacy revisions, v2 for 2026) in every
mode and list size.

    python -m benchmarks revisions [--quick]
"""

from __future__ import annotations

import functools
import os
import select
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from . import http, stdio
from ._common import (
    MESSAGE,
    REPO,
    Contender,
    Reply,
    compare,
    comparison_rows,
    figures_tail,
    peer_env,
    project_python,
    ratio_checks,
    run_round_trips,
    table,
    target_lines,
    version_lines,
)
from .peers import node_executable
from .scaffold_server import env as scaffold_env, http_argv, prepare

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from ._common import Echo

LEGACY_REVISIONS = ("2025-06-18", "2025-11-25")
"""The handshake revisions measured (2025-06-18: what many hosts still speak)."""

MODERN = "2026-07-28"

TOOL_COUNTS = (1, 100, 1_000)
"""Tools served by each stdio server, one server per count."""

TOOL = "tool_0000"
"""The tool called over stdio (every tools program has it)."""

IN_FLIGHT = stdio.IN_FLIGHT
READ_TIMEOUT = 30.0
"""Seconds a stdio server may stay silent while an answer is awaited; each
read waits at most that long itself (no reliance on killing the server)."""
HTTP_CLIENTS = http.CONCURRENCY

PROGRAMS = REPO / "benchmarks" / "programs"
PEER_PROGRAMS = REPO / "tests" / "peers" / "programs"

OURS = "ours"
TS_V1 = "TypeScript SDK 1.x"
TS_V2 = "TypeScript SDK v2"
PY_SDK = "Python SDK"
SHORT = {TS_V1: "TS1", TS_V2: "TS2", PY_SDK: "PySDK"}

COUNT = "{count}"
"""The placeholder for the tool count in a stdio contender's argv."""

TARGET = 1.5
"""Ours / the era's TypeScript SDK, every throughput figure, at least."""

STDIO_METRICS = {
    "sequential_calls_per_s": "tools/call sequential calls/s",
    "p50_us": "tools/call sequential p50 µs",
    "pipelined_calls_per_s": f"tools/call pipelined ({IN_FLIGHT}) calls/s",
    "cpu_us_per_call_sequential": "server CPU µs/call, seq.",
    "cpu_us_per_call_pipelined": "server CPU µs/call, pipe.",
    **{f"lists_per_s_{n}": f"tools/list, {n:,} tools, lists/s" for n in TOOL_COUNTS},
    "peak_rss_mib": "peak RSS MiB (1 tool)",
}
STDIO_CALL_METRICS = (
    "sequential_calls_per_s",
    "p50_us",
    "pipelined_calls_per_s",
    "cpu_us_per_call_sequential",
    "cpu_us_per_call_pipelined",
    "peak_rss_mib",
)
"""The figures of `stdio.timed_modes` this benchmark reports."""
STDIO_THROUGHPUT = (
    "sequential_calls_per_s",
    "pipelined_calls_per_s",
    *(f"lists_per_s_{n}" for n in TOOL_COUNTS),
)

HTTP_METRICS = {
    "sequential_req_per_s": "sequential req/s",
    "p50_us": "sequential p50 µs",
    "concurrent_req_per_s": f"{HTTP_CLIENTS} clients req/s",
    "cpu_us_per_req_sequential": "server CPU µs/req, seq.",
    "cpu_us_per_req_concurrent": f"server CPU µs/req, {HTTP_CLIENTS} clients",
    "peak_rss_mib": "peak RSS MiB",
}
HTTP_THROUGHPUT = ("sequential_req_per_s", "concurrent_req_per_s")


@dataclass(frozen=True)
class Sizes:
    """How much work one run does."""

    rounds: int
    warmup: int
    """Calls before the timed modes (half sequential, half pipelined)."""
    sequential: int
    pipelined: int
    """Calls with `IN_FLIGHT` in flight (over HTTP: spread over the clients)."""
    lists: tuple[int, ...]
    """Sequential `tools/list` calls per server, one figure per `TOOL_COUNTS`."""
    cap_s: float = 6.0
    """Over HTTP, the seconds after which a mode sends no more calls."""


NORMAL = Sizes(5, 300, 2_000, 4_000, (1_000, 300, 60))
QUICK = Sizes(1, 100, 300, 600, (100, 30, 6), cap_s=1.5)
"""A smoke run (CI): one round, every table; figures not to quote."""
TINY = Sizes(1, 4, 10, 20, (3, 2, 1), cap_s=30)
"""For the smoke test: every code path, no meaningful figure."""


# --- the wire ---------------------------------------------------------------------


def envelope(revision: str) -> dict[str, Any]:
    """The `_meta` every 2026 request carries."""
    return {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def _params(revision: str, params: dict[str, Any]) -> dict[str, Any]:
    return {**params, "_meta": envelope(revision)} if revision == MODERN else params


def request_body(request_id: int, revision: str, method: str, **params: Any) -> bytes:
    """A JSON-RPC request at `revision` (the envelope added for 2026)."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": _params(revision, params),
    }
    return msgspec.json.encode(message)


def call_body(request_id: int, revision: str, tool: str = TOOL) -> bytes:
    """The `tools/call` of `tool` with `{message}`."""
    arguments = {"message": MESSAGE}
    return request_body(
        request_id, revision, "tools/call", name=tool, arguments=arguments
    )


class _Named(msgspec.Struct):
    name: str


class _Listing(msgspec.Struct, rename="camel"):
    tools: list[_Named]
    next_cursor: str | None = None


def listing_problem(reply: Reply, count: int) -> str | None:
    """What is wrong with a `tools/list` answer of a `count`-tool server."""
    if not reply.result:
        return f"error answer to tools/list: {reply.error!r}"
    listing = msgspec.json.decode(reply.result, type=_Listing)
    if listing.next_cursor is not None or len(listing.tools) != count:
        return f"not {count} tools in one page: {len(listing.tools)}"
    if count and listing.tools[0].name != TOOL:
        return f"first tool {listing.tools[0].name!r}, not {TOOL!r}"
    return None


# --- stdio ------------------------------------------------------------------------


class StdioClient(stdio.RawClient):
    """The stdio benchmark's raw client, speaking `revision`; a read waits
    at most `read_timeout` seconds."""

    def __init__(
        self, contender: Contender, revision: str, read_timeout: float = READ_TIMEOUT
    ) -> None:
        super().__init__(contender, read_timeout)
        self.revision = revision

    def _lines(self) -> list[bytes]:
        """The complete lines available, waiting for output at most
        `read_timeout` seconds."""
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._out], [], [], self._read_timeout)
            if not ready:
                raise self._fail(f"silent for {self._read_timeout:g} s")
            chunk = os.read(self._out, 65536)
            self._reads += 1
            if not chunk:
                raise self._fail("stdout closed")
            self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return lines

    def initialize(self) -> None:
        """The legacy handshake at the client's revision (none in 2026)."""
        if self.revision != MODERN:
            super().initialize()

    def request_line(self, request_id: int) -> bytes:
        """The `tools/call` of `TOOL` at the client's revision."""
        return call_body(request_id, self.revision) + b"\n"

    def lists(self, n: int, count: int) -> list[int]:
        """`n` `tools/list` calls one at a time; each latency (ns)."""
        latencies: list[int] = []
        for _ in range(n):
            request_id = self._next_id
            self._next_id += 1
            line = request_body(request_id, self.revision, "tools/list") + b"\n"
            started = time.perf_counter_ns()
            os.write(self._in, line)
            replies = self._replies()
            while not replies:
                replies = self._replies()
            latencies.append(time.perf_counter_ns() - started)
            if len(replies) != 1 or replies[0].id != request_id:
                raise self._fail(f"not the answer to {request_id}: {replies!r}")
            problem = listing_problem(replies[0], count)
            if problem:
                raise self._fail(problem)
        return latencies


def _spawned(contender: Contender, count: int) -> Contender:
    argv = [str(count) if arg == COUNT else arg for arg in contender.argv]
    return Contender(contender.name, argv, contender.env)


def measure_stdio(
    revision: str, contender: Contender, sizes: Sizes
) -> dict[str, float]:
    """One round of `contender` at `revision`: a server per tool count."""
    figures: dict[str, float] = {}
    for count, lists in zip(TOOL_COUNTS, sizes.lists, strict=True):
        client = StdioClient(_spawned(contender, count), revision)
        try:
            client.initialize()
            if count == 1:
                calls = stdio.timed_modes(client, sizes)
                figures.update({key: calls[key] for key in STDIO_CALL_METRICS})
            client.lists(max(1, lists // 10), count)
            latencies = client.lists(lists, count)
        except BaseException:
            client.kill()
            raise
        client.close()
        figures[f"lists_per_s_{count}"] = len(latencies) / (sum(latencies) / 1e9)
    return figures


def stdio_contenders(
    revision: str, peer_python: Path, node_project: Path
) -> list[Contender]:
    """Ours, the era's TypeScript SDK, the Python SDK: stdio tools servers."""
    from .peers import ensure_node_v2_peers

    env = dict(os.environ)
    node = str(node_executable())
    if revision == MODERN:
        v2_project = ensure_node_v2_peers()
        typescript = Contender(
            TS_V2,
            [node, str(PROGRAMS / "ts_sdk_v2_tools_server.mjs"), COUNT],
            {**env, "MCP_PEERS_NODE_V2_DIR": str(v2_project)},
        )
    else:
        typescript = Contender(
            TS_V1,
            [node, str(PROGRAMS / "ts_sdk_tools_server.mjs"), COUNT],
            {**env, "MCP_PEERS_NODE_DIR": str(node_project)},
        )
    return [
        Contender(
            OURS, [project_python(), str(PROGRAMS / "app_tools_server.py"), COUNT], env
        ),
        typescript,
        Contender(
            PY_SDK,
            [str(peer_python), str(PROGRAMS / "python_sdk_tools_server.py"), COUNT],
            peer_env(),
        ),
    ]


# --- Streamable HTTP, 2026 --------------------------------------------------------


class ModernHttpClient(http.HttpClient):
    """The HTTP benchmark's raw client speaking 2026-07-28: no session; the
    envelope in every body, the 2026 headers on every POST."""

    def __init__(self, port: int, tool: str, timeout: float = http.READ_TIMEOUT):
        super().__init__(port, timeout)
        self.tool = tool

    def handshake(self) -> None:
        """No handshake in 2026; only the headers every call carries."""
        self._head += b"MCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\n" % (
            MODERN.encode()
        )
        self._head += b"Mcp-Name: %s\r\n" % self.tool.encode()

    def request_body(self, request_id: int) -> bytes:
        """The 2026 `tools/call` of the client's tool."""
        return call_body(request_id, MODERN, self.tool)


def _tool_of(contender: Contender) -> str:
    return TOOL if contender.name == TS_V2 else "echo"


def measure_http(contender: Contender, sizes: Sizes) -> dict[str, float]:
    """One round of `contender` over Streamable HTTP at 2026-07-28: the HTTP
    benchmark's `measure` with 2026 clients, `sizes.pipelined` calls over
    the clients."""
    tool = _tool_of(contender)
    shape = http.Sizes(
        sizes.rounds, sizes.warmup, sizes.sequential, sizes.pipelined, sizes.cap_s
    )
    figures = http.measure(
        contender,
        shape,
        client_of=lambda port, timeout: ModernHttpClient(port, tool, timeout),
    )
    return {key: figures[key] for key in HTTP_METRICS}


def http_contenders(peer_python: Path, _node_project: Path) -> list[Contender]:
    """Ours (the scaffold), the TypeScript SDK v2, the Python SDK, over HTTP."""
    from .peers import ensure_node_v2_peers

    project = prepare(peer_python)
    v2_project = ensure_node_v2_peers()
    program = str(PROGRAMS / "ts_sdk_v2_tools_server.mjs")
    python_sdk = str(PEER_PROGRAMS / "python_sdk_http_server.py")
    return [
        Contender(OURS, http_argv(http.PORT), scaffold_env(project)),
        Contender(
            TS_V2,
            [str(node_executable()), program, "1", "--http", http.PORT],
            {**os.environ, "MCP_PEERS_NODE_V2_DIR": str(v2_project)},
        ),
        Contender(PY_SDK, [str(peer_python), python_sdk, http.PORT], peer_env()),
    ]


# --- the run ----------------------------------------------------------------------


def _figures_of(
    title: str, revision: str, metrics: dict[str, str], throughput: Sequence[str]
) -> Callable[
    [dict[str, list[dict[str, float]]], list[Contender], Sizes], dict[str, Any]
]:
    def figures(
        samples: dict[str, list[dict[str, float]]],
        servers: list[Contender],
        sizes: Sizes,
    ) -> dict[str, Any]:
        from .peers import NODE_V2_DIR, NODE_V2_PEERS, installed_node_versions

        entries, ratios = compare(samples, servers, metrics)
        typescript = servers[1].name
        checks = ratio_checks(
            ratios, {f"{OURS}/{typescript}": TARGET}, throughput, metrics
        )
        names = [server.name for server in servers]
        found = {**installed_node_versions(NODE_V2_DIR, NODE_V2_PEERS)}
        return {
            "title": title,
            "protocol_version": revision,
            "order": names,
            "metrics": metrics,
            "rounds": sizes.rounds,
            "sizes": {
                "warmup": sizes.warmup,
                "sequential": sizes.sequential,
                "pipelined": sizes.pipelined,
                "lists": dict(zip(map(str, TOOL_COUNTS), sizes.lists, strict=True)),
            },
            "node_v2_versions": found,
            **figures_tail(entries, ratios, checks),
        }

    return figures


def report(figures: dict[str, Any]) -> str:
    """One table: contenders as columns, then the ratios and the targets."""
    names: list[str] = figures["order"]
    metrics: dict[str, str] = figures["metrics"]
    headers = ["metric", *names, *(f"ours/{SHORT[n]}" for n in names[1:])]
    return "\n".join(
        [
            f"{figures['title']}, median (min-max) of {figures['rounds']} rounds; "
            "ours/X = ratio of medians",
            table(headers, comparison_rows(figures, names, metrics)),
            *target_lines(figures),
            *version_lines(figures),
            "TypeScript SDK v2: "
            + ", ".join(f"{k} {v}" for k, v in figures["node_v2_versions"].items()),
        ]
    )


def run(
    *, quick: bool = False, sizes: Sizes | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Measure the four tables one after the other; return their figures by
    name (`2025-06-18`, `2025-11-25`, `2026-07-28 stdio`, `2026-07-28 http`)."""
    chosen = sizes or (QUICK if quick else NORMAL)
    results: dict[str, Any] = {}
    for revision in (*LEGACY_REVISIONS, MODERN):
        name = revision if revision != MODERN else f"{MODERN} stdio"
        echo(f"-- {name} --")
        results[name] = run_round_trips(
            functools.partial(stdio_contenders, revision),
            chosen,
            functools.partial(measure_stdio, revision),
            _figures_of(
                f"{revision} over stdio", revision, STDIO_METRICS, STDIO_THROUGHPUT
            ),
            report,
            echo,
        )
    echo(f"-- {MODERN} http --")
    results[f"{MODERN} http"] = run_round_trips(
        http_contenders,
        chosen,
        measure_http,
        _figures_of(
            f"{MODERN} over Streamable HTTP (stateless POSTs)",
            MODERN,
            HTTP_METRICS,
            HTTP_THROUGHPUT,
        ),
        report,
        echo,
    )
    return results

"""Scaling: how the cost of a call grows with the work, ours against the official
SDKs (TypeScript `@modelcontextprotocol/sdk`, Python `mcp`), along three
dimensions, a table each:

- tools/list with `TOOL_COUNTS` (10, 100, 1,000) tools, over stdio. One server
  per count, the count its only argument, each tool `tool_0000` ... taking
  `{message: string, count?: integer}` with a one-line description:
  `programs/app_tools_server.py` (ours: the `App` API with `page_size` None,
  so every tool comes back in one page and one `tools/list` is one whole
  listing), `programs/ts_sdk_tools_server.mjs` (`McpServer.registerTool`) and
  `programs/python_sdk_tools_server.py` (`MCPServer.add_tool`; neither SDK
  paginates). Figures: sequential calls/s (the calls over the sum of their
  latencies), p50 latency (µs), the result's size (bytes) and the start-up
  (spawn to the `initialize` result, ms). Every answer is checked: no
  `nextCursor`, exactly the N tool names, each with an object input schema
  whose `message` is a required string and `count` an integer.
- `tools/call echo` over Streamable HTTP with `CLIENT_COUNTS` (1, 16, 64)
  clients at once: the HTTP benchmark's servers named `ours`, `TypeScript SDK`
  (SSE answers, its default) and `Python SDK`, and its load client
  (`benchmarks.http`: `Server`, `HttpClient`, `drive`; legacy sessions, one
  keep-alive connection and session per client, each client one call at a
  time). Figures: req/s (the calls over the wall time) and p50/p99 latency
  (µs). One server per round serves the three counts (64 sessions first).
- `tools/call echo` with messages of `MESSAGE_SIZES` (1 KB to 1 MB, ASCII
  text) over stdio: the stdio benchmark's servers of those three names
  (`benchmarks.stdio`), one per round for the four sizes. Figures: sequential
  calls/s, MB/s (message bytes echoed per second: size x calls/s), p50
  latency (µs) and the result's size (bytes). Every answer is decoded: one
  text block, the message, and no `structuredContent` but `{"result":
  message}`.

(`ours` in the last two is whatever `benchmarks.stdio` and `benchmarks.http`
call `ours`: the server `mcp-codegen new` scaffolds, an `App`, at the time of
writing; see `scaffold_server.py`.)

The stdio client is the stdio benchmark's `RawClient` (spawn, handshake,
watchdog) with one more method, `exchange`: it writes a request while it reads
(non-blocking stdin, `poll`), so a 1 MB request cannot deadlock against a
server writing into a full pipe, and it gathers a response in a bytearray,
looking for the newline only in the bytes just read (no quadratic rescans of a
1 MB line). A latency runs from the first byte written to the whole response
line read; decoding and checks come after, untimed.

Rounds alternate the contenders (`run_round_trips`: each contender once per
round, the order reversed every other round); each dimension runs its rounds
before the next. Reported are medians with min-max over the rounds and the
ratios of medians ours/other. Each cell makes its calls or stops at
`Sizes.cap_s` (the report says which did), so a slow server cannot stretch
the run. Servers are killed once measured: their shutdown is not measured.

    python -m benchmarks scaling [--quick]
"""

from __future__ import annotations

import compileall
import os
import select
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from . import http, stdio
from ._common import (
    PROTOCOL_VERSION,
    REPO,
    Contender,
    Reply,
    ServerFailedError,
    call_result_decoder,
    cell,
    compare,
    peer_env,
    percentile,
    project_python,
    ratio,
    reply_decoder,
    run_round_trips,
    table,
    version_lines,
)
from .peers import node_executable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path

    from ._common import Echo

TOOL_COUNTS = (10, 100, 1_000)
"""Tools a server registers, one server each, for tools/list."""

CLIENT_COUNTS = (1, 16, 64)
"""HTTP clients (sessions, connections) calling at once."""

MESSAGE_SIZES = (1_000, 10_000, 100_000, 1_000_000)
"""Bytes of the echoed message (1 KB = 1,000 bytes)."""

OURS = "ours"
TS_SDK = "TypeScript SDK"
PY_SDK = "Python SDK"
CONTENDERS = (OURS, TS_SDK, PY_SDK)

PROGRAMS = REPO / "benchmarks" / "programs"

OUR_SOURCES = (REPO / "mcp_specgen_runtime", REPO / "generated" / "mcp_specgen_types")
"""The packages our tools server imports from the repository."""

READ_TIMEOUT = 60.0
"""Seconds without output after which a stdio server is deemed stuck."""

READ_CHUNK = 1 << 20
"""Bytes asked of one read of a server's stdout."""

WRITE_CHUNK = 1 << 20
"""Bytes offered to one write to a server's stdin: what a server's pipe may
hold once grown (the kernel takes what fits; 64 KiB, the default size, made
every 1 MB request 16 writes and 16 wake-ups of the server whatever its pipe)."""

TEXT = "The quick brown fox jumps over. "
"""The echoed messages are this, repeated and cut to size."""

TOOLS_METRICS = {
    "calls_per_s": "calls/s",
    "p50_us": "p50 µs",
    "response_bytes": "response bytes",
    "start_ms": "start-up ms",
}
"""The figures of one tool count: key and label."""

HTTP_METRICS = {"req_per_s": "req/s", "p50_us": "p50 µs", "p99_us": "p99 µs"}
"""The figures of one client count: key and label."""

SIZE_METRICS = {
    "calls_per_s": "calls/s",
    "mb_per_s": "MB/s",
    "p50_us": "p50 µs",
    "response_bytes": "response bytes",
}
"""The figures of one message size: key and label."""

CALLS_MADE = "calls_made"
"""A cell's calls timed: fewer than asked when it hit `Sizes.cap_s`."""

DIMENSIONS: dict[str, tuple[tuple[int, ...], dict[str, str]]] = {
    "tools_list": (TOOL_COUNTS, TOOLS_METRICS),
    "http_clients": (CLIENT_COUNTS, HTTP_METRICS),
    "message_sizes": (MESSAGE_SIZES, SIZE_METRICS),
}
"""The figures' keys: each dimension's cells and metrics."""


@dataclass(frozen=True)
class Sizes:
    """How much work one run does: timed calls per cell, aligned with
    `TOOL_COUNTS`, `CLIENT_COUNTS` and `MESSAGE_SIZES`."""

    rounds: int
    list_calls: tuple[int, ...]
    """tools/list calls per tool count."""
    http_calls: tuple[int, ...]
    """Echo calls per client count, over all the clients."""
    echo_calls: tuple[int, ...]
    """Echo calls per message size."""
    warmup: int
    """Untimed calls before each stdio cell; HTTP: on one client, then two per
    client on all of them, before the timed cells."""
    warmup_s: float
    """Seconds after which a warm-up makes no more calls."""
    cap_s: float
    """Seconds after which a timed cell makes no more calls."""
    start_together: bool = False
    """Spawn a contender's tools servers all at once (their start-ups overlap,
    so start-up ms is not meaningful): quick runs only, to save time."""


NORMAL = Sizes(
    rounds=3,
    list_calls=(300, 40, 10),
    http_calls=(400, 800, 800),
    echo_calls=(1_000, 600, 200, 30),
    warmup=50,
    warmup_s=0.3,
    cap_s=1.5,
)
QUICK = Sizes(
    rounds=1,
    list_calls=(10, 5, 2),
    http_calls=(10, 32, 64),
    echo_calls=(5, 5, 3, 2),
    warmup=2,
    warmup_s=0.1,
    cap_s=0.5,
    start_together=True,
)


# --- requests and their checks --------------------------------------------------------


def tool_name(index: int) -> str:
    """The name of tool `index`, as every tools server spells it."""
    return f"tool_{index:04d}"


def message_of(size: int) -> str:
    """An ASCII message of `size` characters (and bytes), no JSON escapes."""
    return (TEXT * (size // len(TEXT) + 1))[:size]


def list_request(request_id: int) -> bytes:
    """The `tools/list` request line with this id."""
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % request_id


def echo_request(request_id: int, encoded_message: bytes) -> bytes:
    """The `tools/call echo` request line with this id and message (JSON)."""
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":'
        b'{"name":"echo","arguments":{"message":%s}}}\n' % (request_id, encoded_message)
    )


class _Property(msgspec.Struct):
    type: str | None = None


class _InputSchema(msgspec.Struct):
    type: str
    properties: dict[str, _Property] = {}
    required: list[str] = []


class _Tool(msgspec.Struct, rename="camel"):
    name: str
    input_schema: _InputSchema


class _ToolList(msgspec.Struct, rename="camel"):
    tools: list[_Tool]
    next_cursor: str | None = None


_list_decoder = msgspec.json.Decoder(_ToolList)


def tools_problem(result: bytes, n: int) -> str | None:
    """What is wrong with this `tools/list` result for a server of `n` tools:
    every tool in one page, named `tool_name(0..n-1)`, each taking a required
    string `message` and an integer `count`; None when nothing is."""
    try:
        listing = _list_decoder.decode(result)
    except msgspec.DecodeError as exc:
        return f"not a tools/list result: {exc}"
    if listing.next_cursor is not None:
        return "paginated: a nextCursor"
    names = [tool.name for tool in listing.tools]
    if sorted(names) != [tool_name(i) for i in range(n)]:
        return f"{len(names)} tools, not {tool_name(0)}..{tool_name(n - 1)}"
    for tool in listing.tools:
        schema = tool.input_schema
        kinds = {key: prop.type for key, prop in schema.properties.items()}
        if schema.type != "object" or kinds != {
            "message": "string",
            "count": "integer",
        }:
            return f"{tool.name}: input schema {schema!r}"
        if schema.required != ["message"]:
            return f"{tool.name}: required {schema.required!r}"
    return None


def echo_text_problem(result: bytes, message: str) -> str | None:
    """What is wrong with this `tools/call` result echoing `message`, if anything:
    it must hold one text block, the message, and no `structuredContent` or
    `{"result": message}` (the Python SDK's way with a `str` result)."""
    try:
        answer = call_result_decoder.decode(result)
    except msgspec.DecodeError as exc:
        return f"not a tools/call result: {exc}"
    content = answer.content
    if answer.is_error:
        return f"a tool error: {[block.text[:80] for block in content]}"
    if len(content) != 1 or content[0].type != "text":
        return f"not one text block: {[block.type for block in content]}"
    if content[0].text != message:
        text = content[0].text
        return f"wrong echo: {len(text)} characters, {text[:40]!r}..."
    structured = answer.structured_content
    if structured is not None and structured != {"result": message}:
        return f"wrong structuredContent: {str(structured)[:80]}"
    return None


# --- the stdio client -----------------------------------------------------------------


class StdioSession(stdio.RawClient):
    """The stdio benchmark's `RawClient`, plus `exchange` for big messages."""

    def __init__(
        self, contender: Contender, read_timeout: float = READ_TIMEOUT
    ) -> None:
        super().__init__(contender, read_timeout)
        self._poller = select.poll()

    def exchange(self, request: bytes) -> tuple[int, Reply]:
        """Send one request line and read until a response arrives, writing and
        reading as the pipes allow; the ns from the first write to the whole
        response line, and that response (notifications are skipped)."""
        os.set_blocking(self._in, False)
        poller, clock = self._poller, time.perf_counter_ns
        pending = memoryview(request)
        buffer = bytearray(self._buffer)
        scanned = 0
        poller.register(self._out, select.POLLIN)
        poller.register(self._in, select.POLLOUT)
        started = clock()
        try:
            while True:
                events = poller.poll(self._read_timeout * 1000)
                if not events:
                    raise self._fail(f"silent for {self._read_timeout:g} s")
                for fd, event in events:
                    if fd == self._in:
                        if event & (select.POLLERR | select.POLLHUP):
                            raise self._fail("stdin closed")
                        pending = pending[self._write(pending) :]
                        if not pending:
                            poller.unregister(self._in)
                        continue
                    chunk = os.read(self._out, READ_CHUNK)
                    self._reads += 1
                    if not chunk:
                        raise self._fail("stdout closed")
                    buffer += chunk
                    while (newline := buffer.find(b"\n", scanned)) >= 0:
                        elapsed = clock() - started
                        line = bytes(buffer[:newline])
                        del buffer[: newline + 1]
                        scanned = 0
                        if not line.strip():
                            continue
                        reply = reply_decoder.decode(line)
                        if reply.method is not None:
                            continue  # a notification (or a request)
                        if pending:
                            raise self._fail("answered a request not yet written")
                        self._buffer = bytes(buffer)
                        return elapsed, reply
                    scanned = len(buffer)
        finally:
            for fd in (self._in, self._out):
                try:
                    poller.unregister(fd)
                except KeyError:
                    pass

    def _write(self, data: memoryview) -> int:
        try:
            return os.write(self._in, data[:WRITE_CHUNK])
        except BlockingIOError:
            return 0
        except BrokenPipeError:
            raise self._fail("stdin closed") from None

    def call(self, request_of: Callable[[int], bytes]) -> tuple[int, Reply]:
        """`exchange` the request `request_of(id)` gives for the next id; the
        reply must answer that id with a result."""
        request_id = self._next_id
        self._next_id += 1
        latency, reply = self.exchange(request_of(request_id))
        if reply.id != request_id:
            raise self._fail(f"answer to {reply.id!r}, expected {request_id}")
        if not reply.result:
            raise self._fail(f"error answer: {reply.error!r}")
        return latency, reply


def timed_calls(
    session: StdioSession,
    request_of: Callable[[int], bytes],
    problem: Callable[[bytes], str | None],
    calls: int,
    cap_s: float,
) -> tuple[list[int], int]:
    """Up to `calls` calls, none begun after `cap_s` seconds, each checked by
    `problem`; their latencies (ns) and the bytes of the last result."""
    latencies: list[int] = []
    result_bytes = 0
    stop_at = time.perf_counter() + cap_s
    while len(latencies) < calls and (not latencies or time.perf_counter() < stop_at):
        latency, reply = session.call(request_of)
        latencies.append(latency)
        result_bytes = len(reply.result)
        why = problem(reply.result)
        if why:
            raise ServerFailedError(f"{session.name}: {why}")
    return latencies, result_bytes


# --- the cells of a dimension ---------------------------------------------------------


def key(cell_name: object, metric: str) -> str:
    """The flat key of `metric` in a cell: `10/calls_per_s`."""
    return f"{cell_name}/{metric}"


def split_cells(
    entries: dict[str, dict[str, Any]],
    ratios: dict[str, dict[str, float]],
    cells: Iterable[object],
    metrics: Iterable[str],
) -> dict[str, dict[str, Any]]:
    """`compare`'s flat figures regrouped by cell: cell -> {"contenders": name
    -> metric -> stat (with `CALLS_MADE`), "ratios": ours/X -> metric -> ratio}."""
    metrics = list(metrics)
    grouped: dict[str, dict[str, Any]] = {}
    for cell_name in cells:
        keys = {metric: key(cell_name, metric) for metric in [*metrics, CALLS_MADE]}
        grouped[str(cell_name)] = {
            "contenders": {
                name: {metric: entry[flat] for metric, flat in keys.items()}
                for name, entry in entries.items()
            },
            "ratios": {
                pair: {
                    metric: values[keys[metric]]
                    for metric in metrics
                    if keys[metric] in values
                }
                for pair, values in ratios.items()
            },
        }
    return grouped


def _dimension(
    samples: dict[str, list[dict[str, float]]],
    servers: Sequence[Contender],
    cells: Sequence[object],
    metrics: Iterable[str],
    calls: Sequence[int],
) -> dict[str, Any]:
    """The figures every dimension has: the cells, their calls asked, argvs."""
    metrics = list(metrics)
    flat = [key(c, m) for c in cells for m in metrics]
    entries, ratios = compare(
        samples, servers, flat, [key(c, CALLS_MADE) for c in cells]
    )
    return {
        "calls_asked": {str(c): n for c, n in zip(cells, calls, strict=True)},
        "argv": {server.name: server.argv for server in servers},
        "cells": split_cells(entries, ratios, cells, metrics),
    }


# --- dimension 1: tools/list ----------------------------------------------------------


def tools_contenders(peer_python: Path, node_project: Path) -> list[Contender]:
    """The tools servers, in `CONTENDERS` order; each takes its count as the
    one more argument `measure_tools` appends. Our sources are byte-compiled
    first (as `scaffold_server.prepare` does for the other dimensions): under
    `PYTHONDONTWRITEBYTECODE=1` every spawn would compile them again, while
    pip compiled the SDK's packages."""
    for folder in OUR_SOURCES:
        compileall.compile_dir(folder, quiet=1)
    env = dict(os.environ)
    node_env = {**env, "MCP_PEERS_NODE_DIR": str(node_project)}
    return [
        Contender(OURS, [project_python(), str(PROGRAMS / "app_tools_server.py")], env),
        Contender(
            TS_SDK,
            [str(node_executable()), str(PROGRAMS / "ts_sdk_tools_server.mjs")],
            node_env,
        ),
        Contender(
            PY_SDK,
            [str(peer_python), str(PROGRAMS / "python_sdk_tools_server.py")],
            peer_env(),
        ),
    ]


def measure_tools(contender: Contender, sizes: Sizes) -> dict[str, float]:
    """One server per tool count, in turn (or spawned together, see
    `Sizes.start_together`): its start-up, then sequential tools/list calls."""
    servers = [
        Contender(contender.name, [*contender.argv, str(n)], contender.env)
        for n in TOOL_COUNTS
    ]
    spawned: list[tuple[float, StdioSession]] = []
    figures: dict[str, float] = {}
    try:
        if sizes.start_together:
            spawned = [(time.perf_counter(), StdioSession(s)) for s in servers]
        for index, n in enumerate(TOOL_COUNTS):
            if not sizes.start_together:
                spawned.append((time.perf_counter(), StdioSession(servers[index])))
            started, session = spawned[index]
            calls = sizes.list_calls[index]
            for metric, value in _tools_cell(session, started, n, calls, sizes).items():
                figures[key(n, metric)] = value
            session.kill()
    except BaseException:
        for _, session in spawned:
            session.kill()
        raise
    return figures


def _tools_cell(
    session: StdioSession, started: float, n: int, calls: int, sizes: Sizes
) -> dict[str, float]:
    """The handshake of a server of `n` tools spawned at `started`, then
    `calls` tools/list."""

    def problem(result: bytes) -> str | None:
        return tools_problem(result, n)

    session.initialize()
    start_ms = (time.perf_counter() - started) * 1000
    timed_calls(session, list_request, problem, sizes.warmup, sizes.warmup_s)
    latencies, size = timed_calls(session, list_request, problem, calls, sizes.cap_s)
    return {
        "calls_per_s": len(latencies) / (sum(latencies) / 1e9),
        "p50_us": statistics.median(latencies) / 1000,
        "response_bytes": size,
        "start_ms": start_ms,
        CALLS_MADE: len(latencies),
    }


def tools_figures(
    samples: dict[str, list[dict[str, float]]],
    servers: Sequence[Contender],
    sizes: Sizes,
) -> dict[str, Any]:
    """The figures of the tools/list dimension."""
    return {
        "method": (
            "tools/list over stdio, one server per tool count, sequential calls; "
            f"{sizes.rounds} rounds, the order reversed every other round; "
            "median and min-max; ratios of medians. response_bytes: the result "
            "object of the last answer"
        ),
        "protocol_version": PROTOCOL_VERSION,
        "tool_counts": list(TOOL_COUNTS),
        "rounds": sizes.rounds,
        "warmup_calls": sizes.warmup,
        "cap_s": sizes.cap_s,
        "start_together": sizes.start_together,
        **_dimension(samples, servers, TOOL_COUNTS, TOOLS_METRICS, sizes.list_calls),
    }


def tools_report(figures: dict[str, Any]) -> str:
    """The tools/list table."""
    notes = [
        "start-up: spawn to the initialize result"
        + (
            " (not meaningful here: spawned together)"
            if figures["start_together"]
            else ""
        )
        + "; response bytes: the result (the schemas differ: ours says "
        "additionalProperties, the TypeScript SDK $schema and integer bounds, "
        "the Python SDK titles)",
    ]
    return _report(
        figures,
        "tools/list over stdio by number of tools",
        lambda c: f"{c} tools",
        TOOLS_METRICS,
        notes,
    )


# --- dimension 2: HTTP clients --------------------------------------------------------


def http_contenders(peer_python: Path, node_project: Path) -> list[Contender]:
    """The HTTP benchmark's servers named in `CONTENDERS` (the TypeScript SDK in
    its default SSE mode)."""
    chosen = {c.name: c for c in http.contenders(peer_python, node_project)}
    return [chosen[name] for name in CONTENDERS]


def measure_http(contender: Contender, sizes: Sizes) -> dict[str, float]:
    """One server; `CLIENT_COUNTS[-1]` sessions; each client count in turn."""
    server = http.Server(contender)
    clients: list[http.HttpClient] = []
    figures: dict[str, float] = {}
    try:
        for _ in range(max(CLIENT_COUNTS)):
            clients.append(http.HttpClient(server.port))
            clients[-1].handshake()
        http.drive(clients[:1], [sizes.warmup], sizes.warmup_s)
        http.drive(clients, [2] * len(clients), sizes.warmup_s)
        for count, calls in zip(CLIENT_COUNTS, sizes.http_calls, strict=True):
            some = clients[:count]
            wall_s, latencies = http.drive(some, http.shares(calls, count), sizes.cap_s)
            latencies.sort()
            figures[key(count, "req_per_s")] = len(latencies) / wall_s
            figures[key(count, "p50_us")] = percentile(latencies, 0.50) / 1000
            figures[key(count, "p99_us")] = percentile(latencies, 0.99) / 1000
            figures[key(count, CALLS_MADE)] = len(latencies)
    except ServerFailedError as exc:
        raise server.failure(str(exc)) from None
    except OSError as exc:
        raise server.failure(f"connection failed: {exc!r}") from None
    finally:
        for client in clients:
            client.close()
        server.proc.kill()  # no graceful shutdown to wait for
        server.close()
    return figures


def http_figures(
    samples: dict[str, list[dict[str, float]]],
    servers: Sequence[Contender],
    sizes: Sizes,
) -> dict[str, Any]:
    """The figures of the HTTP clients dimension."""
    return {
        "method": (
            "tools/call echo over Streamable HTTP (legacy sessions, keep-alive), "
            "the HTTP benchmark's raw socket client, each client one call at a "
            f"time; req/s: calls over wall time; {sizes.rounds} rounds, the order "
            "reversed every other round; median and min-max; ratios of medians"
        ),
        "protocol_version": PROTOCOL_VERSION,
        "client_counts": list(CLIENT_COUNTS),
        "rounds": sizes.rounds,
        "warmup_calls": sizes.warmup + 2 * max(CLIENT_COUNTS),
        "cap_s": sizes.cap_s,
        **_dimension(samples, servers, CLIENT_COUNTS, HTTP_METRICS, sizes.http_calls),
    }


def http_report(figures: dict[str, Any]) -> str:
    """The HTTP clients table."""
    notes = [
        "a client: one session and keep-alive connection, one call in flight; "
        "the TypeScript and Python SDKs answer SSE streams (their default), ours "
        "JSON"
    ]
    return _report(
        figures,
        "tools/call echo over Streamable HTTP by concurrent clients",
        lambda c: f"{c} client{'' if c == '1' else 's'}",
        HTTP_METRICS,
        notes,
    )


# --- dimension 3: message sizes -------------------------------------------------------


def echo_contenders(peer_python: Path, node_project: Path) -> list[Contender]:
    """The stdio benchmark's echo servers named in `CONTENDERS`."""
    chosen = {c.name: c for c in stdio.contenders(peer_python, node_project)}
    return [chosen[name] for name in CONTENDERS]


def measure_sizes(contender: Contender, sizes: Sizes) -> dict[str, float]:
    """One server; sequential echo calls at each message size in turn."""
    session = StdioSession(contender)
    figures: dict[str, float] = {}
    try:
        session.initialize()
        for size, calls in zip(MESSAGE_SIZES, sizes.echo_calls, strict=True):
            for metric, value in _size_cell(session, size, calls, sizes).items():
                figures[key(size, metric)] = value
    finally:
        session.kill()
    return figures


def _size_cell(
    session: StdioSession, size: int, calls: int, sizes: Sizes
) -> dict[str, float]:
    """`calls` sequential echo calls of a message of `size` bytes."""
    message = message_of(size)
    encoded = msgspec.json.encode(message)

    def request_of(request_id: int) -> bytes:
        return echo_request(request_id, encoded)

    def problem(result: bytes) -> str | None:
        return echo_text_problem(result, message)

    timed_calls(session, request_of, problem, sizes.warmup, sizes.warmup_s)
    latencies, response = timed_calls(session, request_of, problem, calls, sizes.cap_s)
    calls_per_s = len(latencies) / (sum(latencies) / 1e9)
    return {
        "calls_per_s": calls_per_s,
        "mb_per_s": calls_per_s * size / 1e6,
        "p50_us": statistics.median(latencies) / 1000,
        "response_bytes": response,
        CALLS_MADE: len(latencies),
    }


def size_label(size: int) -> str:
    """`1 KB`, `100 KB`, `1 MB` (decimal)."""
    if size >= 1_000_000:
        return f"{size / 1_000_000:g} MB"
    return f"{size / 1_000:g} KB"


def sizes_figures(
    samples: dict[str, list[dict[str, float]]],
    servers: Sequence[Contender],
    sizes: Sizes,
) -> dict[str, Any]:
    """The figures of the message sizes dimension."""
    return {
        "method": (
            "tools/call echo over stdio, one server per round for every size, "
            "sequential calls, each answer's text compared with the message; "
            "MB/s: message bytes x calls/s; response_bytes: the result object "
            "of the last answer; "
            f"{sizes.rounds} rounds, the order reversed every other round; "
            "median and min-max; ratios of medians"
        ),
        "protocol_version": PROTOCOL_VERSION,
        "message_bytes": list(MESSAGE_SIZES),
        "rounds": sizes.rounds,
        "warmup_calls": sizes.warmup,
        "cap_s": sizes.cap_s,
        **_dimension(samples, servers, MESSAGE_SIZES, SIZE_METRICS, sizes.echo_calls),
    }


def sizes_report(figures: dict[str, Any]) -> str:
    """The message sizes table."""
    return _report(
        figures,
        "tools/call echo over stdio by message size",
        lambda c: size_label(int(c)),
        SIZE_METRICS,
        [
            "the message: ASCII text, no JSON escapes; MB = 10^6 bytes; response "
            "bytes: the result (the Python SDK's holds the message twice, as text "
            'and as structuredContent {"result": ...})'
        ],
    )


# --- the run --------------------------------------------------------------------------


def run(
    *, quick: bool = False, sizes: Sizes | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Measure the three dimensions, print a table each, return the figures."""
    chosen = sizes or (QUICK if quick else NORMAL)
    dimensions = {
        "tools_list": (tools_contenders, measure_tools, tools_figures, tools_report),
        "http_clients": (http_contenders, measure_http, http_figures, http_report),
        "message_sizes": (echo_contenders, measure_sizes, sizes_figures, sizes_report),
    }
    results: dict[str, Any] = {}
    for index, (name, (contenders_of, measure, figures_of, report)) in enumerate(
        dimensions.items()
    ):
        if index:
            echo("")
        started = time.perf_counter()
        figures = run_round_trips(
            contenders_of, chosen, measure, figures_of, report, echo
        )
        figures["wall_s"] = round(time.perf_counter() - started, 2)
        results["versions"] = figures.pop("versions")
        results[name] = figures
    echo("\n".join(version_lines(results)))
    return results


# --- the report -----------------------------------------------------------------------


def _capped(figures: dict[str, Any], label_of: Callable[[str], str]) -> list[str]:
    """A line naming the cells that hit the time cap, if any did."""
    short = [
        f"{name} {label_of(c)} {int(entry[CALLS_MADE]['min'])} of "
        f"{figures['calls_asked'][c]}"
        for c, data in figures["cells"].items()
        for name, entry in data["contenders"].items()
        if entry[CALLS_MADE]["min"] < figures["calls_asked"][c]
    ]
    if not short:
        return []
    return [f"capped at {figures['cap_s']:g} s, fewest calls made: " + "; ".join(short)]


def _report(
    figures: dict[str, Any],
    title: str,
    label_of: Callable[[str], str],
    metrics: dict[str, str],
    notes: Iterable[str],
) -> str:
    """A table: a row per cell and metric, the contenders, then the ratios
    ours/other; then how many calls, the notes and the capped cells."""
    others = CONTENDERS[1:]
    rows: list[list[str]] = []
    for cell_name, data in figures["cells"].items():
        entries, ratios = data["contenders"], data["ratios"]
        rows.extend(
            [
                f"{label_of(cell_name)}: {label}",
                *(cell(entries[name][metric]) for name in CONTENDERS),
                *(ratio(ratios[f"{OURS}/{other}"].get(metric)) for other in others),
            ]
            for metric, label in metrics.items()
        )
    calls = ", ".join(f"{label_of(c)} {n}" for c, n in figures["calls_asked"].items())
    headers = ["cell: metric", *CONTENDERS, "ours/TS", "ours/PySDK"]
    return "\n".join(
        [
            f"{title}, median (min-max) of {figures['rounds']} rounds; ours/X = "
            "ratio of medians",
            table(headers, rows),
            f"timed calls per round and server: {calls}",
            *notes,
            *_capped(figures, label_of),
        ]
    )

"""Round trips of `tools/call echo` over stdio: ours against the official SDKs.

Five servers, each spawned directly (no wrapper shell, so the child's pid is
the server's), all in one run:

- `ours`: the server a user gets from `mcp-codegen new`, generated from
  `templates/scaffold/` for the run (`scaffold_server.py`) and run as its
  README says, `python -m scaffold_echo` (the `App` API: its `echo(message:
  str) -> str` tool), with the project's python and the project folder on
  `PYTHONPATH`;
- `ours (ServerSession)`: `programs/codegen_echo_server.py`, a hand-written
  `ServerSession` of our runtime (2025-11-25 and 2026-07-28) without the
  `App` layer, run with the project's python;
- `TypeScript SDK`: `tests/peers/programs/ts_sdk_echo_server.mjs`
  (`@modelcontextprotocol/sdk`), run with `node`;
- `Python SDK`: `tests/peers/programs/python_sdk_echo_server.py` (PyPI `mcp`),
  run with the peer venv's python;
- `bare msgspec`: `programs/bare_msgspec_echo.py`, no MCP library at all: the
  ceiling a Python server can reach.

Every server gets the same legacy session: `initialize` (2025-11-25) and
`notifications/initialized`, a warm-up, then two timed modes:

- sequential: one call at a time; p50/p99 latency (µs), a latency being the
  time from writing a request to reading its whole response line, and calls/s,
  the calls over the sum of their latencies (the client's checks left out);
- pipelined: `IN_FLIGHT` requests in flight at all times; calls/s.

Also measured per session: the server's CPU time per call in each mode (utime
+ stime of /proc/<pid>/stat, clock ticks, read before and after the mode;
includes every thread of the server) and its peak RSS (VmHWM of
/proc/<pid>/status, read before the server is closed). Rounds alternate the
servers (a round spawns each once, the order reversed every other round);
reported are medians with min-max and the ratios of medians ours/other. Every
response is validated (its id is one in flight, its result echoes the message:
one text block, with or without `structuredContent` `{"result": message}`), so
a broken server cannot post a figure.

Cold start is a phase of its own, before the rounds: `Sizes.cold_starts`
spawns of each server, alternating (each server once, the order reversed every
other time), each timed from the spawn to the initialize response read (ms);
median and min-max. For a fair start our sources are byte-compiled first
(`scaffold_server.prepare`): with `PYTHONDONTWRITEBYTECODE=1` they would be
compiled again at every spawn, while pip compiled the SDKs' packages.

Targets: ours at least 1x the TypeScript SDK and 3x the Python SDK in calls/s,
in both modes, a peak RSS of ours of at most 35 MiB and a median cold start of
ours of at most 150 ms (reported met or missed, never asserted).

The load client is the same for every server and kept light: plain
`subprocess.Popen` pipes driven with `os.write`/`os.read` from this one thread,
no asyncio and no reader threads (a watchdog thread, waking once a second, kills
a server silent for `READ_TIMEOUT`). The client never has more than `IN_FLIGHT`
small requests unanswered (a few KiB, far below a pipe's 64 KiB buffer), so a
blocking write cannot deadlock against a server writing its answers; and a
single thread spends no time on an event loop, thread hand-offs or the GIL.
Requests are pre-encoded bytes (only the id differs) built before each timed
mode. In pipelined mode the client refills, after each read, one request per
response read, in one write. Responses are decoded with one typed msgspec
decoder (about a microsecond each).

    python -m benchmarks stdio [--quick]
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Protocol

from ._common import (
    INITIALIZED,
    MESSAGE,
    PROTOCOL_VERSION,
    REPO,
    Contender,
    Reply,
    ServerFailedError,
    call_body,
    compare,
    comparison_rows,
    cpu_ticks,
    figures_tail,
    initialize_body,
    initialize_problem,
    kill_session,
    peak_rss_mib,
    peer_env,
    percentile,
    project_python,
    ratio_checks,
    reply_decoder,
    run_round_trips,
    stat,
    table,
    target_lines,
    version_lines,
)
from .peers import node_executable
from .scaffold_server import echo_problem, env as scaffold_env, prepare, stdio_argv

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ._common import Echo

IN_FLIGHT = 32
"""Requests kept in flight in pipelined mode."""

READ_TIMEOUT = 60.0
"""Seconds without any output after which a server is deemed stuck and killed."""

EXIT_TIMEOUT = 10.0
"""Seconds a server may take to exit once its stdin is closed."""

PROGRAMS = REPO / "benchmarks" / "programs"
PEER_PROGRAMS = REPO / "tests" / "peers" / "programs"

OURS = "ours"
SESSION = "ours (ServerSession)"
TS_SDK = "TypeScript SDK"
PY_SDK = "Python SDK"
BARE = "bare msgspec"
CONTENDERS = (OURS, SESSION, TS_SDK, PY_SDK, BARE)

SHORT = {SESSION: "ServerSession", TS_SDK: "TS", PY_SDK: "PySDK", BARE: "bare"}
"""The other contenders' names in the ratio columns' headers."""

TARGETS = {
    f"ours/{TS_SDK} calls/s": 1.5,
    f"ours/{PY_SDK} calls/s": 3.0,
    f"ours/{BARE} sequential calls/s": 0.6,
    "ours peak RSS MiB (at most)": 27.0,
    "ours cold start ms (at most)": 147.0,
}
"""Throughput ratios ours/other (both modes; against the bare msgspec loop,
sequential only) at least; ours' peak RSS and median cold start at most
(issue 19: no worse than the run before it, 27 MiB and 147 ms)."""

ROUND_METRICS = {
    "sequential_calls_per_s": "sequential calls/s",
    "p50_us": "sequential p50 µs",
    "p99_us": "sequential p99 µs",
    "pipelined_calls_per_s": "pipelined calls/s",
    "cpu_us_per_call_sequential": "server CPU µs/call, seq.",
    "cpu_us_per_call_pipelined": "server CPU µs/call, pipe.",
    "peak_rss_mib": "peak RSS MiB",
}
"""The figures of a session (`measure`, once per round): key and label."""

COLD_START = "cold_start_ms"

METRICS = {**ROUND_METRICS, COLD_START: "cold start ms"}
"""Every figure of a contender: its key and its label in the table (the cold
start from its own phase, `Sizes.cold_starts` samples)."""


@dataclass(frozen=True)
class Sizes:
    """How much work one run does."""

    rounds: int
    warmup: int
    """Calls before the timed modes (half sequential, half pipelined)."""
    sequential: int
    """Calls timed one at a time, per round and server."""
    pipelined: int
    """Calls timed with `IN_FLIGHT` in flight, per round and server."""
    cold_starts: int
    """Spawns of each server timed to its initialize response."""


NORMAL = Sizes(rounds=5, warmup=500, sequential=2_000, pipelined=4_000, cold_starts=12)
QUICK = Sizes(rounds=2, warmup=100, sequential=300, pipelined=600, cold_starts=3)
TINY = Sizes(rounds=1, warmup=4, sequential=20, pipelined=40, cold_starts=1)
"""For the smoke test: every code path, no meaningful figure."""


# --- the wire ---------------------------------------------------------------------


def call_request(request_id: int) -> bytes:
    """The pre-encoded `tools/call echo` request line with this id."""
    return call_body(request_id) + b"\n"


# --- the load client --------------------------------------------------------------


class RawClient:
    """One spawned server, spoken to in raw newline-delimited JSON-RPC."""

    def __init__(
        self, contender: Contender, read_timeout: float = READ_TIMEOUT
    ) -> None:
        self.name = contender.name
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            contender.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=contender.env,
            cwd=REPO,
            bufsize=0,
            start_new_session=True,  # killed with whatever it spawns
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buffer = b""
        self._next_id = 1
        self._reads = 0
        self._read_timeout = read_timeout
        self._stalled = False
        self._done = threading.Event()
        watchdog = threading.Thread(target=self._watch, args=(read_timeout,))
        watchdog.daemon = True
        watchdog.start()

    # lifecycle
    def close(self) -> int | None:
        """Close the server's stdin and reap it (killed if it lingers)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._done.set()
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_session(self.proc)
            self.proc.wait()
            code = None
        self.proc.stdout.close()
        self._stderr.close()
        return code

    def _watch(self, timeout: float) -> None:
        """Kill the server once no read has returned for `timeout` seconds: the
        blocked read then sees end of stream, so a silent server cannot hang us."""
        seen, since = -1, time.monotonic()
        while not self._done.wait(min(1.0, timeout / 4)):
            if self._reads != seen:
                seen, since = self._reads, time.monotonic()
            elif time.monotonic() - since > timeout and self.proc.poll() is None:
                self._stalled = True
                kill_session(self.proc)
                return

    def kill(self) -> None:
        """Stop the server at once (after a failure)."""
        kill_session(self.proc)
        self.close()

    def _fail(self, why: str) -> ServerFailedError:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode(errors="replace")
        return ServerFailedError(f"{self.name}: {why}; stderr: {tail!r}")

    # reading
    def _lines(self) -> list[bytes]:
        """The complete lines available, reading once when none is buffered."""
        while b"\n" not in self._buffer:
            chunk = os.read(self._out, 65536)
            self._reads += 1
            if not chunk:
                stalled = f"silent for {self._read_timeout:g} s, killed"
                raise self._fail(stalled if self._stalled else "stdout closed")
            self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return lines

    def _replies(self) -> list[Reply]:
        """The responses among the available lines (notifications skipped)."""
        replies: list[Reply] = []
        for line in self._lines():
            if not line.strip():
                continue
            reply = reply_decoder.decode(line)
            if reply.method is None:
                replies.append(reply)
        return replies

    def _check(self, reply: Reply, outstanding: set[int]) -> None:
        if not isinstance(reply.id, int) or reply.id not in outstanding:
            raise self._fail(f"answer to no request in flight: {reply.id!r}")
        outstanding.discard(reply.id)
        problem = echo_problem(reply)
        if problem:
            raise self._fail(problem)

    # the session
    revision = PROTOCOL_VERSION
    """The revision the handshake asks for (a subclass may speak another)."""

    def initialize(self) -> None:
        """The handshake at `revision`: initialize (checked) and
        notifications/initialized."""
        body = initialize_body("mcp-codegen-stdio-benchmark", self.revision)
        os.write(self._in, body + b"\n")
        replies: list[Reply] = []
        while not replies:
            replies = self._replies()
        problem = initialize_problem(replies[0], self.revision)
        if len(replies) > 1:
            problem = f"bad initialize answer: {replies!r}"
        if problem:
            raise self._fail(problem)
        os.write(self._in, INITIALIZED + b"\n")

    def request_line(self, request_id: int) -> bytes:
        """The request line of the call with this id (the echo call)."""
        return call_request(request_id)

    def _requests(self, n: int) -> tuple[list[int], list[bytes]]:
        ids = list(range(self._next_id, self._next_id + n))
        self._next_id += n
        return ids, [self.request_line(i) for i in ids]

    def sequential(self, n: int) -> list[int]:
        """`n` calls one at a time; the latency of each, in nanoseconds."""
        ids, requests = self._requests(n)
        latencies = [0] * n
        outstanding: set[int] = set()
        clock, write, stdin = time.perf_counter_ns, os.write, self._in
        for index, request in enumerate(requests):
            outstanding.add(ids[index])
            started = clock()
            write(stdin, request)
            replies = self._replies()
            while not replies:
                replies = self._replies()
            latencies[index] = clock() - started
            for reply in replies:
                self._check(reply, outstanding)
        if outstanding:
            raise self._fail(f"unanswered: {sorted(outstanding)[:5]}")
        return latencies

    def pipelined(self, n: int, depth: int = IN_FLIGHT) -> float:
        """`n` calls with `depth` in flight; the seconds they took."""
        ids, requests = self._requests(n)
        sent = min(depth, n)
        outstanding = set(ids[:sent])
        answered = 0
        started = time.perf_counter()
        os.write(self._in, b"".join(requests[:sent]))
        while answered < n:
            replies = self._replies()
            for reply in replies:
                self._check(reply, outstanding)
            answered += len(replies)
            refill = min(len(replies), n - sent)
            if refill:
                outstanding.update(ids[sent : sent + refill])
                os.write(self._in, b"".join(requests[sent : sent + refill]))
                sent += refill
        elapsed = time.perf_counter() - started
        if outstanding:
            raise self._fail(f"unanswered: {sorted(outstanding)[:5]}")
        return elapsed

    # the server's process
    def cpu_ticks(self) -> int:
        """utime + stime of the server (clock ticks, all its threads)."""
        return cpu_ticks(self.proc.pid)

    def peak_rss_mib(self) -> float:
        """VmHWM of the server, in MiB."""
        peak = peak_rss_mib(self.proc.pid)
        if peak is None:
            raise self._fail("no VmHWM in /proc/<pid>/status")
        return peak


# --- one session ------------------------------------------------------------------


class CallSizes(Protocol):
    """What `timed_modes` reads of a benchmark's sizes."""

    @property
    def warmup(self) -> int: ...
    @property
    def sequential(self) -> int: ...
    @property
    def pipelined(self) -> int: ...


def timed_modes(client: RawClient, sizes: CallSizes) -> dict[str, float]:
    """A warm-up, then both timed modes on a client past its handshake; the
    figures of `ROUND_METRICS`."""
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    client.sequential(sizes.warmup // 2)
    client.pipelined(sizes.warmup - sizes.warmup // 2)

    ticks = client.cpu_ticks()
    latencies = sorted(client.sequential(sizes.sequential))
    seq_ticks = client.cpu_ticks() - ticks
    pipe_s = client.pipelined(sizes.pipelined)
    pipe_ticks = client.cpu_ticks() - ticks - seq_ticks
    return {
        "sequential_calls_per_s": sizes.sequential / (sum(latencies) / 1e9),
        "p50_us": percentile(latencies, 0.50) / 1000,
        "p99_us": percentile(latencies, 0.99) / 1000,
        "pipelined_calls_per_s": sizes.pipelined / pipe_s,
        "cpu_us_per_call_sequential": seq_ticks * tick_us / sizes.sequential,
        "cpu_us_per_call_pipelined": pipe_ticks * tick_us / sizes.pipelined,
        "peak_rss_mib": client.peak_rss_mib(),
    }


def measure(
    contender: Contender, sizes: Sizes, read_timeout: float = READ_TIMEOUT
) -> dict[str, float]:
    """Spawn the server, run one session, return its figures (see
    `ROUND_METRICS`)."""
    client = RawClient(contender, read_timeout)
    try:
        client.initialize()
        figures = timed_modes(client, sizes)
    except BaseException:
        client.kill()
        raise
    client.close()
    return figures


def cold_start(contender: Contender, read_timeout: float = READ_TIMEOUT) -> float:
    """Spawn the server, time it to its initialize response (ms), close it."""
    started = time.perf_counter()
    client = RawClient(contender, read_timeout)
    try:
        client.initialize()
        elapsed_ms = (time.perf_counter() - started) * 1000
    except BaseException:
        client.kill()
        raise
    client.close()
    return elapsed_ms


def cold_starts(servers: Sequence[Contender], spawns: int) -> dict[str, list[float]]:
    """`spawns` cold starts of each server (ms), alternating: each server once,
    the order reversed every other time."""
    found: dict[str, list[float]] = {server.name: [] for server in servers}
    for index in range(spawns):
        for server in servers if index % 2 == 0 else servers[::-1]:
            found[server.name].append(cold_start(server))
    return found


# --- the run ----------------------------------------------------------------------


def contenders(peer_python: Path, node_project: Path) -> list[Contender]:
    """The five servers, in `CONTENDERS` order (the scaffold generated and our
    sources byte-compiled first: `scaffold_server.prepare`)."""
    project = prepare(peer_python)
    ours = project_python()
    env = dict(os.environ)
    node_env = {**env, "MCP_PEERS_NODE_DIR": str(node_project)}
    return [
        Contender(OURS, stdio_argv(), scaffold_env(project)),
        Contender(SESSION, [ours, str(PROGRAMS / "codegen_echo_server.py")], env),
        Contender(
            TS_SDK,
            [str(node_executable()), str(PEER_PROGRAMS / "ts_sdk_echo_server.mjs")],
            node_env,
        ),
        Contender(
            PY_SDK,
            [str(peer_python), str(PEER_PROGRAMS / "python_sdk_echo_server.py")],
            peer_env(),
        ),
        Contender(BARE, [ours, str(PROGRAMS / "bare_msgspec_echo.py")], env),
    ]


def run(
    *, quick: bool = False, sizes: Sizes | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Measure (the cold starts first, then the rounds), print a table, return
    the figures."""
    chosen = sizes or (QUICK if quick else NORMAL)
    starts: dict[str, list[float]] = {}

    def servers(peer_python: Path, node_project: Path) -> list[Contender]:
        found = contenders(peer_python, node_project)
        starts.update(cold_starts(found, chosen.cold_starts))
        return found

    def figures(
        samples: dict[str, list[dict[str, float]]],
        found: Sequence[Contender],
        sizes: Sizes,
    ) -> dict[str, Any]:
        return _figures(samples, found, sizes, starts)

    return run_round_trips(servers, chosen, measure, figures, report, echo)


def _figures(
    samples: dict[str, list[dict[str, float]]],
    servers: Sequence[Contender],
    sizes: Sizes,
    starts: dict[str, list[float]],
) -> dict[str, Any]:
    entries, ratios = compare(samples, servers, ROUND_METRICS)
    for server in servers:
        entries[server.name][COLD_START] = stat(starts[server.name])
    ours = entries[servers[0].name][COLD_START]["median"]
    for other in servers[1:]:
        theirs = entries[other.name][COLD_START]["median"]
        if theirs > 0:
            ratios[f"{servers[0].name}/{other.name}"][COLD_START] = round(
                ours / theirs, 3
            )
    checks = _targets(entries, ratios)
    return {
        "method": (
            "tools/call echo over stdio pipes, a raw single-threaded client; "
            f"cold starts: {sizes.cold_starts} alternating spawns per server; "
            f"{sizes.rounds} rounds, one fresh server each per round, the order "
            "reversed every other round; median and min-max; ratios of medians"
        ),
        "protocol_version": PROTOCOL_VERSION,
        "message": MESSAGE,
        "request_bytes": len(call_request(1)),
        "in_flight": IN_FLIGHT,
        "rounds": sizes.rounds,
        "warmup_calls": sizes.warmup,
        "sequential_calls": sizes.sequential,
        "pipelined_calls": sizes.pipelined,
        "cold_start_spawns": sizes.cold_starts,
        **figures_tail(entries, ratios, checks),
    }


def _targets(
    entries: dict[str, dict[str, Any]], ratios: dict[str, dict[str, float]]
) -> list[dict[str, Any]]:
    """Each target with the value measured and whether it is met."""
    least = {f"ours/{o}": TARGETS[f"ours/{o} calls/s"] for o in (TS_SDK, PY_SDK)}
    keys = ("sequential_calls_per_s", "pipelined_calls_per_s")
    checks = ratio_checks(ratios, least, keys, METRICS)
    bare = {f"ours/{BARE}": TARGETS[f"ours/{BARE} sequential calls/s"]}
    checks += ratio_checks(ratios, bare, keys[:1], METRICS)
    most = TARGETS["ours peak RSS MiB (at most)"]
    peak = entries[OURS]["peak_rss_mib"]["max"]
    checks.append(
        {
            "target": f"ours peak RSS <= {most:g} MiB (largest of the rounds)",
            "value": peak,
            "met": peak <= most,
        }
    )
    slowest = TARGETS["ours cold start ms (at most)"]
    start = entries[OURS][COLD_START]["median"]
    checks.append(
        {
            "target": f"ours cold start <= {slowest:g} ms (median)",
            "value": start,
            "met": start <= slowest,
        }
    )
    return checks


# --- the report -------------------------------------------------------------------


def report(figures: dict[str, Any]) -> str:
    """The table of every figure, contenders as columns, then the targets."""
    rows = comparison_rows(figures, CONTENDERS, METRICS)
    headers = ["metric", *CONTENDERS, *(f"ours/{SHORT[o]}" for o in CONTENDERS[1:])]
    lines = [
        f"tools/call echo over stdio, median (min-max) of {figures['rounds']} "
        f"rounds; per round and server {figures['sequential_calls']} sequential "
        f"and {figures['pipelined_calls']} pipelined calls after "
        f"{figures['warmup_calls']} warm-up calls; ours/X = ratio of medians",
        table(headers, rows),
        "",
        *target_lines(figures),
        f"pipelined: {figures['in_flight']} requests in flight; cold start: spawn "
        f"to the initialize result, {figures['cold_start_spawns']} spawns per "
        "server, alternating, our sources byte-compiled; peak RSS: VmHWM; "
        "server CPU: utime + stime of /proc/<pid>/stat at "
        f"{figures['clock_ticks_per_s']} ticks/s",
        f"request {figures['request_bytes']} bytes, message {figures['message']!r}",
        *version_lines(figures),
    ]
    return "\n".join(lines)

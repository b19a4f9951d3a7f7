"""Round trips of `tools/call echo` over Streamable HTTP: ours against the official
SDKs.

Five servers, each spawned directly (no wrapper shell, so the child's pid is
the server's: node's for the TypeScript SDK, python's for the uvicorn ones) on
a free loopback port, all in one run:

- `ours`: the server a user gets from `mcp-codegen new`, generated from
  `templates/scaffold/` for the run (`scaffold_server.py`) and run as its
  README says, `python -m scaffold_echo --http --port PORT` (the `App` API,
  `app.run("http")`: `serve_http`, uvicorn; its `echo(message: str) -> str`
  tool), with the project's python and the project folder on `PYTHONPATH`; it
  answers JSON (the handler sends nothing before its result);
- `ours (ServerSession)`: `programs/codegen_http_server.py PORT`, `serve_http`
  of the hand-written dual-era echo session of
  `programs/codegen_echo_server.py` (no `App` layer), run with the project's
  python; it answers JSON too;
- `TypeScript SDK`: `tests/peers/programs/ts_sdk_http_server.mjs PORT`
  (`@modelcontextprotocol/sdk`, node's `http` server), answering every POST
  with an SSE stream, its default;
- `TypeScript SDK (JSON)`: the same program with `--json`
  (`enableJsonResponse`), answering JSON bodies;
- `Python SDK`: `tests/peers/programs/python_sdk_http_server.py PORT` (PyPI
  `mcp`, uvicorn), run with the peer venv's python, answering SSE streams.

Every server is waited for until it prints `ready PORT`, but the scaffold's,
which prints nothing: it is waited for until its port accepts a connection
(polled every 10 ms). Then `CONCURRENCY` clients each open one keep-alive
connection and make the legacy handshake themselves (POST `initialize`
2025-11-25, which must answer an `Mcp-Session-Id`; POST
`notifications/initialized`, which must answer 202), so each has its own
session. After a warm-up, two timed modes:

- sequential: one client, one call at a time; p50/p99 latency (µs), a latency
  being the time from sending a request to having parsed its whole response,
  and req/s, the calls over the sum of their latencies (the checks left out);
- concurrent: the `CONCURRENCY` clients at once, each making its share of the
  calls one after the other; req/s, the calls over the wall time of the mode.

A connection the server closed while idle (keep-alive timeouts: 5 s in uvicorn
and node) is reopened before the next mode, untimed; its session goes on.
Calls carry `Mcp-Session-Id` and `MCP-Protocol-Version: 2025-11-25`. Every
response is validated (status 200, the id of the request, a result echoing the
message as one text block, with or without `structuredContent` `{"result":
message}`, none lost), so a broken server cannot post a figure.
Also measured: the server's CPU time per call in each mode (utime + stime of
/proc/<pid>/stat, all its threads, read before and after the mode) and its peak
RSS (VmHWM, read before the server is terminated). Rounds alternate the servers
(a round spawns each once, the order reversed every other round); reported are
medians with min-max and the ratios of medians ours/other. Target: ours at
least 1x the TypeScript SDK (its default, SSE) in req/s, in both modes.

Why not httpx for the load: an httpx client spends about 850 µs of CPU per
request here (measured against ours: `time.thread_time` over 2000 calls), more
than the servers under test, so on this 2-core machine it would measure itself
and take the servers' second core. The load client is instead the same raw
HTTP/1.1 client for every server, in this one thread: a non-blocking `socket`
per connection (TCP_NODELAY), driven by one `selectors` loop in both modes (no
threads, so no GIL hand-offs); requests pre-encoded before each timed mode
(only the JSON-RPC id differs, and with it Content-Length); a response parsed
from its status line, headers and body (by Content-Length or
`Transfer-Encoding: chunked`; of a `text/event-stream` body, the `data:` of the
event carrying the response) and decoded with one typed msgspec decoder. Its
own CPU per request, reported with the figures, is about 65-115 µs here
(about 55% in user space: the parsing and checks take under 10 µs of that; the
rest is syscalls, loopback TCP work being charged to the sender), a tenth of
httpx's.

Calls are timed until `Sizes.cap_s`: a server slower than that makes fewer
calls (the report says so). (The Python SDK's test program once bound its
socket with protocol 0, so asyncio left TCP_NODELAY off and each SSE answer
waited ~40 ms for a delayed ACK; it now says IPPROTO_TCP.)

    python -m benchmarks http [--quick]
"""

from __future__ import annotations

import os
import select
import selectors
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, NamedTuple

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
    number,
    peak_rss_mib,
    peer_env,
    percentile,
    project_python,
    ratio_checks,
    reply_decoder,
    run_round_trips,
    table,
    target_lines,
    version_lines,
)
from .peers import node_executable
from .scaffold_server import echo_problem, env as scaffold_env, http_argv, prepare

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from ._common import Echo

HOST = "127.0.0.1"
MCP_PATH = "/mcp"

CONCURRENCY = 16
"""Clients (sessions, connections) in concurrent mode."""

READ_TIMEOUT = 30.0
"""Seconds without any answer after which a server is deemed stuck."""

READY_TIMEOUT = 60.0
"""Seconds a server may take to print its ready line."""

EXIT_TIMEOUT = 10.0
"""Seconds a server may take to exit once terminated (then it is killed)."""

PORT = "{port}"
"""Stands in a `Contender`'s argv for the port it is given."""

PROGRAMS = REPO / "benchmarks" / "programs"
PEER_PROGRAMS = REPO / "tests" / "peers" / "programs"

OURS = "ours"
SESSION = "ours (ServerSession)"
TS_SDK = "TypeScript SDK"
TS_JSON = "TypeScript SDK (JSON)"
PY_SDK = "Python SDK"
CONTENDERS = (OURS, SESSION, TS_SDK, TS_JSON, PY_SDK)

SHORT = {SESSION: "ServerSession", TS_SDK: "TS", TS_JSON: "TS-JSON", PY_SDK: "PySDK"}
"""The other contenders' names in the ratio columns' headers."""

SILENT = frozenset({OURS})
"""Servers that print no ready line: up once their port accepts a connection."""

POLL_S = 0.01
"""Seconds between two connection attempts to a `SILENT` server starting up."""

TARGETS = {f"ours/{TS_SDK} req/s": 1.5}
"""Throughput ratios ours/other (both modes), at least."""

METRICS = {
    "sequential_req_per_s": "sequential req/s",
    "p50_us": "sequential p50 µs",
    "p99_us": "sequential p99 µs",
    "concurrent_req_per_s": f"{CONCURRENCY} clients req/s",
    "cpu_us_per_req_sequential": "server CPU µs/req, seq.",
    "cpu_us_per_req_concurrent": "server CPU µs/req, conc.",
    "peak_rss_mib": "peak RSS MiB",
}
"""Every figure of a server: its key and its label in the table."""

CLIENT_METRICS = {
    "client_cpu_us_per_req_sequential": "seq.",
    "client_cpu_us_per_req_concurrent": "conc.",
}
"""The load client's own CPU per request, per server and mode."""

CALLS_MADE = ("sequential_calls_made", "concurrent_calls_made")
"""The calls a timed mode made: fewer than asked when it hit `Sizes.cap_s`."""


@dataclass(frozen=True)
class Sizes:
    """How much work one run does."""

    rounds: int
    warmup: int
    """Calls before the timed modes (half sequential, half concurrent)."""
    sequential: int
    """Calls timed one at a time, per round and server."""
    concurrent: int
    """Calls timed over `CONCURRENCY` clients, per round and server."""
    cap_s: float
    """Seconds after which a timed mode sends no more calls (a warm-up half:
    a third of it), so that a slow server cannot stretch the run."""


NORMAL = Sizes(rounds=5, warmup=1_000, sequential=2_000, concurrent=4_000, cap_s=6)
QUICK = Sizes(rounds=2, warmup=200, sequential=300, concurrent=600, cap_s=1.5)
TINY = Sizes(rounds=1, warmup=4, sequential=20, concurrent=40, cap_s=30)
"""For the smoke test: every code path, no meaningful figure."""


# --- HTTP/1.1 responses ----------------------------------------------------------


class Response(NamedTuple):
    """A parsed response: status, headers (lower-case names) and whole body."""

    status: int
    headers: dict[bytes, bytes]
    body: bytes


def parse_response(data: bytes) -> tuple[Response, int] | None:
    """The first whole response in `data` and the bytes it takes, or None while
    it is incomplete; `ValueError` when it is not HTTP/1.1 framed as we read it."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    status_line, *lines = data[:end].split(b"\r\n")
    version, _, rest = status_line.partition(b" ")
    if not version.startswith(b"HTTP/1.") or not rest[:3].isdigit():
        raise ValueError(f"bad status line {status_line!r}")
    status = int(rest[:3])
    headers: dict[bytes, bytes] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon:
            raise ValueError(f"bad header line {line!r}")
        headers[name.strip().lower()] = value.strip()
    start = end + 4
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        return _dechunk(data, start, status, headers)
    length = headers.get(b"content-length")
    if length is not None:
        stop = start + int(length)
        if len(data) < stop:
            return None
        return Response(status, headers, data[start:stop]), stop
    if status < 200 or status in (204, 304):
        return Response(status, headers, b""), start
    raise ValueError("a body ended by closing the connection: no keep-alive")


def _dechunk(
    data: bytes, pos: int, status: int, headers: dict[bytes, bytes]
) -> tuple[Response, int] | None:
    """A chunked body from `pos` on (see `parse_response`)."""
    chunks: list[bytes] = []
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(data[pos:eol].split(b";", 1)[0], 16)
        pos = eol + 2
        if size == 0:
            break
        if len(data) < pos + size + 2:
            return None
        if data[pos + size : pos + size + 2] != b"\r\n":
            raise ValueError("a chunk not followed by CRLF")
        chunks.append(data[pos : pos + size])
        pos += size + 2
    while True:  # the trailer fields, up to an empty line
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            return None
        if eol == pos:
            return Response(status, headers, b"".join(chunks)), eol + 2
        pos = eol + 2


def reply_of(response: Response) -> Reply:
    """The JSON-RPC response a body carries: the JSON body itself, or the first
    event of an SSE stream whose data is a response (not a request or
    notification); `ValueError` when there is none."""
    if not response.headers.get(b"content-type", b"").startswith(b"text/event-stream"):
        return reply_decoder.decode(response.body)
    for event in response.body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [
            line[5:].removeprefix(b" ")
            for line in event.split(b"\n")
            if line.startswith(b"data:")
        ]
        if data:
            reply = reply_decoder.decode(b"\n".join(data))
            if reply.method is None:
                return reply
    raise ValueError("no event of the stream carries a response")


# --- the load client --------------------------------------------------------------


class HttpClient:
    """One keep-alive connection to a server and one MCP session over it."""

    def __init__(self, port: int, timeout: float = READ_TIMEOUT) -> None:
        self.timeout = timeout
        self.port = port
        self.sock = self._connect()
        self._head = (
            f"POST {MCP_PATH} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            "Accept: application/json, text/event-stream\r\n"
            "Content-Type: application/json\r\n"
        ).encode()
        self._buffer = b""
        self._next_id = 1
        # the calls of the current mode: their ids, requests, how many were sent
        self._ids: list[int] = []
        self._queue: list[bytes] = []
        self.sent = 0
        self.sent_at = 0

    def _connect(self) -> socket.socket:
        sock = socket.create_connection((HOST, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        return sock

    def reconnect_if_closed(self) -> None:
        """Open a new connection when the server closed this one while it was
        idle (keep-alive timeouts: 5 s in uvicorn and node), as HTTP clients
        do; the session outlives its connections."""
        try:
            if self.sock.recv(1, socket.MSG_PEEK):
                raise self._fail("data nobody asked for")
        except BlockingIOError:
            return  # open, and nothing to read
        except ConnectionResetError:
            pass
        self.sock.close()
        self.sock = self._connect()

    def close(self) -> None:
        """Close the connection."""
        self.sock.close()

    @staticmethod
    def _fail(why: str) -> ServerFailedError:
        return ServerFailedError(why)

    def _post(self, body: bytes) -> bytes:
        return b"%sContent-Length: %d\r\n\r\n%s" % (self._head, len(body), body)

    # reading
    def feed(self) -> Response | None:
        """Read what has arrived; the response once it is whole."""
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            return None
        if not chunk:
            raise self._fail("the server closed the connection")
        self._buffer += chunk
        try:
            parsed = parse_response(self._buffer)
        except ValueError as exc:
            why = f"malformed response ({exc}): {self._buffer[:300]!r}"
            raise self._fail(why) from None
        if parsed is None:
            return None
        response, used = parsed
        self._buffer = self._buffer[used:]
        return response

    def exchange(self, request: bytes) -> Response:
        """Send `request`, wait for its response (untimed: the handshake)."""
        self.sock.sendall(request)
        while True:
            readable, _, _ = select.select([self.sock], [], [], self.timeout)
            if not readable:
                raise self._fail(f"silent for {self.timeout:g} s")
            response = self.feed()
            if response is not None:
                return response

    def handshake(self) -> None:
        """initialize (checked, its session id kept), notifications/initialized."""
        answer = self.exchange(self._post(initialize_body("mcp-codegen-http-bench")))
        session = answer.headers.get(b"mcp-session-id")
        if answer.status != 200 or not session:
            raise self._fail(f"initialize: {answer.status} {answer.headers!r}")
        problem = initialize_problem(self._reply(answer))
        if problem:
            raise self._fail(problem)
        self._head += b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n" % (
            session,
            PROTOCOL_VERSION.encode(),
        )
        answer = self.exchange(self._post(INITIALIZED))
        if answer.status != 202:
            raise self._fail(f"notifications/initialized: {answer.status}, not 202")

    def _reply(self, response: Response) -> Reply:
        try:
            return reply_of(response)
        except ValueError as exc:
            why = f"no JSON-RPC response ({exc}): {response.body[:300]!r}"
            raise self._fail(why) from None

    # the calls
    def request_body(self, request_id: int) -> bytes:
        """The body of the call with this id (the legacy echo call)."""
        return call_body(request_id)

    def load(self, n: int) -> None:
        """Encode the next `n` calls, to be sent by `send_next`."""
        self._ids = list(range(self._next_id, self._next_id + n))
        self._next_id += n
        self._queue = [self._post(self.request_body(i)) for i in self._ids]
        self.sent = 0

    def send_next(self) -> None:
        """Send the next loaded call, noting when."""
        request = self._queue[self.sent]
        self.sent += 1
        self.sent_at = time.perf_counter_ns()
        self.sock.sendall(request)

    def check(self, response: Response) -> None:
        """The answer to the last call sent must echo the message."""
        if response.status != 200:
            raise self._fail(f"status {response.status}: {response.body[:300]!r}")
        reply = self._reply(response)
        expected = self._ids[self.sent - 1]
        if reply.id != expected:
            raise self._fail(f"answer to {reply.id!r}, expected {expected}")
        problem = echo_problem(reply)
        if problem:
            raise self._fail(problem)

    @property
    def done(self) -> bool:
        """Whether every loaded call was sent."""
        return self.sent == len(self._queue)


def drive(
    clients: Sequence[HttpClient], counts: Sequence[int], cap_s: float
) -> tuple[float, list[int]]:
    """Each client makes its count of calls, one after the other, all clients at
    once, sending none after `cap_s` seconds; the seconds it took and the
    latency of every call made (ns)."""
    selector = selectors.DefaultSelector()
    busy = [client for client, n in zip(clients, counts, strict=True) if n]
    for client, n in zip(clients, counts, strict=True):
        client.load(n)
    for client in busy:
        client.reconnect_if_closed()
    latencies: list[int] = []
    record, clock = latencies.append, time.perf_counter_ns
    started = time.perf_counter()
    stop_at = clock() + int(cap_s * 1e9)
    for client in busy:
        selector.register(client.sock, selectors.EVENT_READ, client)
        client.send_next()
    waiting = len(busy)
    try:
        while waiting:
            events = selector.select(READ_TIMEOUT)
            if not events:
                raise ServerFailedError(
                    f"silent for {READ_TIMEOUT:g} s, {waiting} clients waiting"
                )
            for key, _ in events:
                client = key.data
                response = client.feed()
                if response is None:
                    continue
                now = clock()
                record(now - client.sent_at)
                client.check(response)
                if client.done or now > stop_at:
                    selector.unregister(client.sock)
                    waiting -= 1
                else:
                    client.send_next()
        return time.perf_counter() - started, latencies
    finally:
        selector.close()


def shares(n: int, ways: int = CONCURRENCY) -> list[int]:
    """`n` calls split as evenly as can be over `ways` clients."""
    each, extra = divmod(n, ways)
    return [each + (index < extra) for index in range(ways)]


# --- a server ---------------------------------------------------------------------


def free_port() -> int:
    """A loopback port nothing listens on (just now)."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    """A spawned server, up once it printed `ready PORT`."""

    def __init__(self, contender: Contender, ready_timeout: float = READY_TIMEOUT):
        self.name = contender.name
        self.port = free_port()
        argv = [str(self.port) if arg == PORT else arg for arg in contender.argv]
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=contender.env,
            cwd=REPO,
            start_new_session=True,  # killed with whatever it spawns
        )
        try:
            if contender.name in SILENT:
                self._wait_listening(ready_timeout)
            else:
                self._wait_ready(ready_timeout)
        except BaseException:
            self.close()
            raise

    def _wait_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection((HOST, self.port), timeout=1.0):
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise self.failure(f"exited before listening: {self.proc.returncode}")
            if time.monotonic() > deadline:
                raise self.failure(f"not listening within {timeout:g} s")
            time.sleep(POLL_S)

    def _wait_ready(self, timeout: float) -> None:
        assert self.proc.stdout is not None
        out, deadline = b"", time.monotonic() + timeout
        while b"\n" not in out:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.failure(f"no ready line within {timeout:g} s: {out!r}")
            readable, _, _ = select.select([self.proc.stdout], [], [], left)
            if readable:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    raise self.failure(f"exited before ready: {self.proc.wait()}")
                out += chunk
        line = out.split(b"\n", 1)[0].strip()
        if line != b"ready %d" % self.port:
            raise self.failure(f"not the ready line: {line!r}")

    def failure(self, why: str) -> ServerFailedError:
        """`why`, with the tail of the server's stderr."""
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode(errors="replace")
        return ServerFailedError(f"{self.name}: {why}; stderr: {tail!r}")

    def close(self) -> None:
        """Terminate the server (killed if it lingers) and reap it."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_session(self.proc)
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self._stderr.close()


# --- one session ------------------------------------------------------------------


def measure(
    contender: Contender,
    sizes: Sizes,
    read_timeout: float = READ_TIMEOUT,
    client_of: Callable[[int, float], HttpClient] = HttpClient,
) -> dict[str, float]:
    """Spawn the server, run both modes with clients `client_of(port,
    read_timeout)` (each makes its own handshake), return its figures (see
    `METRICS`)."""
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    server = Server(contender)
    clients: list[HttpClient] = []
    try:
        for _ in range(CONCURRENCY):
            clients.append(client_of(server.port, read_timeout))
            clients[-1].handshake()
        drive(clients[:1], [sizes.warmup // 2], sizes.cap_s / 3)
        drive(clients, shares(sizes.warmup - sizes.warmup // 2), sizes.cap_s / 3)

        pid = server.proc.pid  # node's or python's: spawned directly
        ticks, cpu = cpu_ticks(pid), time.thread_time()
        _, latencies = drive(clients[:1], [sizes.sequential], sizes.cap_s)
        seq_ticks, seq_cpu = cpu_ticks(pid) - ticks, time.thread_time() - cpu
        conc_s, made = drive(clients, shares(sizes.concurrent), sizes.cap_s)
        conc_ticks = cpu_ticks(pid) - ticks - seq_ticks
        conc_cpu = time.thread_time() - cpu - seq_cpu
        peak = peak_rss_mib(pid)
        if peak is None:
            raise ServerFailedError("no VmHWM in /proc/<pid>/status")
    except ServerFailedError as exc:
        raise server.failure(str(exc)) from None
    except OSError as exc:
        raise server.failure(f"connection failed: {exc!r}") from None
    finally:
        for client in clients:
            client.close()
        server.close()
    latencies.sort()
    seq_n, conc_n = len(latencies), len(made)
    return {
        "sequential_req_per_s": seq_n / (sum(latencies) / 1e9),
        "p50_us": percentile(latencies, 0.50) / 1000,
        "p99_us": percentile(latencies, 0.99) / 1000,
        "concurrent_req_per_s": conc_n / conc_s,
        "cpu_us_per_req_sequential": seq_ticks * tick_us / seq_n,
        "cpu_us_per_req_concurrent": conc_ticks * tick_us / conc_n,
        "peak_rss_mib": peak,
        "client_cpu_us_per_req_sequential": seq_cpu * 1e6 / seq_n,
        "client_cpu_us_per_req_concurrent": conc_cpu * 1e6 / conc_n,
        "sequential_calls_made": seq_n,
        "concurrent_calls_made": conc_n,
    }


# --- the run ----------------------------------------------------------------------


def contenders(peer_python: Path, node_project: Path) -> list[Contender]:
    """The five servers, in `CONTENDERS` order (the scaffold generated and our
    sources byte-compiled first: `scaffold_server.prepare`)."""
    project = prepare(peer_python)
    env = dict(os.environ)
    node_env = {**env, "MCP_PEERS_NODE_DIR": str(node_project)}
    node = [str(node_executable()), str(PEER_PROGRAMS / "ts_sdk_http_server.mjs")]
    return [
        Contender(OURS, http_argv(PORT), scaffold_env(project)),
        Contender(
            SESSION,
            [project_python(), str(PROGRAMS / "codegen_http_server.py"), PORT],
            env,
        ),
        Contender(TS_SDK, [*node, PORT], node_env),
        Contender(TS_JSON, [*node, PORT, "--json"], node_env),
        Contender(
            PY_SDK,
            [str(peer_python), str(PEER_PROGRAMS / "python_sdk_http_server.py"), PORT],
            peer_env(),
        ),
    ]


def run(
    *, quick: bool = False, sizes: Sizes | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Measure, print a table, return the figures."""
    chosen = sizes or (QUICK if quick else NORMAL)
    return run_round_trips(contenders, chosen, measure, _figures, report, echo)


def _figures(
    samples: dict[str, list[dict[str, float]]],
    servers: Sequence[Contender],
    sizes: Sizes,
) -> dict[str, Any]:
    entries, ratios = compare(samples, servers, METRICS, (*CLIENT_METRICS, *CALLS_MADE))
    least = {f"ours/{TS_SDK}": TARGETS[f"ours/{TS_SDK} req/s"]}
    keys = ("sequential_req_per_s", "concurrent_req_per_s")
    checks = ratio_checks(ratios, least, keys, METRICS)
    return {
        "method": (
            "tools/call echo over Streamable HTTP (legacy sessions, HTTP/1.1 "
            "keep-alive), a raw single-threaded socket client; "
            f"{sizes.rounds} rounds, one fresh server each per round, the order "
            "reversed every other round; median and min-max; ratios of medians"
        ),
        "protocol_version": PROTOCOL_VERSION,
        "message": MESSAGE,
        "body_bytes": len(call_body(1)),
        "concurrency": CONCURRENCY,
        "rounds": sizes.rounds,
        "warmup_calls": sizes.warmup,
        "sequential_calls": sizes.sequential,
        "concurrent_calls": sizes.concurrent,
        "cap_s": sizes.cap_s,
        **figures_tail(entries, ratios, checks),
    }


# --- the report -------------------------------------------------------------------


def _capped(figures: dict[str, Any]) -> list[str]:
    """A line naming the modes that hit the time cap, if any did."""
    asked = {
        "sequential_calls_made": figures["sequential_calls"],
        "concurrent_calls_made": figures["concurrent_calls"],
    }
    short = [
        f"{name} {key.split('_')[0]} {int(entry[key]['min'])} of {asked[key]}"
        for name, entry in figures["contenders"].items()
        for key in CALLS_MADE
        if entry[key]["min"] < asked[key]
    ]
    if not short:
        return []
    return [f"capped at {figures['cap_s']:g} s, fewest calls made: " + "; ".join(short)]


def report(figures: dict[str, Any]) -> str:
    """The table of every figure, servers as columns, then the targets."""
    rows = comparison_rows(figures, CONTENDERS, METRICS)
    headers = ["metric", *CONTENDERS, *(f"ours/{SHORT[o]}" for o in CONTENDERS[1:])]
    entries = figures["contenders"]
    client_cpu = "; ".join(
        f"{name} "
        + "/".join(number(entries[name][key]["median"]) for key in CLIENT_METRICS)
        for name in CONTENDERS
    )
    lines = [
        "tools/call echo over Streamable HTTP, median (min-max) of "
        f"{figures['rounds']} rounds; per round and server "
        f"{figures['sequential_calls']} sequential calls and "
        f"{figures['concurrent_calls']} over {figures['concurrency']} clients "
        f"after {figures['warmup_calls']} warm-up calls; ours/X = ratio of medians",
        table(headers, rows),
        "",
        *target_lines(figures),
        f"{figures['concurrency']} clients: one session and keep-alive connection "
        "each, one call in flight each; peak RSS: VmHWM; server CPU: utime + "
        f"stime of /proc/<pid>/stat at {figures['clock_ticks_per_s']} ticks/s",
        "load client CPU µs/req (seq./conc.): " + client_cpu,
        *_capped(figures),
        f"request body {figures['body_bytes']} bytes, message "
        f"{figures['message']!r}",
        *version_lines(figures),
    ]
    return "\n".join(lines)

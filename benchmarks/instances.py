"""Several instances: what Redis and a proxy cost a `tools/call echo`.

    python -m benchmarks instances [--quick]

Setups, each started fresh per round (`benchmarks.cluster.ClusterHarness`:
`benchmarks.cluster_server` instances, a private `redis-server`, the
round-robin proxy `benchmarks.proxy` as its own process):

- `1, memory`: one instance without Redis (today's in-memory stores), the
  load client talking to it directly;
- `1, Redis`: one instance in cluster mode (`App(redis=URL)`), directly;
- `proxy + 1, memory`: the first behind the proxy: the proxy's own cost;
- `proxy + 2, memory`: two instances without Redis behind the proxy, 2026
  only (legacy sessions need Redis to be served by both);
- `proxy + 2, Redis`: two instances in cluster mode behind the proxy;
- `forwarded`: two instances in cluster mode, the legacy session opened on
  one and every call sent straight to the other, which forwards it to the
  session's home through Redis and relays the answer (legacy only).

Both eras: legacy (2025-11-25 sessions: `initialize` once per client) and
2026-07-28 (stateless; the `_meta` envelope and the `MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name` headers on every call). The load client is the HTTP
benchmark's raw socket client (`benchmarks.http.HttpClient`, one keep-alive
connection per client, every answer checked), driven from this thread;
figures as in `benchmarks.http`: sequential req/s and p50/p99 latency (one
client), `CONCURRENCY` (16) clients req/s, and the CPU each process took per
request (instances summed, the proxy apart, the load client's own thread).

What a 2-core machine can show: the load client, the proxy and the instances
share two cores, so two instances cannot double the throughput of one here;
the proxy (a Python process doing as much HTTP work per request as an
instance) takes a core's share of its own. The CPU per request columns say
where the time goes; req/s across setups compares the overheads, not the
scaling a machine with spare cores would show.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from ._common import MESSAGE, ServerFailedError, cpu_ticks, percentile
from .cluster import ClusterHarness
from .http import CONCURRENCY, HttpClient, drive, shares
from .redis_server import RedisServer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._common import Echo

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = ("legacy", "2026")


@dataclass(frozen=True)
class Sizes:
    """How much work one run does."""

    rounds: int
    warmup: int
    sequential: int
    concurrent: int
    cap_s: float


NORMAL = Sizes(rounds=3, warmup=400, sequential=2_000, concurrent=4_000, cap_s=8)
QUICK = Sizes(rounds=1, warmup=100, sequential=300, concurrent=600, cap_s=2)
TINY = Sizes(rounds=1, warmup=4, sequential=20, concurrent=48, cap_s=30)
"""For the smoke test: every code path, no meaningful figure."""


@dataclass(frozen=True)
class Setup:
    """A way to run the instances, and who the load client talks to."""

    name: str
    instances: int
    redis: bool
    proxy: bool
    eras: tuple[str, ...] = ERAS
    forwarded: bool = False


SETUPS = (
    Setup("1, memory", 1, redis=False, proxy=False),
    Setup("1, Redis", 1, redis=True, proxy=False),
    Setup("proxy + 1, memory", 1, redis=False, proxy=True),
    Setup("proxy + 2, memory", 2, redis=False, proxy=True, eras=("2026",)),
    Setup("proxy + 2, Redis", 2, redis=True, proxy=True),
    Setup("forwarded", 2, redis=True, proxy=False, eras=("legacy",), forwarded=True),
)


_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
_MODERN_SUFFIX = msgspec.json.encode(
    {
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"message": MESSAGE},
            "_meta": _MODERN_META,
        },
    }
)[1:]


class ModernClient(HttpClient):
    """The raw client speaking 2026-07-28: no session, the envelope and the
    headers on every call."""

    def handshake(self) -> None:
        """No handshake in 2026; only the headers every call carries."""
        self._head += (
            b"MCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
            % MODERN.encode()
        )

    def load(self, n: int) -> None:
        """Encode the next `n` 2026 calls."""
        self._ids = list(range(self._next_id, self._next_id + n))
        self._next_id += n
        self._queue = [
            self._post(b'{"jsonrpc":"2.0","id":%d,%s' % (i, _MODERN_SUFFIX))
            for i in self._ids
        ]
        self.sent = 0


def move(client: HttpClient, port: int) -> None:
    """Point a client's connection at another instance (its session kept)."""
    client.sock.close()
    old = b"Host: 127.0.0.1:%d\r\n" % client.port
    head = client._head  # pyright: ignore[reportPrivateUsage]
    assert old in head
    client._head = head.replace(old, b"Host: 127.0.0.1:%d\r\n" % port)
    client.port = port
    client.sock = client._connect()  # pyright: ignore[reportPrivateUsage]


def measure(setup: Setup, era: str, sizes: Sizes, redis_url: str) -> dict[str, float]:
    """Start `setup`, run both modes of `era`, return the figures."""
    prefix = f"bench:{os.urandom(4).hex()}:"
    harness = ClusterHarness(
        setup.instances,
        redis_url=redis_url if setup.redis else None,
        prefix=prefix,
        proxy="process" if setup.proxy else None,
    )
    with harness:
        port = harness.proxy_port if setup.proxy else harness.instances[0].port
        make: Callable[[int], HttpClient] = (
            ModernClient if era == "2026" else HttpClient
        )
        clients = [make(port) for _ in range(1 if setup.forwarded else CONCURRENCY)]
        try:
            for client in clients:
                client.handshake()
                if setup.forwarded:
                    move(client, harness.instances[1].port)
            return _timed(harness, clients, sizes, modes=1 if setup.forwarded else 2)
        except (ServerFailedError, OSError) as exc:
            logs = "\n".join(harness.log(i) for i in range(len(harness.instances)))
            raise ServerFailedError(f"{setup.name}, {era}: {exc!r}\n{logs}") from None
        finally:
            for client in clients:
                client.close()


def _timed(
    harness: ClusterHarness, clients: list[HttpClient], sizes: Sizes, modes: int
) -> dict[str, float]:
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    drive(clients[:1], [sizes.warmup // 2], sizes.cap_s / 3)
    if modes == 2:
        drive(clients, shares(sizes.warmup - sizes.warmup // 2), sizes.cap_s / 3)
    pids = [i.proc.pid for i in harness.instances]
    proxy_pid = harness.proxy_proc.pid if harness.proxy_proc is not None else None

    def ticks() -> tuple[int, int, float]:
        proxy = cpu_ticks(proxy_pid) if proxy_pid is not None else 0
        return sum(cpu_ticks(p) for p in pids), proxy, time.thread_time()

    before = ticks()
    _, latencies = drive(clients[:1], [sizes.sequential], sizes.cap_s)
    middle = ticks()
    seq_n = len(latencies)
    latencies.sort()
    figures = {
        "sequential_req_per_s": seq_n / (sum(latencies) / 1e9),
        "p50_us": percentile(latencies, 0.50) / 1000,
        "p99_us": percentile(latencies, 0.99) / 1000,
        "instances_cpu_us_per_req_sequential": (middle[0] - before[0])
        * tick_us
        / seq_n,
        "proxy_cpu_us_per_req_sequential": (middle[1] - before[1]) * tick_us / seq_n,
        "client_cpu_us_per_req_sequential": (middle[2] - before[2]) * 1e6 / seq_n,
    }
    if modes == 2:
        conc_s, made = drive(clients, shares(sizes.concurrent), sizes.cap_s)
        after = ticks()
        n = len(made)
        figures |= {
            "concurrent_req_per_s": n / conc_s,
            "instances_cpu_us_per_req_concurrent": (after[0] - middle[0]) * tick_us / n,
            "proxy_cpu_us_per_req_concurrent": (after[1] - middle[1]) * tick_us / n,
            "client_cpu_us_per_req_concurrent": (after[2] - middle[2]) * 1e6 / n,
        }
    return figures


METRICS = {
    "sequential_req_per_s": "seq. req/s",
    "p50_us": "p50 µs",
    "p99_us": "p99 µs",
    "concurrent_req_per_s": f"{CONCURRENCY} clients req/s",
    "instances_cpu_us_per_req_sequential": "instances CPU µs/req, seq.",
    "instances_cpu_us_per_req_concurrent": "instances CPU µs/req",
    "proxy_cpu_us_per_req_concurrent": "proxy CPU µs/req",
    "client_cpu_us_per_req_concurrent": "load client CPU µs/req",
}
"""The figures in the table (the JSON holds the sequential CPU too)."""


def run(
    *, quick: bool = False, sizes: Sizes | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Measure every setup and era, print the table, return the figures."""
    chosen = sizes or (QUICK if quick else NORMAL)
    samples: dict[str, dict[str, list[dict[str, float]]]] = {}
    with RedisServer() as redis:
        for round_no in range(chosen.rounds):
            order = SETUPS if round_no % 2 == 0 else SETUPS[::-1]
            for setup in order:
                for era in setup.eras:
                    found = measure(setup, era, chosen, redis.url)
                    samples.setdefault(setup.name, {}).setdefault(era, []).append(found)
    figures: dict[str, Any] = {
        "method": (
            "tools/call echo over Streamable HTTP, the raw socket client of "
            f"benchmarks.http; {chosen.rounds} rounds, every setup started fresh "
            "per round, the order reversed every other round; medians"
        ),
        "cpus": os.cpu_count(),
        "concurrency": CONCURRENCY,
        "rounds": chosen.rounds,
        "warmup_calls": chosen.warmup,
        "sequential_calls": chosen.sequential,
        "concurrent_calls": chosen.concurrent,
        "setups": {
            name: {era: _medians(runs) for era, runs in eras.items()}
            for name, eras in samples.items()
        },
    }
    figures["redis_added_us"] = _added(figures["setups"])
    echo(report(figures))
    return figures


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def _added(setups: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Sequential p50/p99 of each Redis path minus the same without Redis."""
    base = setups["1, memory"]
    pairs = {
        "Redis, home instance": ("1, Redis", ERAS),
        "Redis, forwarded from another instance": ("forwarded", ("legacy",)),
        "proxy": ("proxy + 1, memory", ERAS),
    }
    added: dict[str, dict[str, float]] = {}
    for label, (name, eras) in pairs.items():
        for era in eras:
            if name in setups and era in setups[name]:
                got = setups[name][era]
                added[f"{label} ({era})"] = {
                    "p50_us": got["p50_us"] - base[era]["p50_us"],
                    "p99_us": got["p99_us"] - base[era]["p99_us"],
                }
    return added


def report(figures: dict[str, Any]) -> str:
    """The Markdown table: one row per setup and era."""
    rows: list[list[str]] = []
    for name, eras in figures["setups"].items():
        for era, got in eras.items():
            rows.append([name, era] + [_cell(got.get(key)) for key in METRICS])
    lines = [markdown_table(["setup", "era", *METRICS.values()], rows), ""]
    lines.append("Added sequential latency (µs, against `1, memory`):")
    lines += [
        f"- {label}: p50 {v['p50_us']:+.0f}, p99 {v['p99_us']:+.0f}"
        for label, v in figures["redis_added_us"].items()
    ]
    lines.append(
        f"{figures['cpus']} CPUs: the load client, the proxy and the instances "
        "share them (see the CPU columns)."
    )
    return "\n".join(lines)


def markdown_table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, the first two columns left-aligned, numbers right."""
    rule = ["---", "---"] + ["---:"] * (len(headers) - 2)
    return "\n".join("| " + " | ".join(row) + " |" for row in [headers, rule, *rows])


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.instances")
    parser.add_argument("--quick", action="store_true")
    run(quick=parser.parse_args().quick)

"""Paths, statistics, table printing, process figures and the echo call's wire,
shared by the benchmarks."""

from __future__ import annotations

import os
import signal
import socket
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

if TYPE_CHECKING:
    import subprocess

REPO = Path(__file__).resolve().parents[1]
"""The repository root; every benchmark runs with it as the working folder."""

CACHE = REPO / ".cache"
"""Ignored by git: the peer venv and the default results file live here."""

SCHEMA_SOURCE_ENV = "MCP_CODEGEN_SCHEMA_SOURCE"
"""As for `mcp-codegen schema sync`: a folder laid out as <rev>/schema.json."""

Echo = Callable[[str], None]

PROTOCOL_VERSION = "2025-11-25"
"""The handshake the round-trip benchmarks drive every server with."""

MESSAGE = "The quick brown fox jumps over."
"""The echoed payload of the round-trip benchmarks, about 30 characters."""


def shared_schemas() -> Path:
    """The read-only folder of MCP schemas and examples (never copied into the repo)."""
    configured = os.environ.get(SCHEMA_SOURCE_ENV)
    if configured:
        return Path(configured).resolve()
    return (REPO.parent / "shared" / "mcp-schemas").resolve()


def project_python() -> str:
    """The interpreter of the project's virtualenv (the one running us, normally)."""
    venv_python = REPO / ".venv" / "bin" / "python"
    if venv_python.exists():
        return str(venv_python)
    return sys.executable


def summary(values_s: Sequence[float]) -> dict[str, Any]:
    """Median, min and max of timings given in seconds, reported in milliseconds."""
    ms = [v * 1000.0 for v in values_s]
    return {
        "median_ms": round(statistics.median(ms), 3),
        "min_ms": round(min(ms), 3),
        "max_ms": round(max(ms), 3),
        "n": len(ms),
        "samples_ms": [round(v, 3) for v in ms],
    }


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain-text table, first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])


# --- statistics and report cells --------------------------------------------------


def stat(values: Iterable[float]) -> dict[str, Any]:
    """Median, min, max and the samples, rounded to 3 decimals."""
    data = list(values)
    return {
        "median": round(statistics.median(data), 3),
        "min": round(min(data), 3),
        "max": round(max(data), 3),
        "samples": [round(value, 3) for value in data],
    }


def percentile(sorted_values: Sequence[int], fraction: float) -> int:
    """The value at `fraction` (0..1) of already sorted values (nearest rank)."""
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


class _Sized(Protocol):
    @property
    def rounds(self) -> int: ...


SizesT = TypeVar("SizesT", bound=_Sized)
"""A benchmark's `Sizes`: how many rounds, and what its `measure` reads."""


@dataclass(frozen=True)
class Contender:
    """A server of a round-trip benchmark: how to start it."""

    name: str
    argv: list[str]
    env: dict[str, str]


class ServerFailedError(RuntimeError):
    """A server died, went silent, or answered something other than the echo."""


def run_round_trips(
    contenders_of: Callable[[Path, Path], list[Contender]],
    sizes: SizesT,
    measure: Callable[[Contender, SizesT], dict[str, float]],
    figures_of: Callable[
        [dict[str, list[dict[str, float]]], list[Contender], SizesT], dict[str, Any]
    ],
    report: Callable[[dict[str, Any]], str],
    echo: Echo,
) -> dict[str, Any]:
    """Install the peers, `measure` each contender (`contenders_of(peer venv
    python, node project)`) once in each of `sizes.rounds`, the order reversed
    every other round; echo the report of `figures_of(samples by name,
    contenders, sizes)` with the peers' versions added; return those figures."""
    from . import peers  # peers imports this module

    peer_python = peers.ensure_python_peers(echo)
    node_project = peers.ensure_node_peers(echo)
    servers = contenders_of(peer_python, node_project)
    samples: dict[str, list[dict[str, float]]] = {s.name: [] for s in servers}
    for round_no in range(sizes.rounds):
        for server in servers if round_no % 2 == 0 else servers[::-1]:
            samples[server.name].append(measure(server, sizes))
    figures = figures_of(samples, servers, sizes)
    figures["versions"] = {
        "mcp (Python SDK)": peers.installed_versions(peer_python.parents[1])["mcp"],
        "@modelcontextprotocol/sdk": peers.installed_node_versions(node_project)[
            "@modelcontextprotocol/sdk"
        ],
        "node": peers.node_version(),
        "msgspec": msgspec.__version__,
    }
    echo(report(figures))
    return figures


def compare(
    samples: dict[str, list[dict[str, float]]],
    contenders: Sequence[Contender],
    metrics: Iterable[str],
    also: Iterable[str] = (),
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, float]]]:
    """Each contender's argv and `stat` of every metric (and of `also`), and the
    ratios of the medians of the metrics, first contender/each other one
    (`ours/X` -> metric -> ratio; none where X's median is zero)."""
    metrics = list(metrics)
    keys = [*metrics, *also]
    entries = {
        c.name: {
            "argv": c.argv,
            **{key: stat(run[key] for run in samples[c.name]) for key in keys},
        }
        for c in contenders
    }
    ours = contenders[0].name
    ratios = {
        f"{ours}/{other.name}": {
            key: round(
                entries[ours][key]["median"] / entries[other.name][key]["median"], 3
            )
            for key in metrics
            if entries[other.name][key]["median"] > 0
        }
        for other in contenders[1:]
    }
    return entries, ratios


def ratio_checks(
    ratios: dict[str, dict[str, float]],
    least: dict[str, float],
    keys: Iterable[str],
    labels: dict[str, str],
) -> list[dict[str, Any]]:
    """A target per (other, key): ratio `ours/other` of `key` at least
    `least[other]`, with the value measured and whether it is met."""
    keys = list(keys)
    checks: list[dict[str, Any]] = []
    for ratio_name, floor in least.items():
        for key in keys:
            value = ratios[ratio_name].get(key, 0.0)
            checks.append(
                {
                    "target": f"{ratio_name} {labels[key]} >= {floor:g}x",
                    "value": value,
                    "met": value >= floor,
                }
            )
    return checks


def figures_tail(
    entries: dict[str, Any],
    ratios: dict[str, dict[str, float]],
    checks: list[dict[str, Any]],
) -> dict[str, Any]:
    """The last keys of a round-trip benchmark's figures."""
    return {
        "clock_ticks_per_s": os.sysconf("SC_CLK_TCK"),
        "cpus": os.cpu_count(),
        "contenders": entries,
        "ratios": ratios,
        "targets": checks,
        "meets_targets": all(check["met"] for check in checks),
    }


def number(value: float) -> str:
    """A figure in about 4 characters: `125k`, `12.3k`, `512`, `51.2`, `5.12`."""
    if value >= 100_000:
        return f"{value / 1000:.0f}k"
    if value >= 10_000:
        return f"{value / 1000:.1f}k"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def cell(entry: dict[str, Any]) -> str:
    """`12.3k (11.9k-12.6k)`: the median, then min-max."""
    low, high = number(entry["min"]), number(entry["max"])
    return f"{number(entry['median'])} ({low}-{high})"


def ratio(value: float | None) -> str:
    """`1.23x`, or `-` when there is none."""
    return "-" if value is None else f"{value:.2f}x"


def comparison_rows(
    figures: dict[str, Any], contenders: Sequence[str], metrics: dict[str, str]
) -> list[list[str]]:
    """A row per metric: its label, each contender's cell, then the ratios of the
    first contender to each other one."""
    entries, ratios = figures["contenders"], figures["ratios"]
    ours, others = contenders[0], contenders[1:]
    return [
        [
            label,
            *(cell(entries[name][key]) for name in contenders),
            *(ratio(ratios[f"{ours}/{other}"].get(key)) for other in others),
        ]
        for key, label in metrics.items()
    ]


def version_lines(figures: dict[str, Any]) -> list[str]:
    """`versions: ...` when the figures name them."""
    if "versions" not in figures:
        return []
    named = ", ".join(f"{k} {v}" for k, v in figures["versions"].items())
    return [f"versions: {named}"]


def target_lines(figures: dict[str, Any]) -> list[str]:
    """`targets:`, then each target with its value and whether it is met."""
    return [
        "targets:",
        *(
            f"  {c['target']}: {c['value']:g} {'met' if c['met'] else 'MISSED'}"
            for c in figures["targets"]
        ),
    ]


# --- a server's process ------------------------------------------------------------


def cpu_ticks(pid: int) -> int:
    """utime + stime of process `pid` (clock ticks, all its threads)."""
    with open(f"/proc/{pid}/stat", "rb") as stat_file:
        fields = stat_file.read().rsplit(b")", 1)[1].split()
    # After "pid (comm)": state is field 3, utime 14 and stime 15.
    return int(fields[11]) + int(fields[12])


def peak_rss_mib(pid: int) -> float | None:
    """VmHWM of process `pid`, in MiB (None when /proc does not tell it)."""
    with open(f"/proc/{pid}/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def announce_when_listening(
    port: int, line: str, host: str = "127.0.0.1", timeout: float = 30.0
) -> None:
    """Print `line` once `host`:`port` accepts a connection (run it in a thread
    beside a server starting up); give up silently after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                print(line, flush=True)
                return
        except OSError:
            time.sleep(0.01)


def kill_session(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL `proc` and every process of its session (it was started with
    `start_new_session=True`), so that no child it spawned can keep a pipe or
    socket open and a read waiting after it is gone."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def peer_env() -> dict[str, str]:
    """Our environment without what would steer another venv's python."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


# --- the echo call on the wire -----------------------------------------------------


class TextBlock(msgspec.Struct):
    """A content block of a `tools/call` result (text ones checked)."""

    type: str
    text: str = ""


class CallResult(msgspec.Struct, rename="camel"):
    """The members of a `tools/call` result the benchmarks check."""

    content: list[TextBlock]
    structured_content: Any = None
    is_error: bool = False


class _InitializeResult(msgspec.Struct, rename="camel"):
    protocol_version: str


class Reply(msgspec.Struct):
    """A JSON-RPC message from a server, its result left undecoded."""

    id: int | str | None = None
    method: str | None = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: Any = None


reply_decoder = msgspec.json.Decoder(Reply)
"""Decodes one JSON-RPC message into a `Reply`."""

call_result_decoder = msgspec.json.Decoder(CallResult)
"""Decodes a `tools/call` result into a `CallResult`."""
_initialize_decoder = msgspec.json.Decoder(_InitializeResult)

_CALL_PREFIX = b'{"jsonrpc":"2.0","id":'
_CALL_SUFFIX = msgspec.json.encode(
    {
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": MESSAGE}},
    }
)[1:]
"""A request is `_CALL_PREFIX + id + "," + _CALL_SUFFIX`: only the id differs."""

INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
"""The `notifications/initialized` message."""


def call_body(request_id: int) -> bytes:
    """The `tools/call echo` request with this id, encoded."""
    return b"%s%d,%s" % (_CALL_PREFIX, request_id, _CALL_SUFFIX)


def initialize_body(client_name: str, version: str = PROTOCOL_VERSION) -> bytes:
    """The `initialize` request (id 0, at `version`), encoded."""
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "0"},
        },
    }
    return msgspec.json.encode(message)


def initialize_problem(reply: Reply, version: str = PROTOCOL_VERSION) -> str | None:
    """What is wrong with this answer to `initialize_body` at `version`."""
    if reply.id != 0 or not reply.result:
        return f"bad initialize answer: {reply!r}"
    settled = _initialize_decoder.decode(reply.result).protocol_version
    if settled != version:
        return f"initialize settled on {settled!r}"
    return None


def echo_problem(reply: Reply) -> str | None:
    """What is wrong with this answer to `call_body`, if anything (its id aside)."""
    if not reply.result:
        return f"error answer to {reply.id}: {reply.error!r}"
    content = call_result_decoder.decode(reply.result).content
    if len(content) != 1 or content[0].type != "text":
        return f"not one text block: {content!r}"
    if content[0].text != MESSAGE:
        return f"wrong echo: {content[0].text!r}"
    return None

"""The server's own cost of a stdio `tools/call`, for A/B runs of the engine.

Load-independent figures for comparing two versions of the runtime on a busy
machine (where calls/s move by ±25% from one run to the next):

- `--callgrind`: the server runs under valgrind's callgrind with
  instrumentation off; once the session is warm it is switched on
  (`callgrind_control -i on`) for exactly the timed calls, and the
  instructions executed (Ir, user space only: a syscall counts as its libc
  wrapper) are divided by the calls;
- otherwise: the server's CPU time (utime + stime, /proc/<pid>/stat, kernel
  time included) per call.

Modes: `seq` (one call at a time), `pipe` (`stdio.IN_FLIGHT` in flight) and
`big` (one call at a time echoing `BIG` bytes, the 1 MB echo). Servers:
`scaffold` (the `App` of `mcp-codegen new`), `tools` (`app_tools_server.py`
with one tool, which speaks every revision), `session` (a plain
`ServerSession`) and `bare` (the bare msgspec loop, the ceiling); the
revision with `--revision` (2026-07-28 sends the envelope).

    python -m benchmarks.engine_cost [--callgrind] [--server scaffold]
        [--revision 2025-11-25] [--calls 2000] [--repeat 3] [seq pipe big]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from . import revisions, scaling
from ._common import REPO, Contender, cpu_ticks, project_python
from .scaffold_server import env as scaffold_env, prepare, stdio_argv

BIG = 1_000_000
"""Bytes of the message the `big` mode echoes."""

SERVERS = ("scaffold", "tools", "session", "bare")
MODES = ("seq", "pipe", "big")


def contender(server: str, *, callgrind: Path | None) -> Contender:
    """The server's command line, under callgrind when asked."""
    python = project_python()
    if server == "scaffold":
        argv, env = stdio_argv(), scaffold_env(prepare())
    elif server == "tools":
        program = REPO / "benchmarks" / "programs" / "app_tools_server.py"
        argv, env = [python, str(program), "1"], dict(os.environ)
    else:
        name = "codegen_echo_server" if server == "session" else "bare_msgspec_echo"
        program = REPO / "benchmarks" / "programs" / f"{name}.py"
        argv, env = [python, str(program)], dict(os.environ)
    if callgrind is not None:
        argv = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={callgrind}",
            *argv,
        ]
    return Contender(server, argv, env)


class Client(revisions.StdioClient, scaling.StdioSession):
    """The revisions benchmark's stdio client, with the scaling one's exchange."""

    tool = revisions.TOOL

    def _requests(self, n: int) -> tuple[list[int], list[bytes]]:
        ids = list(range(self._next_id, self._next_id + n))
        self._next_id += n
        bodies = [revisions.call_body(i, self.revision, self.tool) for i in ids]
        return ids, [body + b"\n" for body in bodies]

    def big(self, n: int) -> None:
        """`n` sequential echoes of a `BIG`-byte message, each checked."""
        message = "x" * BIG
        for _ in range(n):
            request_id = self._next_id
            self._next_id += 1
            arguments = {"message": message}
            line = revisions.request_body(
                request_id,
                self.revision,
                "tools/call",
                name=self.tool,
                arguments=arguments,
            )
            _, reply = self.exchange(line + b"\n")
            if reply.id != request_id or message.encode() not in bytes(reply.result):
                raise self._fail("the big echo came back wrong")


def _ir(path: Path) -> int:
    """The instructions of the timed calls: the dump `callgrind_control -d`
    wrote (`PATH.1`; `PATH` itself holds the shut-down)."""
    dump = path.with_name(path.name + ".1").read_bytes()
    found = re.search(rb"^(?:summary|totals): (\d+)", dump, re.M)
    if found is None:
        raise RuntimeError(f"no totals in {path}.1")
    return int(found.group(1))


def measure(
    server: str,
    revision: str,
    mode: str,
    calls: int,
    *,
    callgrind: bool,
    keep: Path | None = None,
) -> float:
    """Instructions (callgrind) or CPU µs per call of one fresh server; `keep`
    is where the callgrind dump goes (for `callgrind_annotate`)."""
    with tempfile.TemporaryDirectory() as folder:
        out = keep or Path(folder) / "callgrind.out"
        spec = contender(server, callgrind=out if callgrind else None)
        client = Client(spec, revision)
        if server != "tools":
            client.tool = "echo"
        try:
            client.initialize()
            warm = max(10, calls // 10)
            _run(client, mode, warm if mode != "big" else 2)
            pid = client.proc.pid
            if callgrind:
                subprocess.run(
                    ["callgrind_control", "-i", "on", str(pid)],
                    check=True,
                    capture_output=True,
                )
            ticks = cpu_ticks(pid)
            _run(client, mode, calls)
            used = cpu_ticks(pid) - ticks
            if callgrind:
                subprocess.run(
                    ["callgrind_control", "-d", str(pid)],
                    check=True,
                    capture_output=True,
                )
        except BaseException:
            client.kill()
            raise
        client.close()
        if callgrind:
            time.sleep(0.2)
            return _ir(out) / calls
        return used * 1e6 / os.sysconf("SC_CLK_TCK") / calls


def _run(client: Client, mode: str, n: int) -> None:
    if mode == "seq":
        client.sequential(n)
    elif mode == "pipe":
        client.pipelined(n)
    else:
        client.big(n)


def main() -> None:
    """Print each mode's cost per call, median of `--repeat` fresh servers."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine_cost")
    parser.add_argument("modes", nargs="*", choices=MODES, default=["seq", "pipe"])
    parser.add_argument("--server", choices=SERVERS, default="scaffold")
    parser.add_argument("--revision", default="2025-11-25")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep the callgrind dump here")
    args = parser.parse_args()
    unit = "Ir/call" if args.callgrind else "CPU µs/call"
    for mode in args.modes:
        calls = args.calls if mode != "big" else max(1, args.calls // 100)
        samples = [
            measure(
                args.server,
                args.revision,
                mode,
                calls,
                callgrind=args.callgrind,
                keep=args.keep,
            )
            for _ in range(args.repeat)
        ]
        shown = ", ".join(
            f"{s:,.0f}" if args.callgrind else f"{s:.1f}" for s in samples
        )
        print(
            f"{args.server} {args.revision} {mode}: {unit} median "
            f"{statistics.median(samples):,.1f} ({shown})",
            flush=True,
        )


if __name__ == "__main__":
    main()

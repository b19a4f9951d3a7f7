"""Run the official MCP conformance suites' client scenarios against a client.

    python -m benchmarks.conformance_client [--json FILE] [-- CMD ...]

The client is a command (default: `examples/conformance_client.py` on this
Python); the harness starts each scenario's mock server (and authorization
servers) and runs `CMD <server-url>` with `MCP_CONFORMANCE_SCENARIO`,
`MCP_CONFORMANCE_CONTEXT` and `MCP_CONFORMANCE_PROTOCOL_VERSION` in the
environment. Three runs on Node.js 22, as for servers (`benchmarks.
conformance`):

- `0.1.16 all`: conformance 0.1.16, `client --suite all`: every client
  scenario of the stable suite, authorization extensions included;
- `2025-11-25` and `2026-07-28`: conformance 0.2.0-alpha.12,
  `client --requirements REVISION`, the scenarios the revision requires
  (scored) and the ones it runs without requiring (extensions: not scored).

How the harness reports a client run: a summary on stdout, `✓|✗ NAME: P
passed, F failed[, W warnings]` per scenario, `Total: ...`, and for a
`--requirements` run a `Not scored for REVISION: ...` list. With
`--output-dir DIR` each scenario's checks go to `DIR/NAME-TIMESTAMP/
checks.json` (NAME may hold a `/`, making sub-folders). The checks are read
from there and cross-checked with the summary; the verdict rule is the
server runs' (no FAILURE check; exit code 0).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import node22
from ._common import REPO
from .conformance import (
    Check,
    ConformanceParseError,
    Run,
    RunResult,
    Scenario,
    parse_output,
    report,
    summary,
)
from .peers import PeerInstallError

if TYPE_CHECKING:
    from collections.abc import Sequence

CLIENT = REPO / "examples" / "conformance_client.py"
RUN_TIMEOUT = 600.0
"""Seconds one whole run may take (each scenario stops at 30 s)."""

RUNS = (
    Run("0.1.16 all", node22.CONFORMANCE_STABLE, ("--suite", "all")),
    Run("2025-11-25", node22.CONFORMANCE_ALPHA, ("--requirements", "2025-11-25")),
    Run("2026-07-28", node22.CONFORMANCE_ALPHA, ("--requirements", "2026-07-28")),
)

_FOLDER = re.compile(r"^(?P<name>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def default_command() -> str:
    """`examples/conformance_client.py` on this interpreter."""
    return shlex.join([sys.executable, str(CLIENT)])


def _load_checks(folder: Path) -> list[Check]:
    """The checks of one scenario's `checks.json`, as the server runs read them."""
    try:
        raw = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConformanceParseError(f"unreadable {folder}/checks.json: {exc}") from exc
    if not isinstance(raw, list):
        raise ConformanceParseError(f"{folder}/checks.json is not a list")
    items = typing.cast("list[dict[str, Any]]", raw)
    return [
        Check(
            str(item.get("id")),
            str(item.get("status")),
            item.get("errorMessage") or item.get("description") or "",
        )
        for item in items
    ]


def _attach_checks(scenarios: list[Scenario], out: Path) -> None:
    """Give each scenario the checks of its folder under `out`."""
    folders: dict[str, Path] = {}
    for path in sorted(out.rglob("checks.json")):
        match = _FOLDER.match(path.parent.relative_to(out).as_posix())
        if match is not None:
            folders[match["name"]] = path.parent
    for scenario in scenarios:
        folder = folders.get(scenario.name)
        if folder is not None:
            scenario.checks = _load_checks(folder)


def run_client_conformance(
    run: Run,
    command: str | None = None,
    *,
    timeout: float = RUN_TIMEOUT,
) -> RunResult:
    """Make one client run with `command` (default: the example) and read it.

    `ConformanceParseError` when the output is unreadable or contradicts the
    checks, `subprocess.TimeoutExpired` after `timeout` seconds.
    """
    command = command or default_command()
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-client-") as scratch:
        out = Path(scratch) / "results"
        argv = [
            *node22.conformance_command(run.version),
            "client",
            "--command",
            command,
            *run.args,
            "--output-dir",
            str(out),
        ]
        proc = subprocess.run(
            argv,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        try:
            # The summary alone first (no checks yet: every scenario looks
            # crashed), then the checks from the folders, then the counts.
            scenarios = parse_output(_summary_only(proc.stdout))
            _attach_checks(scenarios, out)
            _cross_check(proc.stdout, scenarios)
        except ConformanceParseError as exc:
            raise ConformanceParseError(
                f"{' '.join(argv)} (exit {proc.returncode}): {exc}\n"
                f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            ) from exc
    return RunResult(run, command, proc.returncode, scenarios, proc.stderr)


_COUNTS = re.compile(
    r"^[✓✗] (?P<name>\S+): (?P<passed>\d+) passed, (?P<failed>\d+) failed", re.M
)


def _summary_only(stdout: str) -> str:
    """The summary with every scenario at 0 failed, so that `parse_output`
    makes the scenarios and their scored flags without judging them."""
    return _COUNTS.sub(lambda m: f"✓ {m['name']}: 0 passed, 0 failed", stdout)


def _cross_check(stdout: str, scenarios: list[Scenario]) -> None:
    by_name = {s.name: s for s in scenarios}
    for match in _COUNTS.finditer(stdout):
        scenario = by_name[match["name"]]
        expected = (int(match["passed"]), int(match["failed"]))
        if not scenario.checks and expected[1]:  # crashed: no checks.json
            why = "the harness could not run it (see stderr)"
            scenario.checks = [Check(scenario.name, "FAILURE", why)]
        found = (scenario.count("SUCCESS"), scenario.count("FAILURE"))
        if found != expected:
            raise ConformanceParseError(
                f"{scenario.name}: the summary says {expected[0]} passed, "
                f"{expected[1]} failed; checks.json has {found[0]} and {found[1]}"
            )


def _listed_client_scenarios(version: str) -> list[str]:
    """The client scenarios `conformance list` names, in its order."""
    proc = subprocess.run(
        [*node22.conformance_command(version), "list"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    names: list[str] = []
    section = False
    for line in proc.stdout.splitlines():
        if line.endswith(":"):
            section = line.startswith("Client scenarios")
        elif section and (match := re.match(r"^\s+- (\S+)", line)):
            names.append(match[1])
    return names


def _required(version: str, revision: str) -> tuple[list[str], dict[str, str]]:
    """The scored client scenarios of `revision` and the not-scored ones with
    their reasons, from the package's frozen `requirements/REVISION.yaml`
    (a flat YAML read line by line: `client:` items, `not_scored` entries)."""
    path = (
        node22.conformance_dir(version) / "node_modules" / (node22.CONFORMANCE_PACKAGE)
    )
    lines = (path / "requirements" / f"{revision}.yaml").read_text().splitlines()
    scored: list[str] = []
    extra: dict[str, str] = {}
    section = ""
    entry: dict[str, str] = {}
    for line in [*lines, "end:"]:
        if re.match(r"^\w[\w_]*:", line):
            section = line.split(":")[0]
        elif section == "client" and (match := re.match(r"^  - (\S+)$", line)):
            scored.append(match[1])
        elif section == "not_scored" and (
            match := re.match(r"^  (?:- |  )(\w+): (.*)$", line)
        ):
            if line.startswith("  - "):
                entry = {}
            entry[match[1]] = match[2].strip()
            if (
                entry.get("leg") == "client"
                and "scenario" in entry
                and "reason" in entry
            ):
                extra[entry["scenario"]] = entry["reason"]
    return scored, extra


RACY_MOCKS = frozenset({"sse-retry"})
"""Scenarios whose mock races the client's standalone GET stream: it takes any
GET for the reconnection it waits for, so a GET opened right after
initialization (not awaited, as the official SDKs open it too) that arrives
after the first tool call fails the timing check. Such a scenario gets one
more run when it fails; two failures fail it."""


def run_one_by_one(
    run: Run, command: str | None = None, *, timeout: float = 60.0
) -> RunResult:
    """The scenarios `run` selects, each run alone (`--scenario NAME`, at the
    run's revision for a `--requirements` run), so that no scenario shares
    the harness' process with another: the timing checks (`sse-retry`) then
    measure the client, not the contention of 30 parallel scenarios.
    """
    command = command or default_command()
    if run.args[0] == "--requirements":
        revision = run.args[1]
        scored, not_scored = _required(run.version, revision)
        extra = ["--spec-version", revision]
    else:
        scored, not_scored, extra = _listed_client_scenarios(run.version), {}, []
    scenarios: list[Scenario] = []
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-client-") as scratch:
        out = Path(scratch)

        def make(name: str, out: Path = out) -> Scenario:
            argv = [
                *node22.conformance_command(run.version),
                "client",
                "--command",
                command,
                "--scenario",
                name,
                *extra,
                # Extensions are off the revision's timeline: run them anyway,
                # as `--requirements` does.
                *(["--force"] if extra and name in not_scored else []),
                "--output-dir",
                str(out),
            ]
            proc = subprocess.run(
                argv, cwd=REPO, capture_output=True, text=True, timeout=timeout
            )
            scenario = Scenario(
                name, scored=name in scored, not_scored_reason=not_scored.get(name)
            )
            _attach_checks([scenario], out)
            if not scenario.checks:
                why = f"no checks.json (exit {proc.returncode}): {proc.stderr[-300:]}"
                scenario.checks = [Check(name, "FAILURE", why)]
            return scenario

        for name in [*scored, *not_scored]:
            scenario = make(name)
            if not scenario.passed and name in RACY_MOCKS:
                scenario = make(name, out / "again")
            scenarios.append(scenario)
    # The suite's exit code: 1 when a scored scenario failed. (A client that
    # exits non-zero is not a failure by itself: several scenarios expect it.)
    failed = any(not s.passed for s in scenarios if s.scored)
    return RunResult(run, command, int(failed), scenarios, "")


def run_all(
    command: str | None = None, runs: Sequence[Run] = RUNS, *, one_by_one: bool = False
) -> list[RunResult]:
    """Install the suites if needed, then make each of `runs` (as the suite
    does, in parallel; or `one_by_one`)."""
    node22.ensure_conformance()
    make = run_one_by_one if one_by_one else run_client_conformance
    return [make(run, command) for run in runs]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.conformance_client",
        description="Run the MCP conformance suites' client scenarios.",
    )
    parser.add_argument("--json", type=Path, help="also write the summary here")
    parser.add_argument(
        "--run",
        action="append",
        choices=[run.name for run in RUNS],
        help="make only this run (repeatable; default: all three)",
    )
    parser.add_argument(
        "--one-by-one",
        action="store_true",
        help="run each scenario alone instead of the whole suite in parallel",
    )
    parser.add_argument(
        "command", nargs="*", help="the client command (default: the example)"
    )
    args = parser.parse_args(argv)
    runs = [run for run in RUNS if not args.run or run.name in args.run]
    command = shlex.join(args.command) if args.command else None
    try:
        results = run_all(command, runs, one_by_one=args.one_by_one)
    except (PeerInstallError, ConformanceParseError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report(results))
    if args.json:
        text = json.dumps(summary(results), indent=2) + "\n"
        args.json.write_text(text, encoding="utf-8")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

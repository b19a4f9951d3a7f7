"""Run the official MCP conformance suites against a Streamable HTTP server.

    python -m benchmarks.conformance http://127.0.0.1:PORT/mcp [--json FILE]

Three runs, each on Node.js 22 (`benchmarks.node22` installs everything),
and, with `--tasks`, one more per scenario of the tasks extension:

- `0.1.16 all`: conformance 0.1.16, `server --url URL --suite all`, every server
  scenario of the stable suite, pending ones included, each checked at the
  revision it is tagged with (2025-11-25 for all of them).
- `2025-11-25` and `2026-07-28`: conformance 0.2.0-alpha.12,
  `server --url URL --requirements REVISION`, exactly the scenarios that spec
  revision requires (a frozen list shipped in the package), each run at that
  revision's wire: the initialize handshake and sessions for 2025-11-25, the
  stateless per-request `_meta` envelope for 2026-07-28. Scenarios the
  revision runs without requiring (extensions, pending ones, ones added after
  its release) are reported as "not scored" and move neither figure nor verdict.
- `tasks-*`: conformance 0.2.0-alpha.12, `server --url URL --scenario NAME`, the
  ten scenarios of the 2026-07-28 tasks extension (SEP-2663), which no
  `--requirements` run scores. `tasks-status-notifications` only reports
  SKIPPED (the harness does not check status notifications yet): it counts as
  run and passed, since none of its checks fails.

How the harness reports, and how this reads it: it prints on stdout, per
scenario, `Running client scenario 'NAME' against server: URL` and (with
`--output-dir`) `Results saved to DIR`, DIR holding `checks.json`, the list of
that scenario's checks (`id`, `name`, `description`, `status` one of SUCCESS,
FAILURE, WARNING, INFO, SKIPPED, `errorMessage`, `details`). Then a summary,
`✓|✗ NAME: P passed, F failed` per scenario and `Total: P passed, F failed`,
and for a `--requirements` run a `Not scored for REVISION: ...` section listing
`✓|✗ NAME (reason)`. A scenario passes when none of its checks is a FAILURE
(the harness' own rule; warnings do not fail it); the exit code is 1 when a
(scored) scenario fails. A scenario that crashed writes no `checks.json`: its
summary line counts one failure, and the reason is the harness' stderr.

The checks come from each `checks.json`; the summary lines are cross-checked
against them (`ConformanceParseError` on a mismatch), and the not-scored list
is taken from the output. A run "passes" when the harness exits 0 and every
scored scenario passed. Nothing about the expected results is written here.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import node22
from ._common import table
from .peers import PeerInstallError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._common import Echo

RUN_TIMEOUT = 900.0
"""Seconds one whole run may take (alpha.12 also stops each scenario at 30 s)."""


@dataclass(frozen=True)
class Run:
    """One invocation of a conformance CLI: `server --url URL *args`."""

    name: str
    version: str
    args: tuple[str, ...]


RUNS = (
    Run("0.1.16 all", node22.CONFORMANCE_STABLE, ("--suite", "all")),
    Run("2025-11-25", node22.CONFORMANCE_ALPHA, ("--requirements", "2025-11-25")),
    Run("2026-07-28", node22.CONFORMANCE_ALPHA, ("--requirements", "2026-07-28")),
)
"""The three runs `main` makes, in order."""

TASK_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
"""The scenarios of the tasks extension in 0.2.0-alpha.12."""

TASK_RUNS = tuple(
    Run(name, node22.CONFORMANCE_ALPHA, ("--scenario", name)) for name in TASK_SCENARIOS
)
"""One run per tasks scenario (`main --tasks`)."""


class ConformanceParseError(RuntimeError):
    """The harness' output could not be read or contradicts itself."""


@dataclass(frozen=True)
class Check:
    """One check of a scenario, as in its checks.json."""

    id: str
    status: str
    message: str
    """The errorMessage, or the description when there is none."""


@dataclass
class Scenario:
    """One scenario's checks and verdict."""

    name: str
    checks: list[Check] = field(default_factory=list)
    scored: bool = True
    not_scored_reason: str | None = None

    @property
    def passed(self) -> bool:
        """True when no check failed (the harness' rule)."""
        return not self.failures

    @property
    def failures(self) -> list[Check]:
        return [check for check in self.checks if check.status == "FAILURE"]

    def count(self, status: str) -> int:
        return sum(check.status == status for check in self.checks)


@dataclass
class RunResult:
    """A finished run: its scenarios in the order run, and the exit code."""

    run: Run
    url: str
    exit_code: int
    scenarios: list[Scenario]
    stderr: str = ""

    @property
    def scored(self) -> list[Scenario]:
        return [s for s in self.scenarios if s.scored]

    @property
    def not_scored(self) -> list[Scenario]:
        return [s for s in self.scenarios if not s.scored]

    @property
    def passed(self) -> int:
        """Scored scenarios passed."""
        return sum(s.passed for s in self.scored)

    @property
    def total(self) -> int:
        """Scored scenarios run."""
        return len(self.scored)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.passed == self.total

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able summary: figures, then failures with their reasons."""

        def failing(scenarios: list[Scenario]) -> dict[str, list[str]]:
            return {
                s.name: [f"{c.id}: {c.message}" for c in s.failures]
                for s in scenarios
                if not s.passed
            }

        return {
            "run": self.run.name,
            "conformance": self.run.version,
            "args": ["server", "--url", self.url, *self.run.args],
            "exit_code": self.exit_code,
            "ok": self.ok,
            "passed": self.passed,
            "total": self.total,
            "checks_passed": sum(s.count("SUCCESS") for s in self.scored),
            "checks_failed": sum(s.count("FAILURE") for s in self.scored),
            "warnings": sum(s.count("WARNING") for s in self.scored),
            "failures": failing(self.scored),
            "not_scored": {
                "passed": sum(s.passed for s in self.not_scored),
                "total": len(self.not_scored),
                "reasons": {s.name: s.not_scored_reason for s in self.not_scored},
                "failures": failing(self.not_scored),
            },
        }


# --------------------------------------------------------------------------
# Reading the harness' output
# --------------------------------------------------------------------------

_STARTED = re.compile(r"^Running client scenario '(?P<name>[^']+)' against server: ")
_SAVED = re.compile(r"^Results saved to (?P<dir>.+)$")
_SUMMARY = re.compile(
    r"^(?P<mark>[✓✗]) (?P<name>\S+): (?P<passed>\d+) passed, (?P<failed>\d+) failed"
)
_NOT_SCORED_HEAD = re.compile(r"^Not scored for \S+: ")
_NOT_SCORED = re.compile(r"^  [✓✗] (?P<name>\S+) \((?P<reason>[^)]*)\)$")
_CRASHED = re.compile(r"^Failed to run scenario (?P<name>\S+):(?P<why>.*)$")


def _load_checks(folder: Path) -> list[Check]:
    try:
        raw = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConformanceParseError(f"unreadable {folder}/checks.json: {exc}") from exc
    if not isinstance(raw, list):
        raise ConformanceParseError(f"{folder}/checks.json is not a list")
    checks = []
    for item in raw:
        message = item.get("errorMessage") or item.get("description") or ""
        checks.append(Check(str(item.get("id")), str(item.get("status")), message))
    return checks


def parse_output(stdout: str, stderr: str = "") -> list[Scenario]:
    """The scenarios of one run, from its stdout and the checks.json files
    it names (the run must have had `--output-dir`)."""
    scenarios: dict[str, Scenario] = {}
    current: Scenario | None = None
    summary: dict[str, tuple[int, int]] = {}
    in_not_scored = False
    reasons: dict[str, str] = {}
    for line in stdout.splitlines():
        if match := _STARTED.match(line):
            current = scenarios.setdefault(match["name"], Scenario(match["name"]))
        elif (match := _SAVED.match(line)) and current is not None:
            current.checks = _load_checks(Path(match["dir"].strip()))
        elif match := _SUMMARY.match(line):
            summary[match["name"]] = (int(match["passed"]), int(match["failed"]))
        elif _NOT_SCORED_HEAD.match(line):
            in_not_scored = True
        elif in_not_scored and (match := _NOT_SCORED.match(line)):
            reasons[match["name"]] = match["reason"]
        elif line.strip() == "":
            continue
        else:
            in_not_scored = False
    crashes = {
        m["name"]: m["why"].strip()
        for m in map(_CRASHED.match, stderr.splitlines())
        if m is not None
    }
    for name, (passed, failed) in summary.items():
        scenario = scenarios.setdefault(name, Scenario(name))
        if not scenario.checks and failed:  # crashed: no checks.json written
            why = crashes.get(name) or "the harness could not run it (see stderr)"
            scenario.checks = [Check(name, "FAILURE", why)]
        found = (scenario.count("SUCCESS"), scenario.count("FAILURE"))
        if found != (passed, failed):
            raise ConformanceParseError(
                f"{name}: the summary says {passed} passed, {failed} failed; "
                f"checks.json has {found[0]} and {found[1]}"
            )
    for name, reason in reasons.items():
        if name not in scenarios:
            raise ConformanceParseError(f"not-scored {name} was never run")
        scenarios[name].scored = False
        scenarios[name].not_scored_reason = reason
    if not scenarios:
        raise ConformanceParseError(f"no scenario in the output:\n{stdout[-2000:]}")
    return list(scenarios.values())


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


def run_conformance(
    run: Run,
    url: str,
    *,
    output_dir: Path | None = None,
    timeout: float = RUN_TIMEOUT,
) -> RunResult:
    """Make one run against `url` and read its results.

    The checks.json files go to `output_dir` (default: a temporary folder,
    removed afterwards). `ConformanceParseError` when the output is unreadable,
    `subprocess.TimeoutExpired` after `timeout` seconds.
    """
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-") as scratch:
        out = output_dir or Path(scratch) / "results"
        argv = [
            *node22.conformance_command(run.version),
            "server",
            "--url",
            url,
            *run.args,
            "--output-dir",
            str(out),
        ]
        proc = subprocess.run(
            argv,
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        try:
            scenarios = parse_output(proc.stdout, proc.stderr)
        except ConformanceParseError as exc:
            raise ConformanceParseError(
                f"{' '.join(argv)} (exit {proc.returncode}): {exc}\n"
                f"{proc.stderr[-2000:]}"
            ) from exc
    return RunResult(run, url, proc.returncode, scenarios, proc.stderr)


def run_all(
    url: str, runs: Sequence[Run] = RUNS, echo: Echo | None = None
) -> list[RunResult]:
    """Install the suites if needed, then make each of `runs` against `url`."""
    node22.ensure_conformance(echo)
    return [run_conformance(run, url) for run in runs]


def summary(results: Sequence[RunResult]) -> dict[str, dict[str, Any]]:
    """Run name -> `RunResult.as_dict()`."""
    return {result.run.name: result.as_dict() for result in results}


def report(results: Sequence[RunResult]) -> str:
    """A table of the figures, then each run's failures with their reasons."""
    rows = [
        (
            r.run.name,
            r.run.version,
            f"{r.passed}/{r.total}",
            f"{sum(s.passed for s in r.not_scored)}/{len(r.not_scored)}",
            r.exit_code,
            "pass" if r.ok else "FAIL",
        )
        for r in results
    ]
    lines = [
        table(
            ("run", "conformance", "scenarios", "not scored", "exit", "verdict"), rows
        )
    ]
    for result in results:
        for scenario in result.scenarios:
            if scenario.passed:
                continue
            tag = (
                ""
                if scenario.scored
                else f" [not scored: {scenario.not_scored_reason}]"
            )
            lines.append(f"{result.run.name}: {scenario.name}{tag}")
            lines.extend(f"    {c.id}: {c.message}" for c in scenario.failures)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.conformance",
        description="Run the MCP conformance suites against a Streamable HTTP URL.",
    )
    parser.add_argument(
        "url", help="the server's endpoint, e.g. http://127.0.0.1:8000/mcp"
    )
    parser.add_argument("--json", type=Path, help="also write the summary here")
    parser.add_argument(
        "--run",
        action="append",
        choices=[run.name for run in RUNS + TASK_RUNS],
        help="make only this run (repeatable; default: all three)",
    )
    parser.add_argument(
        "--tasks", action="store_true", help="also run the ten tasks-* scenarios"
    )
    args = parser.parse_args(argv)
    every = RUNS + TASK_RUNS if args.tasks else RUNS
    runs = [run for run in every if not args.run or run.name in args.run]
    try:
        results = run_all(args.url, runs, echo=lambda msg: print(msg, file=sys.stderr))
    except (
        PeerInstallError,
        ConformanceParseError,
        subprocess.TimeoutExpired,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report(results))
    if args.json:
        text = json.dumps(summary(results), indent=2) + "\n"
        args.json.write_text(text, encoding="utf-8")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""`examples/conformance_server.py` against the official conformance suites.

Starts the example on a free loopback port and makes the three runs of
`benchmarks.conformance` (0.1.16 `--suite all`, 0.2.0-alpha.12 for 2025-11-25
and for 2026-07-28); every scored scenario must pass. The suites run on the
Node.js 22 of `.cache/peers/` (installed by `benchmarks.node22` if missing).
Then each of the ten `tasks-*` scenarios of the tasks extension, one run each
(`tasks-status-notifications` reports only SKIPPED: run, and not failed).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import conformance, node22

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "conformance_server.py"

EXPECTED = {"0.1.16 all": 32, "2025-11-25": 30, "2026-07-28": 37}
"""Run -> scored scenarios; every one passes."""

KNOWN_FAILURES: dict[str, dict[str, str]] = {}
"""Run -> scenario -> why it fails (none today)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, "the example server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the example server did not start listening")


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    # Installed by the project's own script; a failure to install fails the test.
    node22.ensure_conformance()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.parametrize("run", conformance.RUNS, ids=lambda run: run.name)
def test_every_scored_scenario_passes(server_url: str, run: conformance.Run) -> None:
    result = conformance.run_conformance(run, server_url, timeout=120)
    failing = {
        s.name: [c.message for c in s.failures] for s in result.scored if not s.passed
    }
    assert failing == {
        name: failing.get(name) for name in KNOWN_FAILURES.get(run.name, {})
    }, conformance.report([result])
    assert result.total == EXPECTED[run.name]
    assert result.passed == result.total - len(KNOWN_FAILURES.get(run.name, {}))
    assert result.ok


@pytest.mark.parametrize("run", conformance.TASK_RUNS, ids=lambda run: run.name)
def test_every_tasks_scenario_passes(server_url: str, run: conformance.Run) -> None:
    result = conformance.run_conformance(run, server_url, timeout=120)
    assert [s.name for s in result.scenarios] == [run.name]
    assert result.ok, conformance.report([result])
    (scenario,) = result.scenarios
    statuses = {check.status for check in scenario.checks}
    if run.name == "tasks-status-notifications":
        assert statuses == {"SKIPPED"}
    else:
        assert statuses == {"SUCCESS"}, conformance.report([result])

"""Our client against the official conformance suite's client scenarios.

`conformance client --scenario NAME --command "python conformance_client.py"`
starts the scenario's mock server and runs our client (`programs/
conformance_client.py`, `connect_http` at default settings) against it. Each
scenario here once failed: `initialize` (a 2025 mock answering
`server/discover` with an empty result), `elicitation-sep1034-client-defaults`
(the defaults of an accepted form). `tools_call` is the plain case.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import node22
from benchmarks._common import REPO

CLIENT = Path(__file__).parent / "programs" / "conformance_client.py"
VERSION = "0.2.0-alpha.12"


@pytest.fixture(scope="module")
def installed() -> dict[str, Path]:
    return node22.ensure_node22_peers(print)


@pytest.mark.parametrize(
    "scenario", ["initialize", "tools_call", "elicitation-sep1034-client-defaults"]
)
def test_our_client_passes_the_scenario(
    installed: dict[str, Path], scenario: str, tmp_path: Path
) -> None:
    command = shlex.join([sys.executable, str(CLIENT)])
    proc = subprocess.run(
        [
            *node22.conformance_command(VERSION),
            "client",
            "--scenario",
            scenario,
            "--command",
            command,
            "--output-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    reports = sorted(tmp_path.rglob("checks.json"))
    assert reports, proc.stdout + proc.stderr
    checks: list[dict[str, Any]] = [
        check for path in reports for check in json.loads(path.read_text())
    ]
    failed = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert failed == [], proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr

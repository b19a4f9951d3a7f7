"""pyright and mypy (strict) on code that uses the generated dispatch stubs.

`dispatch_ok.py` must type-check cleanly: handler params and results, and
client results, are the exact generated types (`assert_type`); so must
`client_ok.py`, code using the high-level `Client` with no casts. Every line of
`dispatch_wrong.py` marked `# expect-error` must be reported, and nothing else.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.quality.test_static import tool

HERE = Path(__file__).parent
OK = HERE / "dispatch_ok.py"
CLIENT_OK = HERE / "client_ok.py"
WRONG = HERE / "dispatch_wrong.py"


def expected_error_lines() -> set[int]:
    lines = WRONG.read_text().splitlines()
    return {number for number, line in enumerate(lines, 1) if "# expect-error" in line}


@pytest.mark.timeout(900)
def test_pyright_strict() -> None:
    result = subprocess.run(
        [
            tool("pyright"),
            "--outputjson",
            "--pythonpath",
            sys.executable,
            str(OK),
            str(CLIENT_OK),
            str(WRONG),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(result.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    in_ok = [
        d["message"]
        for d in errors
        if Path(d["file"]).name in (OK.name, CLIENT_OK.name)
    ]
    assert in_ok == []
    wrong_lines = {
        d["range"]["start"]["line"] + 1
        for d in errors
        if Path(d["file"]).name == WRONG.name
    }
    assert wrong_lines == expected_error_lines()


@pytest.mark.timeout(900)
def test_mypy_strict() -> None:
    result = subprocess.run(
        [
            tool("mypy"),
            "--strict",
            "--no-incremental",
            "--show-error-codes",
            str(OK),
            str(CLIENT_OK),
            str(WRONG),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    located = re.findall(r"^(.+?):(\d+): error:", result.stdout, re.MULTILINE)
    assert [
        line for file, line in located if file.endswith((OK.name, CLIENT_OK.name))
    ] == [], result.stdout
    wrong_lines = {int(line) for file, line in located if file.endswith(WRONG.name)}
    assert wrong_lines == expected_error_lines(), result.stdout

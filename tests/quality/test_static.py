"""Static checks run as part of the suite, so one command runs everything.

black and ruff over the whole tree; pyright and mypy in strict mode over the
generator, the runtime and the generated package (all must pass with no ignores).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BIN = Path(sys.executable).parent
SOURCES = [
    "codegen",
    "mcp_specgen_runtime",
    "generated",
    "tests",
    "benchmarks",
    "examples",
    "packaging",
]


def tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found, f"{name} is not installed; install the project with its [dev] extra"
    return found


def run(*command: str) -> None:
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert (
        result.returncode == 0
    ), f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}"


def test_black() -> None:
    run(tool("black"), "--check", "--quiet", *SOURCES)


def test_ruff() -> None:
    run(tool("ruff"), "check", "--no-cache", *SOURCES)


@pytest.mark.timeout(900)
def test_pyright_strict() -> None:
    run(
        tool("pyright"),
        "--pythonpath",
        sys.executable,
        "codegen",
        "mcp_specgen_runtime",
        "generated",
    )


@pytest.mark.timeout(900)
def test_mypy_strict() -> None:
    run(
        tool("mypy"),
        "--strict",
        "--no-incremental",
        "codegen/mcp_specgen",
        "mcp_specgen_runtime",
        "generated/mcp_specgen_types",
    )

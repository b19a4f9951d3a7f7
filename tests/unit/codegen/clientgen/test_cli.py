"""`mcp-codegen client` on the command line: refusals and exit codes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_specgen.cli import main


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["client", *args])
    return result.exit_code, result.output + (result.stderr or "")


def test_a_command_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    code, output = run("no-such-program-here", "--out", str(tmp_path), "--package", "x")
    assert code == 1
    assert "cannot read the server 'no-such-program-here'" in output
    assert "FileNotFoundError" in output
    assert not any(tmp_path.iterdir())


def test_a_server_that_is_not_mcp_is_a_clear_error(tmp_path: Path) -> None:
    target = f"{sys.executable} -c 'print(\"hello\")'"
    code, output = run(
        target, "--out", str(tmp_path), "--package", "x", "--timeout", "5"
    )
    assert code == 1
    assert "cannot read the server" in output


def test_a_header_must_be_k_equals_v(tmp_path: Path) -> None:
    code, output = run(
        "http://127.0.0.1:9/mcp", "--package", "x", "--header", "novalue"
    )
    assert code == 2
    assert "'novalue' is not K=V" in output


@pytest.mark.parametrize(
    "package",
    ["json", "typing", "mcp_specgen", "mcp_specgen_runtime", "mcp_specgen_types"],
)
def test_a_package_that_shadows_a_module_is_refused(
    package: str, tmp_path: Path
) -> None:
    code, output = run(
        "no-such-program-here", "--out", str(tmp_path), "--package", package
    )
    assert code == 1
    assert f"--package {package!r} would shadow" in output
    assert not any(tmp_path.iterdir())

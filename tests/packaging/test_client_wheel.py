"""`mcp-codegen client` from the built wheel, as a user runs it: in a fresh
venv (the wheel with its `codegen` extra), from a folder outside the
checkout, against npm server-everything: generate, `--check`, import, call."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peers
from tests.conftest import ROOT

CALL = """
import anyio, shlex, sys
import everything

async def main() -> None:
    async with everything.EverythingClient(shlex.split(sys.argv[1])) as server:
        weather = await server.get_structured_content(location="Chicago")
        assert isinstance(weather, everything.GetStructuredContentResult)
        print("echo:", (await server.echo(message="wheel")).content[0].text)

anyio.run(main)
"""


def run(command: list[str], cwd: Path) -> str:
    result = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.timeout(900)
def test_client_command_from_the_wheel(tmp_path: Path) -> None:
    peers.ensure_node_peers(print)
    target = shlex.join(peers.server_everything_command())
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)], tmp_path)
    (wheel,) = wheels.glob("mcp_specgen-*.whl")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", f"{wheel}[codegen]"], tmp_path)
    away = tmp_path / "project"
    away.mkdir()
    command = str(venv / "bin" / "mcp-codegen")
    made = run([command, "client", target, "--package", "everything"], away)
    assert "for mcp-servers/everything" in made
    checked = run(
        [command, "client", target, "--package", "everything", "--check"], away
    )
    assert "everything matches mcp-servers/everything" in checked
    assert "echo: Echo: wheel" in run([str(python), "-c", CALL, target], away)

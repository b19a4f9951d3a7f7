"""`mcp-codegen client` from the built wheels, as a user runs it: in the
fresh `pip install mcp-specgen` venv, from a folder outside the checkout,
against npm server-everything: generate, `--check`, import, call."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from benchmarks import peers

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
def test_client_command_from_the_wheel(product_bin: Path, outside: Path) -> None:
    peers.ensure_node_peers(print)
    target = shlex.join(peers.server_everything_command())
    away = outside / "typed-client"
    away.mkdir()
    command = str(product_bin / "mcp-codegen")
    made = run([command, "client", target, "--package", "everything"], away)
    assert "for mcp-servers/everything" in made
    checked = run(
        [command, "client", target, "--package", "everything", "--check"], away
    )
    assert "everything matches mcp-servers/everything" in checked
    python = str(product_bin / "python")
    assert "echo: Echo: wheel" in run([python, "-c", CALL, target], away)

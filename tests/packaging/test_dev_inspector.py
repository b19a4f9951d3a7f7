"""The commands `mcp-codegen dev` prints to attach the MCP Inspector work with
the real Inspector (the pinned one, in its CLI mode; `benchmarks.node22`
installs it and Node.js 22 into `.cache/peers/` on first use): the HTTP one
against a running `dev`, the stdio one starting the server itself; and
`dev --inspector` runs its web UI (on free ports) and stops it on SIGINT."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from benchmarks import node22
from mcp_specgen.dev import inspector
from mcp_specgen.dev.reload import free_port
from tests.unit.codegen.test_dev import SERVER, Dev

LIMIT = 60.0


@pytest.fixture(scope="module")
def cli() -> list[str]:
    node22.ensure_inspector(print)
    return node22.inspector_cli_command()


def test_the_pinned_version_is_the_one_tested() -> None:
    assert inspector.INSPECTOR_VERSION == node22.INSPECTOR_VERSION


def listed(command: list[str]) -> list[str]:
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=node22.inspector_env(),
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [tool["name"] for tool in json.loads(done.stdout)["tools"]]


def test_the_http_attach_command(cli: list[str], tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    dev = Dev(tmp_path, "server.py", "--port", "0")
    try:
        attach = shlex.split(dev.wait_for("attach the MCP Inspector: (.*)").group(1))
        dev.wait_for("listening on")
        npx = ["npx", "-y", f"{inspector.INSPECTOR_PACKAGE}@{node22.INSPECTOR_VERSION}"]
        assert attach[:3] == npx
        assert listed([*cli, *attach[3:], "--method", "tools/list"]) == ["one"]
        assert dev.stop() == 0
    finally:
        dev.close()


def test_the_stdio_attach_command(cli: list[str], tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    shown = subprocess.run(
        [sys.executable, "-m", "mcp_specgen", "dev", "server.py", "--stdio"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=True,
    ).stdout.splitlines()
    attach = shlex.split(shown[3])
    separator = attach.index("--")
    command = [*cli, "--method", "tools/list", *attach[separator:]]
    assert listed(command) == ["one"]


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def test_dev_inspector_runs_the_real_web_inspector_and_stops_it(
    cli: list[str], tmp_path: Path
) -> None:
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    node, script, _ = cli  # `--cli` dropped: the web UI, as `--inspector` runs it
    ports = {
        name: str(free_port("127.0.0.1"))
        for name in ("CLIENT_PORT", "MCP_SANDBOX_PORT", "MCP_APP_ORIGIN_PORT")
    }
    env = {
        **node22.inspector_env(),
        **ports,
        "MCP_AUTO_OPEN_ENABLED": "false",
        inspector.INSPECTOR_ENV: shlex.join([node, script]),
    }
    web = f"http://127.0.0.1:{ports['CLIENT_PORT']}/"
    dev = Dev(tmp_path, "server.py", "--port", "0", "--inspector", env=env)
    try:
        dev.wait_for("starting the MCP Inspector")
        deadline = time.monotonic() + LIMIT
        while not answers(web):
            assert time.monotonic() < deadline, "the Inspector did not start"
            assert dev.process.poll() is None
            time.sleep(0.2)
        assert dev.stop() == 0
        assert not answers(web)  # stopped with dev
    finally:
        dev.close()

"""The official MCP Inspector, in its scriptable CLI mode, against a project
made by `mcp-codegen new`, over stdio as a host would start it.

The Inspector (and the Node.js 22 it needs) come from `benchmarks.node22`
(installed into `.cache/peers/` on first use). The server runs with this
venv's python as `python -m demo` from the project folder (`--cwd`), so the
package is found without installing it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import node22
from mcp_specgen.scaffold import create_project

LIMIT = 60.0


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    node22.ensure_inspector(print)
    return node22.inspector_cli_command()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_project("demo", tmp_path_factory.mktemp("scaffold"))


def inspect(inspector: list[str], demo: Path, *args: str) -> Any:
    """One Inspector CLI run against `python -m demo`; its JSON output."""
    proc = subprocess.run(
        [*inspector, "--cwd", str(demo), *args, "--", sys.executable, "-m", "demo"],
        capture_output=True,
        text=True,
        env=node22.inspector_env(),
        timeout=LIMIT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_the_inspector_lists_the_tools(inspector: list[str], demo: Path) -> None:
    listed = inspect(inspector, demo, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert sorted(tools) == ["countdown", "echo"]
    tool = tools["echo"]
    assert tool["description"] == "Return the message unchanged."
    assert tool["inputSchema"]["properties"] == {"message": {"type": "string"}}
    assert tool["inputSchema"]["required"] == ["message"]


def test_the_inspector_calls_echo(inspector: list[str], demo: Path) -> None:
    called = inspect(
        inspector,
        demo,
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "message=hi",
    )
    assert called["content"] == [{"type": "text", "text": "hi"}]
    assert called.get("isError", False) is False


def test_the_inspector_calls_the_long_running_example(
    inspector: list[str], demo: Path
) -> None:
    called = inspect(
        inspector,
        demo,
        "--method",
        "tools/call",
        "--tool-name",
        "countdown",
        "--tool-arg",
        "steps=2",
        "--tool-arg",
        "seconds_per_step=0",
    )
    assert called["content"] == [{"type": "text", "text": "counted down 2 steps"}]
    assert called.get("isError", False) is False


def test_the_inspector_reads_the_resource(inspector: list[str], demo: Path) -> None:
    read = inspect(
        inspector, demo, "--method", "resources/read", "--uri", "info://demo/about"
    )
    (contents,) = read["contents"]
    assert contents["uri"] == "info://demo/about"
    assert contents["text"].startswith("demo 0.1.0")

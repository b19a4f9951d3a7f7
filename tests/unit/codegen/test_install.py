"""`mcp-codegen install`: each client's file and shape, merging without loss,
refusing a taken name unless forced, atomic writes, and an entry whose
command really starts the server (run as a client would: another folder, a
bare environment plus the entry's `env`)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_specgen.dev.clients import (
    InstallError,
    client_config,
    install_entry,
    server_entry,
)
from mcp_specgen_runtime import Client

LIMIT = 60.0
HOME = Path("/home/u")
SERVER = """
import os
from mcp_specgen_runtime.app import App

app = App("greeter", version="1")


@app.tool()
def greet() -> str:
    return os.environ.get("GREETING", "unset")
"""


@pytest.mark.parametrize(
    ("client", "platform", "environ", "path", "key"),
    [
        (
            "claude-desktop",
            "darwin",
            {},
            HOME / "Library/Application Support/Claude/claude_desktop_config.json",
            "mcpServers",
        ),
        (
            "claude-desktop",
            "win32",
            {"APPDATA": "C:/Users/u/AppData/Roaming"},
            Path("C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json"),
            "mcpServers",
        ),
        (
            "claude-desktop",
            "linux",
            {},
            HOME / ".config/Claude/claude_desktop_config.json",
            "mcpServers",
        ),
        (
            "claude-desktop",
            "linux",
            {"XDG_CONFIG_HOME": "/xdg"},
            Path("/xdg/Claude/claude_desktop_config.json"),
            "mcpServers",
        ),
        ("cursor", "linux", {}, HOME / ".cursor/mcp.json", "mcpServers"),
        ("vscode", "darwin", {}, Path("/work/.vscode/mcp.json"), "servers"),
    ],
)
def test_each_client_s_file_and_key(
    client: str, platform: str, environ: dict[str, str], path: Path, key: str
) -> None:
    config = client_config(
        client, home=HOME, cwd=Path("/work"), platform=platform, environ=environ
    )
    assert (config.path, config.key) == (path, key)


def test_the_entries_shapes() -> None:
    cursor = client_config("cursor", home=HOME, cwd=HOME)
    vscode = client_config("vscode", home=HOME, cwd=HOME)
    command = ["/venv/bin/python", "-m", "x"]
    assert server_entry(cursor, command, {}) == {
        "command": "/venv/bin/python",
        "args": ["-m", "x"],
    }
    assert server_entry(vscode, command, {"K": "V"}) == {
        "type": "stdio",
        "command": "/venv/bin/python",
        "args": ["-m", "x"],
        "env": {"K": "V"},
    }
    with pytest.raises(ValueError, match="unknown client"):
        client_config("zed", home=HOME, cwd=HOME)


def test_merging_keeps_the_rest_and_refuses_a_taken_name(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    before = {"theme": "dark", "mcpServers": {"other": {"command": "o"}}}
    path.write_text(json.dumps(before))
    path.chmod(0o600)
    install_entry(path, "mcpServers", "mine", {"command": "m"}, force=False)
    after = json.loads(path.read_text())
    assert after == {
        "theme": "dark",
        "mcpServers": {"other": {"command": "o"}, "mine": {"command": "m"}},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    written = path.read_text()
    with pytest.raises(InstallError, match="already has a server named 'mine'"):
        install_entry(path, "mcpServers", "mine", {"command": "new"}, force=False)
    assert path.read_text() == written
    install_entry(path, "mcpServers", "mine", {"command": "new"}, force=True)
    assert json.loads(path.read_text())["mcpServers"]["mine"] == {"command": "new"}
    assert [p.name for p in tmp_path.iterdir()] == ["mcp.json"]  # no temporary left


def test_a_symlinked_file_is_written_through_its_link(tmp_path: Path) -> None:
    # Config files kept in a dotfiles repository are symlinks into it: the
    # entry goes to the file the link names, and the link stays.
    kept = tmp_path / "dotfiles" / "mcp.json"
    kept.parent.mkdir()
    kept.write_text('{"mcpServers": {"other": {"command": "o"}}}')
    link = tmp_path / "home" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(kept)
    install_entry(link, "mcpServers", "mine", {"command": "m"}, force=False)
    assert link.is_symlink()
    servers = json.loads(kept.read_text())["mcpServers"]
    assert servers == {"other": {"command": "o"}, "mine": {"command": "m"}}
    assert sorted(p.name for p in kept.parent.iterdir()) == ["mcp.json"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"servers": {} // a comment\n}', "is not plain JSON"),
        ("[1]", "is not a JSON object"),
        ('{"servers": []}', "'servers' is not an object"),
    ],
)
def test_a_file_it_cannot_read_is_left_alone(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text)
    with pytest.raises(InstallError, match=reason):
        install_entry(path, "servers", "mine", {"command": "m"}, force=False)
    assert path.read_text() == text


def mcp_codegen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_specgen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )


@pytest.mark.parametrize("client", ["claude-desktop", "cursor", "vscode"])
def test_the_written_command_starts_the_server(tmp_path: Path, client: str) -> None:
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    config = tmp_path / "config" / "file.json"
    done = mcp_codegen(
        tmp_path,
        *("install", "server.py", "--client", client),
        *("--config", str(config), "--env", "GREETING=hello"),
    )
    assert done.returncode == 0, done.stderr
    assert f"added 'greeter' ({client})" in done.stdout
    document = json.loads(config.read_text())
    entry = document["servers" if client == "vscode" else "mcpServers"]["greeter"]
    assert entry["env"] == {"GREETING": "hello"}

    async def greet() -> Any:
        command = [entry["command"], *entry["args"]]
        bare = {"PATH": os.defpath, **entry["env"]}
        with anyio.fail_after(LIMIT):
            async with Client(command, env=bare, cwd="/") as session:
                return (await session.call_tool("greet", {})).content

    assert "hello" in str(anyio.run(greet))

    again = mcp_codegen(
        tmp_path, "install", "server.py", "--client", client, "--config", str(config)
    )
    assert again.returncode == 1
    assert "already has a server named 'greeter'" in again.stderr


def test_print_writes_nothing_and_names_are_chosen(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    done = mcp_codegen(
        tmp_path,
        *("install", "server.py", "--client", "vscode", "--print", "--name", "g"),
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert list(printed["servers"]) == ["g"]
    assert printed["servers"]["g"]["type"] == "stdio"
    assert not (tmp_path / ".vscode").exists()
    broken = mcp_codegen(tmp_path, "install", "nope.py", "--client", "cursor")
    assert broken.returncode == 1
    assert "error: nope.py: no such file" in broken.stderr
    bad_env = mcp_codegen(
        tmp_path, "install", "server.py", "--client", "cursor", "--env", "NOVALUE"
    )
    assert bad_env.returncode == 2
    assert "'NOVALUE' is not K=V" in bad_env.stderr

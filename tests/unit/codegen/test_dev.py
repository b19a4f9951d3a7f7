"""`mcp-codegen dev`: what a TARGET names, and the loop itself in a real
process: it serves (a Client calls a tool), reloads after an edit (the new
tool appears), attaches an Inspector, and stops cleanly on SIGINT or SIGTERM."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from mcp_specgen.dev.inspector import for_http, for_stdio, missing_node
from mcp_specgen.dev.reload import endpoint_url
from mcp_specgen.dev.targets import Target, TargetError, find_target, load_app
from mcp_specgen.scaffold import create_project
from mcp_specgen_runtime import Client

LIMIT = 60.0
SERVER = """
from mcp_specgen_runtime.app import App

app = App("dev-demo", version="1")


@app.tool()
def one() -> str:
    return "1"
"""
SECOND_TOOL = """

@app.tool()
def two() -> str:
    return "2"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def imports_forgotten(tmp_path: Path) -> Iterator[None]:
    """What `load_app` imported from `tmp_path`, and the path it added, go."""
    path = list(sys.path)
    yield
    sys.path[:] = path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "server.py").write_text(textwrap.dedent(SERVER))
    return tmp_path


# --- targets ------------------------------------------------------------------------


def test_a_file_target_is_served_from_its_folder(project: Path) -> None:
    found = find_target("server.py", project)
    assert found == Target("file", str(project / "server.py"), "app", project)
    assert find_target("server.py:other", project).name == "other"
    assert load_app(found).name == "dev-demo"


def test_a_module_target_is_imported_from_the_current_folder(project: Path) -> None:
    package = project / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("from server import app as served\n")
    found = find_target("pkg.mod:served", project)
    assert found == Target("module", "pkg.mod", "served", project)
    assert found.runner_args() == ["--app-dir", str(project), "pkg.mod:served"]
    assert load_app(found).name == "dev-demo"


def test_without_a_target_the_scaffolded_project_is_served(tmp_path: Path) -> None:
    made = create_project("my-server", tmp_path)
    found = find_target(None, made)
    assert found == Target("module", "my_server.server", "app", made)
    assert load_app(found).name == "my-server"
    with pytest.raises(TargetError, match="no TARGET given"):
        find_target(None, tmp_path)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("missing.py", "missing.py: no such file"),
        ("server.py:not-a-name", "after ':' comes the name of the App"),
        ("a-b", "neither a .py file nor a module name"),
    ],
)
def test_a_bad_target_is_named(project: Path, text: str, reason: str) -> None:
    with pytest.raises(TargetError, match=re.escape(reason)):
        find_target(text, project)


@pytest.mark.parametrize(
    ("tail", "shown"),
    [
        ("\ndef broken(:\n", "SyntaxError"),
        ("\nimport missing_dependency_of_the_user\n", "ModuleNotFoundError"),
        ("\nraise RuntimeError('broken on purpose')\n", "RuntimeError"),
    ],
)
def test_a_target_that_fails_to_import_is_named_with_its_own_traceback(
    project: Path, tail: str, shown: str
) -> None:
    source = project / "server.py"
    source.write_text(source.read_text() + tail)
    for text in ("server.py", "server"):
        with pytest.raises(TargetError) as raised:
            load_app(find_target(text, project))
        message = str(raised.value)
        assert message.startswith(f"{text if text == 'server' else source}")
        assert "failed to import" in message
        assert shown in message
        assert str(source) in message  # where it broke
        # Only the user's code: not the import machinery nor this package.
        assert "importlib" not in message
        assert "mcp_specgen" not in message.split("\n", 1)[1]
        sys.modules.pop("server", None)


def test_what_is_not_an_app_is_refused(project: Path) -> None:
    (project / "other.py").write_text("app = 3\n")
    with pytest.raises(
        TargetError, match=re.escape("other.py:app is a int, not an App")
    ):
        load_app(find_target("other.py", project))
    with pytest.raises(TargetError, match="has no 'nothing'"):
        load_app(find_target("server.py:nothing", project))
    with pytest.raises(TargetError, match=re.escape("no module 'nowhere.mod'")):
        load_app(find_target("nowhere.mod", project))
    # A module the target imports is missing, not the target (`pk` is a
    # prefix of `pkg.mod`, but no package of it).
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "mod.py").write_text("import pk\n")
    with pytest.raises(TargetError, match=re.escape("pkg.mod:app failed")) as raised:
        load_app(find_target("pkg.mod", project))
    assert "No module named 'pk'" in str(raised.value)


def test_the_inspector_commands() -> None:
    url = "http://127.0.0.1:8000/mcp"
    npx = ["npx", "-y", "@modelcontextprotocol/inspector@2.12.0"]
    env = {k: v for k, v in os.environ.items() if k != "MCP_INSPECTOR_COMMAND"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", env)
        assert for_http(url) == [*npx, "--transport", "http", "--server-url", url]
        assert for_stdio(["python", "s.py"]) == [*npx, "--", "python", "s.py"]
        patch.setenv("PATH", "")
        assert "none is on PATH" in (missing_node() or "")
        patch.setenv("MCP_INSPECTOR_COMMAND", "node /opt/inspector.js")
        assert for_http(url)[:2] == ["node", "/opt/inspector.js"]
        assert missing_node() is None
    assert endpoint_url("0.0.0.0", 1) == "http://127.0.0.1:1/mcp"
    assert endpoint_url("::", 1) == "http://[::1]:1/mcp"


# --- the loop ----------------------------------------------------------------------


class Dev:
    """A running `mcp-codegen dev`, its stderr read line by line."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_specgen", "dev", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def close(self) -> None:
        """Kill it if still running; release its pipe."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(LIMIT)
        assert self.process.stderr is not None
        self.process.stderr.close()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first line from now matching `pattern`."""
        while True:
            try:
                line = self.lines.get(timeout=LIMIT)
            except queue.Empty:
                raise AssertionError(f"no {pattern!r} in {self.seen}") from None
            self.seen.append(line)
            found = re.search(pattern, line)
            if found is not None:
                return found

    def stop(self, how: signal.Signals = signal.SIGINT) -> int:
        self.process.send_signal(how)
        return self.process.wait(timeout=LIMIT)


@pytest.fixture
def running(project: Path) -> Iterator[Dev]:
    dev = Dev(project, "server.py", "--port", "0")
    try:
        yield dev
    finally:
        dev.close()


def assert_gone(url: str) -> None:
    """Nothing listens at `url` any more."""
    with pytest.raises(httpx.ConnectError):
        httpx.get(url.removesuffix("/mcp") + "/healthz")


async def tool_names(url: str) -> list[str]:
    with anyio.fail_after(LIMIT):
        async with Client(url) as client:
            return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.anyio
async def test_dev_serves_reloads_on_an_edit_and_stops_on_sigint(
    running: Dev, project: Path
) -> None:
    url = running.wait_for(r"serving \S+ at (http://\S+)").group(1)
    attach = running.wait_for("attach the MCP Inspector: (.*)").group(1)
    assert shlex.split(attach)[-4:] == ["--transport", "http", "--server-url", url]
    running.wait_for(f"listening on {re.escape(url)}")
    assert await tool_names(url) == ["one"]
    async with Client(url) as client:
        assert "1" in str((await client.call_tool("one", {})).content)

    with (project / "server.py").open("a") as source:
        source.write(textwrap.dedent(SECOND_TOOL))
    running.wait_for("server.py changed; restarting")
    running.wait_for(f"listening on {re.escape(url)}")
    assert await tool_names(url) == ["one", "two"]

    assert running.stop(signal.SIGINT) == 0
    running.wait_for("mcp-codegen dev: stopped")
    assert_gone(url)


@pytest.mark.anyio
async def test_dev_stops_on_sigterm(running: Dev) -> None:
    url = running.wait_for(r"listening on (http://\S+/mcp)").group(1)
    assert await tool_names(url) == ["one"]
    assert running.stop(signal.SIGTERM) == 0
    assert "Traceback" not in "\n".join(running.seen)
    assert_gone(url)


FAKE_INSPECTOR = """
import json, os, sys, time, anyio
from mcp_specgen_runtime import Client

url = sys.argv[sys.argv.index("--server-url") + 1]

async def main():
    async with Client(url) as client:
        return [tool.name for tool in (await client.list_tools()).tools]

names = anyio.run(main)
with open(sys.argv[1], "w") as out:
    json.dump({"argv": sys.argv[2:], "tools": names, "pid": os.getpid()}, out)
time.sleep(3600)  # as the real one: it runs until stopped
"""


def test_dev_inspector_starts_it_attached_and_stops_it(project: Path) -> None:
    fake = project / "inspector.txt"  # not .py: its changes would reload
    fake.write_text(textwrap.dedent(FAKE_INSPECTOR))
    report = project / "inspected.json"
    command = f"{shlex.quote(sys.executable)} {fake} {report}"
    env = {**os.environ, "MCP_INSPECTOR_COMMAND": command}
    dev = Dev(project, "server.py", "--port", "0", "--inspector", env=env)
    try:
        url = dev.wait_for(r"serving \S+ at (http://\S+)").group(1)
        dev.wait_for("starting the MCP Inspector")
        for _ in range(int(LIMIT * 10)):
            if report.exists() and report.read_text():
                break
            threading.Event().wait(0.1)
        seen = json.loads(report.read_text())
        assert seen["argv"] == ["--transport", "http", "--server-url", url]
        assert seen["tools"] == ["one"]
        assert dev.stop() == 0
        with pytest.raises(ProcessLookupError):
            for _ in range(int(LIMIT * 10)):
                os.kill(seen["pid"], 0)  # until it is gone
                threading.Event().wait(0.1)
    finally:
        dev.close()


def test_dev_stdio_prints_a_command_that_serves(project: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "mcp_specgen", "dev", "server.py", "--stdio"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=True,
    ).stdout.splitlines()
    command = shlex.split(shown[1])
    assert command[:3] == [sys.executable, "-m", "mcp_specgen.dev.serve"]
    attach = shlex.split(shown[3])
    assert attach[-len(command) - 1 :] == ["--", *command]

    async def serve() -> list[str]:
        with anyio.fail_after(LIMIT):
            async with Client(command, cwd="/") as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    assert anyio.run(serve) == ["one"]


def test_a_port_in_use_is_refused_before_serving(project: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mcp_specgen",
                "dev",
                "server.py",
                "--port",
                f"{port}",
            ],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=LIMIT,
            check=False,
        )
    assert done.returncode == 1
    assert f"127.0.0.1:{port} is in use" in done.stderr
    assert "--port 0" in done.stderr
    assert "serving" not in done.stderr


def test_a_server_that_fails_to_start_is_reported_and_restarted(
    project: Path,
) -> None:
    source = project / "server.py"
    good = source.read_text()
    source.write_text(good + "\nraise RuntimeError('broken on purpose')\n")
    dev = Dev(project, "server.py", "--port", "0")
    try:
        dev.wait_for("RuntimeError: broken on purpose")
        dev.wait_for(r"the server exited \(status 1\); it starts again")
        source.write_text(good)
        dev.wait_for("server.py changed; restarting")
        dev.wait_for("listening on")
        assert dev.stop() == 0
    finally:
        dev.close()


def test_dev_stdio_inspector_runs_it_or_says_what_is_missing(project: Path) -> None:
    flags = ("--stdio", "--inspector")

    def dev_stdio(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcp_specgen", "dev", "server.py", *flags],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=LIMIT,
            check=False,
            env=env,
        )

    bare = {k: v for k, v in os.environ.items() if k != "MCP_INSPECTOR_COMMAND"}
    missing = dev_stdio({**bare, "PATH": ""})
    assert missing.returncode == 1
    assert "error: the MCP Inspector needs Node.js 22.19" in missing.stderr
    exits = f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(7)'"
    ran = dev_stdio({**bare, "MCP_INSPECTOR_COMMAND": exits})
    assert ran.returncode == 7  # the Inspector's own status

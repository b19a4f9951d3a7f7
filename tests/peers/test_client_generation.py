"""`mcp-codegen client` end to end against three real servers: our own
scaffold (`mcp-codegen new`, run as `python -m PKG`), a server written with
the official Python SDK, and npm server-everything. For each: generate the
package, check it with pyright (strict) and mypy --strict, import it and
make real calls, `--check` it in sync, then make it drift and see `--check`
name what drifted."""

from __future__ import annotations

import importlib
import json
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from benchmarks import peers
from mcp_specgen.cli import main
from mcp_specgen.scaffold import create_project
from mcp_specgen_types import latest

PROGRAMS = Path(__file__).parent / "programs"
BIN = Path(sys.executable).parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def client_command(target: str, out: Path, package: str, *more: str) -> tuple[int, str]:
    """Run `mcp-codegen client` (in a thread: it runs its own event loop)."""
    result = CliRunner().invoke(
        main, ["client", target, "--out", str(out), "--package", package, *more]
    )
    return result.exit_code, result.output + (result.stderr or "")


def generate(target: str, out: Path, package: str) -> ModuleType:
    """Generate the package, type-check it strictly, and import it."""
    code, output = client_command(target, out, package)
    assert code == 0, output
    (out / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    for command in (
        [str(BIN / "pyright"), "--pythonpath", sys.executable, package],
        [str(BIN / "mypy"), "--strict", "--no-incremental", package],
    ):
        checked = subprocess.run(
            command, cwd=out, capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    return load(out, package)


def load(out: Path, package: str) -> ModuleType:
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


def text_of(result: latest.CallToolResult | latest.GetPromptResult) -> str:
    if isinstance(result, latest.GetPromptResult):
        content: Any = result.messages[0].content
    else:
        content = result.content[0]
    assert isinstance(content, latest.TextContent)
    return content.text


def resource_text(result: latest.ReadResourceResult) -> str:
    contents = result.contents[0]
    assert isinstance(contents, latest.TextResourceContents)
    return contents.text


# -- the official Python SDK -----------------------------------------------------


@pytest.fixture(scope="module")
def sdk_python() -> str:
    return str(peers.ensure_python_peers(print))


def sdk_target(python: str, *, drift: bool = False) -> str:
    command = [python, str(PROGRAMS / "python_sdk_typed_server.py")]
    if drift:
        command = ["env", "MCP_DRIFT=1", *command]
    return shlex.join(command)


@pytest.mark.anyio
async def test_python_sdk_server(sdk_python: str, tmp_path: Path) -> None:
    target = sdk_target(sdk_python)
    package = await anyio.to_thread.run_sync(
        generate, target, tmp_path, "weather_sdk_client"
    )
    async with package.WeatherSdkClient(target, stderr="capture") as client:
        added = await client.add(a=40)
        assert added == package.AddResult(result=42)
        forecast = await client.forecast(city="Paris", days=2)
        assert isinstance(forecast, package.ForecastResult)
        assert (forecast.city, forecast.temperature) == ("Paris", 23.5)
        assert forecast.conditions == "sunny"
        with pytest.raises(package.ToolError, match="Error executing tool fail") as f:
            await client.fail(reason="no reason")
        assert f.value.tool == "fail"
        assert f.value.result.is_error is True
        prompt = await client.prompt_review(code="x = 1", language="go")
        assert text_of(prompt) == "Review this go: x = 1"
        greeting = await client.read_greeting(name="Ada Lovelace")
        assert resource_text(greeting) == "Hello, Ada Lovelace!"
    code, output = await anyio.to_thread.run_sync(
        lambda: client_command(target, tmp_path, "weather_sdk_client", "--check")
    )
    assert code == 0, output
    assert "matches weather-sdk 2.1.0" in output
    drifted = sdk_target(sdk_python, drift=True)
    code, output = await anyio.to_thread.run_sync(
        lambda: client_command(drifted, tmp_path, "weather_sdk_client", "--check")
    )
    assert code == 1
    assert "drift: tool 'add' changed" in output
    assert "drift: tool 'subtract' added" in output
    assert "out of date: weather_sdk_client/client.py (stale)" in output


# -- our own scaffold ------------------------------------------------------------

EXTRA = '''

class Stats(msgspec.Struct):
    """Counts of a text."""

    words: int
    letters: int


@app.tool()
def stats(text: str, *, strip: bool = True) -> Stats:
    """Count the words and letters of a text."""
    text = text.strip() if strip else text
    return Stats(words=len(text.split()), letters=sum(c.isalpha() for c in text))


@app.resource("notes://{topic}/{id}", mime_type="text/plain")
def note(topic: str, id: str) -> str:
    """A note on a topic."""
    return f"note {id} on {topic}"
'''

DRIFT = '''

@app.tool()
async def shout(message: str) -> str:
    """Return the message in capitals."""
    return message.upper()
'''


@pytest.mark.anyio
async def test_scaffold_server(tmp_path: Path) -> None:
    project = create_project("demo-server", tmp_path)
    server = project / "demo_server" / "server.py"
    server.write_text(server.read_text() + EXTRA)
    target = shlex.join(
        ["env", f"PYTHONPATH={project}", sys.executable, "-m", "demo_server"]
    )
    out = tmp_path / "out"
    package = await anyio.to_thread.run_sync(generate, target, out, "demo_client")
    async with package.DemoServerClient(shlex.split(target)) as client:
        assert text_of(await client.echo(message="hi")) == "hi"
        counted = await client.stats(text="  two words ")
        assert counted == package.StatsResult(words=2, letters=8)
        assert text_of(await client.prompt_greet(name="Ada")) == (
            "Please greet Ada warmly."
        )
        note = await client.read_note(topic="a b", id="7")
        assert resource_text(note) == "note 7 on a b"
        with pytest.raises(package.ToolError, match="steps"):
            await client.countdown(steps=0)
    code, output = await anyio.to_thread.run_sync(
        lambda: client_command(target, out, "demo_client", "--check")
    )
    assert code == 0, output
    server.write_text(server.read_text() + DRIFT)
    code, output = await anyio.to_thread.run_sync(
        lambda: client_command(target, out, "demo_client", "--check")
    )
    assert code == 1
    assert "drift: tool 'shout' added" in output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


def test_scaffold_over_http(tmp_path: Path) -> None:
    """A URL target, with a header: the same package as over stdio."""
    project = create_project("web-demo", tmp_path)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "web_demo", "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=project,
    )
    try:
        wait_until_listening(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        out = tmp_path / "out"
        code, output = client_command(url, out, "web_client", "--header", "X-Test=1")
        assert code == 0, output
        assert "for web-demo 0.1.0" in output
        package = load(out, "web_client")

        async def call() -> str:
            async with package.WebDemoClient(url) as client:
                return text_of(await client.echo(message="over http"))

        assert anyio.run(call) == "over http"
        code, output = client_command(url, out, "web_client", "--check")
        assert code == 0, output
    finally:
        process.terminate()
        process.wait(timeout=30)


# -- npm server-everything --------------------------------------------------------


@pytest.mark.anyio
async def test_server_everything(tmp_path: Path) -> None:
    await anyio.to_thread.run_sync(lambda: peers.ensure_node_peers(print))
    target = shlex.join(peers.server_everything_command())
    package = await anyio.to_thread.run_sync(
        generate, target, tmp_path, "everything_client"
    )
    async with package.EverythingClient(shlex.split(target)) as client:
        assert text_of(await client.echo(message="hi")) == "Echo: hi"
        assert "3" in text_of(await client.get_sum(a=1, b=2))
        weather = await client.get_structured_content(location="Chicago")
        assert isinstance(weather, package.GetStructuredContentResult)
        assert isinstance(weather.temperature, int | float)
        prompt = await client.prompt_args_prompt(city="Paris")
        assert "Paris" in text_of(prompt)
        read = await client.read_dynamic_text_resource(resource_id="3")
        assert "3" in resource_text(read)
    code, output = await anyio.to_thread.run_sync(
        lambda: client_command(target, tmp_path, "everything_client", "--check")
    )
    assert code == 0, output
    client_py = tmp_path / "everything_client" / "client.py"
    client_py.write_text(client_py.read_text() + "\n# edited by hand\n")
    code, output = await anyio.to_thread.run_sync(
        lambda: client_command(target, tmp_path, "everything_client", "--check")
    )
    assert code == 1
    assert "out of date: everything_client/client.py (stale)" in output

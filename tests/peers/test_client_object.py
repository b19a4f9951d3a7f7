"""`Client` against real servers: npm server-everything over stdio and
Streamable HTTP, the official Python SDK's server in both eras, our own `App`
over stdio; and the README's job (spawn a server, answer sampling, list tools,
call one) in at most eight lines."""

from __future__ import annotations

import inspect
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from benchmarks import peers
from mcp_specgen_runtime import Client, VersionCache
from mcp_specgen_types import latest
from mcp_specgen_types.latest import (
    CreateMessageRequestParams,
    CreateMessageResult,
    TextContent,
)

LIMIT = 60.0
PROGRAMS = Path(__file__).parent / "programs"
APP = Path(__file__).parents[1] / "unit" / "runtime" / "app" / "stdio_app.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def everything() -> list[str]:
    peers.ensure_node_peers(print)
    return peers.server_everything_command()


@pytest.fixture(scope="module")
def python_sdk() -> list[str]:
    python = peers.ensure_python_peers(print)
    return [str(python), str(PROGRAMS / "python_sdk_echo_server.py")]


def peer_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def text_of(result: latest.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, latest.TextContent)
    return block.text


# -- the README job ----------------------------------------------------------


async def readme_job(server: list[str]) -> str:
    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        text = TextContent(text="42")
        return CreateMessageResult(role="assistant", model="m", content=text)

    async with Client(server, sampling=sampling) as client:
        tools = await client.list_tools()
        result = await client.call_tool("trigger-sampling-request", {"prompt": "?"})
        return f"{len(tools.tools)} tools; {text_of(result)}"


def test_the_readme_job_takes_at_most_eight_lines() -> None:
    source = inspect.getsource(readme_job).strip().splitlines()
    assert len([line for line in source[1:] if line.strip()]) <= 8


@pytest.mark.anyio
async def test_the_readme_job_against_server_everything(everything: list[str]) -> None:
    with anyio.fail_after(LIMIT):
        said = await readme_job(everything)
    assert '"text": "42"' in said or '"text":"42"' in said, said


# -- server-everything -----------------------------------------------------------


@pytest.mark.anyio
async def test_server_everything_over_stdio(everything: list[str]) -> None:
    cache = VersionCache()
    with anyio.fail_after(LIMIT):
        async with Client(everything, cache=cache, env=peer_env()) as client:
            assert client.negotiated.era == "legacy"
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None
            assert client.server_info.name == "mcp-servers/everything"
            tools = {tool.name: tool for tool in await client.list_all_tools()}
            echo = tools["echo"].input_schema
            assert isinstance(echo, latest.ToolInputSchema)
            result = await client.call_tool("echo", {"message": "hi"})
            assert text_of(result) == "Echo: hi"
            prompts = await client.list_all_prompts()
            assert prompts
            resources = await client.list_resources()
            read = await client.read_resource(resources.resources[0].uri)
            assert read.contents
            await client.ping()
            await client.set_logging_level("error")


@pytest.mark.anyio
async def test_server_everything_tells_of_a_subscribed_resource(
    everything: list[str],
) -> None:
    """Its `toggle-subscriber-updates` tool sends an update of every URI the
    session subscribed to at once (then every 5 s): it reaches
    `on_resource_updated`."""
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_resource_updated(uri: str) -> None:
        updated.append(uri)
        arrived.set()

    with anyio.fail_after(LIMIT):
        async with Client(
            everything, env=peer_env(), on_resource_updated=on_resource_updated
        ) as client:
            assert client.server_capabilities.resources is not None
            uri = (await client.list_resources()).resources[0].uri
            await client.subscribe_resource(uri)
            await client.call_tool("toggle-subscriber-updates")
            await arrived.wait()
            await client.unsubscribe_resource(uri)
            await client.call_tool("toggle-subscriber-updates")  # stop them
    assert updated[0] == uri


@pytest.mark.anyio
async def test_server_everything_over_streamable_http(tmp_path: Path) -> None:
    peers.ensure_node_peers(print)
    port = free_port()
    with server_process(
        peers.server_everything_command("streamableHttp"),
        {"PORT": str(port)},
        port,
        tmp_path,
    ):
        with anyio.fail_after(LIMIT):
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert client.protocol_version == "2025-11-25"
                result = await client.call_tool("echo", {"message": "hi"})
                assert text_of(result) == "Echo: hi"
                names = [tool.name async for tool in client.iter_tools()]
                assert "echo" in names


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class server_process:
    """A server process listening on `port` until the block ends."""

    def __init__(
        self, argv: list[str], env: dict[str, str], port: int, cwd: Path
    ) -> None:
        self.argv, self.env, self.port, self.cwd = argv, env, port, cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> None:
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**peer_env(), **self.env},
            cwd=self.cwd,
        )
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "the server exited"
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not listen in time")

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


# -- the Python SDK in both eras ---------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("versions", "era"), [(None, "modern"), (["2025-11-25"], "legacy")]
)
async def test_python_sdk_server_in_both_eras(
    python_sdk: list[str], versions: list[str] | None, era: str
) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(
            python_sdk, versions=versions, env=peer_env(), cache=None
        ) as client:
            assert client.negotiated.era == era
            (tool,) = await client.list_all_tools()
            # One view: the 2026 type, whatever the wire spoke.
            assert isinstance(tool, latest.Tool)
            assert isinstance(tool.input_schema, latest.ToolInputSchema)
            result = await client.call_tool("echo", {"message": "hi"})
            assert isinstance(result, latest.CallToolResult)
            assert text_of(result) == "hi"
            assert await client.list_all_prompts() == []


# -- our own App over stdio, as a string command -------------------------------------


@pytest.mark.anyio
async def test_an_app_over_stdio_from_a_command_string() -> None:
    command = f"{sys.executable} {APP}"
    with anyio.fail_after(LIMIT):
        async with Client(command) as client:
            assert client.negotiated.era == "modern"
            assert text_of(await client.call_tool("echo", {"message": "hi"})) == "hi"
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            assert prompt.messages


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("versions", "era"), [(None, "modern"), (["2025-11-25"], "legacy")]
)
async def test_plain_callables_answer_the_python_sdk_in_both_eras(
    versions: list[str] | None, era: str
) -> None:
    """Mid-call requests (legacy) and an `InputRequiredResult` (2026) are
    answered by the same three callables."""
    python = peers.ensure_python_peers(print)
    command = [str(python), str(PROGRAMS / "python_sdk_asking_server.py")]

    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant", model="m", content=TextContent(text="42")
        )

    async def elicitation(params: latest.ElicitRequestParams) -> latest.ElicitResult:
        return latest.ElicitResult(action="accept", content={"name": "Ada"})

    with anyio.fail_after(LIMIT):
        async with Client(
            command,
            versions=versions,
            env=peer_env(),
            cache=None,
            sampling=sampling,
            elicitation=elicitation,
            roots=["file:///work"],
        ) as client:
            assert client.negotiated.era == era
            result = await client.call_tool("ask_all", {"prompt": "?"})
    assert text_of(result).splitlines() == [
        "Hello, Ada!",
        "m said: 42",
        "roots: file:///work",
    ]


@pytest.fixture
def sse_url() -> Iterator[str]:
    """The Python SDK's deprecated HTTP+SSE server, running."""
    python = peers.ensure_python_peers(print)
    argv = [str(python), str(PROGRAMS / "python_sdk_http_server.py"), "0", "--sse"]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=peer_env(),
    )
    try:
        assert proc.stdout is not None
        word, port = proc.stdout.readline().decode().split()
        assert word == "ready"
        yield f"http://127.0.0.1:{int(port)}/sse"
    finally:
        proc.terminate()
        proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.anyio
async def test_an_http_sse_server_is_reached_through_the_fallback(
    sse_url: str,
) -> None:
    """Streamable HTTP is refused; the same URL is tried with HTTP+SSE."""
    with anyio.fail_after(LIMIT):
        async with Client(sse_url) as client:
            assert client.negotiated.era == "legacy"
            result = await client.call_tool("echo", {"message": "hi"})
            assert text_of(result) == "hi"

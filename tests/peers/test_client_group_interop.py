"""`ClientGroup` over real servers: server-everything (TypeScript SDK, speaks
2025-11-25) and the Python SDK's echo server (speaks 2026-07-28), over stdio,
given as commands: the group makes a `Client` for each (`client_options`).

Both have a tool `echo`: the group names them per server and routes each call
to its own server; a server that cannot start is reported by name.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from benchmarks import peers
from mcp_specgen_runtime.client import Client, ClientGroup, GroupError
from mcp_specgen_types import latest
from tests.peers.test_client_interop import PYTHON_ECHO_SERVER, peer_env

LIMIT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def options() -> dict[str, Any]:
    """For every `Client` the group makes: the peer's environment, quiet."""
    return {"name": "group", "env": peer_env(), "stderr": "discard"}


@pytest.fixture(scope="module")
def members() -> dict[str, list[str]]:
    python, _ = peers.ensure_all_peers(print)
    return {
        "everything": peers.server_everything_command(),
        "python": [str(python), str(PYTHON_ECHO_SERVER)],
    }


@pytest.mark.anyio
async def test_one_group_over_a_typescript_and_a_python_server(
    members: dict[str, list[str]],
) -> None:
    group = ClientGroup(members, client_options=options())
    with anyio.fail_after(LIMIT):
        async with group:
            clients = [group[name] for name in group.servers]
            versions = {
                name: client.protocol_version
                for name, client in zip(group.servers, clients, strict=True)
                if isinstance(client, Client)
            }
            assert versions == {"everything": "2025-11-25", "python": "2026-07-28"}
            tools = {t.name: t for t in await group.list_all_tools()}
            assert {"everything_echo", "python_echo"} <= tools.keys()
            for name in ("everything_echo", "python_echo"):
                assert isinstance(tools[name], latest.Tool)
                assert tools[name].input_schema.required == ["message"]
            one = await group.call_tool("everything_echo", {"message": "hi"})
            two = await group.call_tool("python_echo", {"message": "hi"})
            assert one.content == [latest.TextContent(text="Echo: hi")]
            assert two.content == [latest.TextContent(text="hi")]


@pytest.mark.anyio
async def test_a_server_that_cannot_start_is_named_and_the_others_serve(
    members: dict[str, list[str]],
) -> None:
    broken = [sys.executable, "-c", "import sys; sys.exit(3)"]
    servers = {"python": members["python"], "broken": broken}
    with anyio.fail_after(LIMIT):
        with pytest.raises(GroupError) as caught:
            async with ClientGroup(servers, client_options=options()):
                pytest.fail("opened with a server that exited")
        assert set(caught.value.failures) == {"broken"}

        async with ClientGroup(
            servers, client_options=options(), partial=True
        ) as group:
            assert group.servers == ("python",)
            assert "broken" in group.failures
            result = await group.call_tool("python_echo", {"message": "still here"})
            assert result.content == [latest.TextContent(text="still here")]

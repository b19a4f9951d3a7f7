"""`ClientGroup` over real servers: server-everything (TypeScript SDK, speaks
2025-11-25) and the Python SDK's echo server (speaks 2026-07-28), over stdio,
each behind a `ClientSession` typed in the newest revision (`SessionMember`).

Both have a tool `echo`: the group names them per server and routes each call
to its own server; a server that cannot start is reported by name.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from benchmarks import peers
from mcp_codegen_runtime.client import ClientGroup, GroupError
from mcp_codegen_runtime.protocol.client import ClientSession
from mcp_codegen_runtime.transports.stdio import connect_stdio
from mcp_codegen_types import latest
from tests.peers.test_client_interop import PYTHON_ECHO_SERVER, peer_env
from tests.unit.runtime.client.session_member import SessionMember

LIMIT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def over_stdio(command: list[str]) -> SessionMember:
    @asynccontextmanager
    async def open_session() -> AsyncIterator[ClientSession]:
        async with connect_stdio(
            command, name="group", version="1", env=peer_env(), stderr="discard"
        ) as session:
            yield session

    return SessionMember(open_session)


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
    group = ClientGroup({name: over_stdio(cmd) for name, cmd in members.items()})
    with anyio.fail_after(LIMIT):
        async with group:
            versions = {
                name: group[name].session.protocol_version  # type: ignore[attr-defined]
                for name in group.servers
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
    servers = {"python": over_stdio(members["python"]), "broken": over_stdio(broken)}
    with anyio.fail_after(LIMIT):
        with pytest.raises(GroupError) as caught:
            async with ClientGroup(servers):
                pytest.fail("opened with a server that exited")
        assert set(caught.value.failures) == {"broken"}

        servers = {
            "python": over_stdio(members["python"]),
            "broken": over_stdio(broken),
        }
        async with ClientGroup(servers, partial=True) as group:
            assert group.servers == ("python",)
            assert "broken" in group.failures
            result = await group.call_tool("python_echo", {"message": "still here"})
            assert result.content == [latest.TextContent(text="still here")]

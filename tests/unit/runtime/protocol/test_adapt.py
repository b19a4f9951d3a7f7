"""`adapt` and `ServerSession(versions=...)`: handlers written against one
revision serving peers of another, in both directions across the eras."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.codec.wire import extra
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.jsonrpc.dispatch import implemented_methods
from mcp_specgen_runtime.protocol.adapt import adapt, nearest
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import (
    KNOWN_VERSIONS,
    draft,
    v2024_11_05,
    v2025_06_18,
    v2025_11_25,
    v2026_07_28,
)
from tests.unit.runtime.session_programs.echo_session import (
    Echo0618,
    Echo1125,
    Echo2026,
)

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recording2026(Echo2026):
    """The 2026 echo handler, keeping the `_meta` of each call."""

    def __init__(self) -> None:
        self.metas: list[v2026_07_28.RequestMetaObject] = []

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        self.metas.append(params.meta)
        return await super().tools_call(params)


async def call_echo(served: ServerSession, version: str) -> tuple[Any, Any]:
    """List the tools and call echo as a client restricted to `version`."""
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, served.handler()),
            ClientSession(
                client_end, name="c", version="1", versions=[version]
            ) as client,
        ):
            assert client.protocol_version == version
            typed = client.package.Client(client)  # type: ignore[union-attr]
            tools = await typed.list_tools()
            result = await typed.call_tool(name="echo", arguments={"message": "hi"})
            return tools, result


@pytest.mark.anyio
@pytest.mark.parametrize("version", KNOWN_VERSIONS)
async def test_one_modern_handler_serves_every_revision(version: str) -> None:
    handler = Recording2026()
    served = ServerSession([handler], name="s", version="1", versions=KNOWN_VERSIONS)
    tools, result = await call_echo(served, version)
    assert [tool.name for tool in tools.tools] == ["echo"]
    assert result.content[0].text == "hi"
    meta = handler.metas[-1]
    assert meta.protocol_version == version
    assert meta.client_info.name == "c"  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2026-07-28", "draft"])
async def test_one_legacy_handler_serves_other_revisions(version: str) -> None:
    served = ServerSession(
        [Echo1125()], name="s", version="1", versions=[version, "2025-11-25"]
    )
    tools, result = await call_echo(served, version)
    assert result.content[0].text == "hi"
    if version != "2024-11-05":
        # What 2026 results require and 2025-11-25 lacks: promise no caching.
        assert (tools.cache_scope, tools.ttl_ms) == ("private", 0)


def test_the_nearest_handler_of_the_same_era_is_chosen() -> None:
    handlers = [Echo0618(), Echo2026()]
    assert isinstance(nearest(v2025_11_25, handlers), Echo0618)
    assert isinstance(nearest(v2024_11_05, handlers), Echo0618)
    assert isinstance(nearest(draft, handlers), Echo2026)
    assert isinstance(nearest(v2026_07_28, [Echo1125()]), Echo1125)


def test_adapted_handlers_implement_only_methods_both_revisions_have() -> None:
    assert adapt(Echo1125(), v2025_11_25).__class__ is Echo1125
    adapted = adapt(Echo1125(), v2024_11_05)
    assert isinstance(adapted, v2024_11_05.ServerHandlers)
    assert implemented_methods(adapted) == {"tools/list", "tools/call"}


def test_unknown_versions_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown protocol version '1999-01-01'"):
        ServerSession([Echo1125()], name="s", version="1", versions=["1999-01-01"])


@pytest.mark.anyio
async def test_what_the_target_does_not_define_is_kept_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    served = ServerSession([Echo0618()], name="s", version="1", versions=["2024-11-05"])
    with caplog.at_level(logging.DEBUG, logger="mcp_specgen_runtime.protocol.adapt"):
        _, result = await call_echo(served, "2024-11-05")
    assert isinstance(result, v2024_11_05.CallToolResult)
    assert extra(result) == {"structuredContent": {"result": "hi"}}
    assert "kept $.structuredContent" in caplog.text


@pytest.mark.anyio
async def test_without_a_debug_log_what_the_target_does_not_define_is_kept_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Read as it is (no walk), but with the same outcome as the walk.
    served = ServerSession([Echo0618()], name="s", version="1", versions=["2024-11-05"])
    with caplog.at_level(logging.INFO, logger="mcp_specgen_runtime.protocol.adapt"):
        _, result = await call_echo(served, "2024-11-05")
    assert isinstance(result, v2024_11_05.CallToolResult)
    assert extra(result) == {"structuredContent": {"result": "hi"}}
    assert "kept" not in caplog.text


class Audio0618(Echo0618):
    """Answers audio besides the text, which 2024-11-05 cannot hold."""

    async def tools_call(
        self, params: v2025_06_18.CallToolRequestParams
    ) -> v2025_06_18.CallToolResult:
        answered = await super().tools_call(params)
        audio = v2025_06_18.AudioContent(data="AA", mime_type="audio/wav")
        return v2025_06_18.CallToolResult(content=[*answered.content, audio])


@pytest.mark.anyio
async def test_a_result_that_does_not_fit_as_it_is_takes_the_walk(
    caplog: pytest.LogCaptureFixture,
) -> None:
    served = ServerSession(
        [Audio0618()], name="s", version="1", versions=["2024-11-05"]
    )
    with caplog.at_level(logging.INFO, logger="mcp_specgen_runtime.protocol.adapt"):
        _, result = await call_echo(served, "2024-11-05")
    assert [type(block) for block in result.content] == [v2024_11_05.TextContent]
    assert "conversion dropped $.content[1]" in caplog.text

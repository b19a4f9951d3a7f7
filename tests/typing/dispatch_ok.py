"""Type-checked, never run: handler and client signatures are the exact types."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Self, assert_type

from mcp_specgen_runtime.client import ClientGroup
from mcp_specgen_runtime.codec.spec import RequestSender
from mcp_specgen_runtime.codec.wire import UnsetType
from mcp_specgen_types import v2025_11_25 as legacy, v2026_07_28 as modern


class Server(legacy.ServerHandlers):
    async def tools_call(
        self, params: legacy.CallToolRequestParams
    ) -> legacy.CallToolResult:
        assert_type(params.name, str)
        return legacy.CallToolResult(content=[legacy.TextContent(text=params.name)])


async def client_calls(sender: RequestSender) -> None:
    client = legacy.Client(sender)
    assert_type(await client.call_tool(name="echo"), legacy.CallToolResult)
    assert_type(await client.list_tools(), legacy.ListToolsResult)
    assert_type(await client.read_resource(uri="file:///a"), legacy.ReadResourceResult)
    assert_type(await client.ping(), legacy.EmptyResult)
    assert_type(await client.notify_initialized(), None)
    modern_client = modern.Client(sender)
    assert_type(
        await modern_client.call_tool(
            name="echo",
            meta=modern.RequestMetaObject(
                client_capabilities=modern.ClientCapabilities(),
                protocol_version="2026-07-28",
            ),
        ),
        modern.CallToolResultResponseResult,
    )
    assert_type(
        await modern_client.call_tool(name="echo"), modern.CallToolResultResponseResult
    )


async def handler_types(
    server: legacy.ServerHandlers, client: legacy.ClientHandlers
) -> None:
    params = legacy.CallToolRequestParams(name="x")
    assert_type(await server.tools_call(params), legacy.CallToolResult)
    assert_type(
        await server.resources_read(legacy.ReadResourceRequestParams(uri="u")),
        legacy.ReadResourceResult,
    )
    sampling = legacy.CreateMessageRequestParams(max_tokens=1, messages=[])
    assert_type(
        await client.sampling_create_message(sampling), legacy.CreateMessageResult
    )
    assert_type(await client.roots_list(legacy.RequestParams()), legacy.ListRootsResult)


def tool_parameters(old: legacy.Tool, new: modern.Tool) -> None:
    """A tool's parameters read the same way in both eras (schema/overrides)."""
    assert_type(old.input_schema.properties, dict[str, dict[str, Any]] | UnsetType)
    assert_type(new.input_schema.properties, dict[str, Any] | UnsetType)
    assert_type(old.input_schema.required, list[str] | UnsetType)
    assert_type(new.input_schema.required, list[str] | UnsetType)
    output = new.output_schema
    if not isinstance(output, UnsetType):
        assert_type(output.properties, dict[str, Any] | UnsetType)
        assert_type(output.required, list[str] | UnsetType)


class ClientLike:
    """The one-server `Client`'s expected signatures (wider parameters, more
    options, `Self` from `__aenter__`) still satisfy `GroupMember`."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def list_tools(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a Client option
    ) -> modern.ListToolsResult:
        raise NotImplementedError

    async def list_all_tools(
        self,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a Client option
    ) -> list[modern.Tool]:
        raise NotImplementedError

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a Client option
        on_progress: Callable[[float], None] | None = None,
    ) -> modern.CallToolResult:
        raise NotImplementedError

    async def list_all_prompts(self) -> list[modern.Prompt]:
        raise NotImplementedError

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a Client option
    ) -> modern.GetPromptResult:
        raise NotImplementedError

    async def list_all_resources(self) -> list[modern.Resource]:
        raise NotImplementedError

    async def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a Client option
    ) -> modern.ReadResourceResult:
        raise NotImplementedError


async def group_calls() -> None:
    async with ClientGroup({"a": ClientLike(), "b": ClientLike()}) as group:
        assert_type(group, ClientGroup)
        assert_type(await group.list_all_tools(), list[modern.Tool])
        assert_type(await group.call_tool("a_echo", {"m": 1}), modern.CallToolResult)
        assert_type(await group.get_prompt("b_p"), modern.GetPromptResult)
        assert_type(
            await group.read_resource("u", server="a"), modern.ReadResourceResult
        )

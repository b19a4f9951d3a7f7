"""Type-checked, never run: handler and client signatures are the exact types."""

from __future__ import annotations

from typing import Any, assert_type

from mcp_codegen_runtime.codec.spec import RequestSender
from mcp_codegen_runtime.codec.wire import UnsetType
from mcp_codegen_types import v2025_11_25 as legacy, v2026_07_28 as modern


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

"""Type-checked, never run: code using `Client` as the README shows it, with
no casts; every result is the newest revision's exact type."""

from __future__ import annotations

from typing import assert_type

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.client import ClientGroup
from mcp_specgen_types import v2025_11_25
from mcp_specgen_types.latest import (
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    GetPromptResult,
    Implementation,
    ListToolsResult,
    LoggingMessageNotificationParams,
    ReadResourceResult,
    ServerCapabilities,
    TextContent,
    Tool,
)


async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
    text = TextContent(text="42")
    return CreateMessageResult(role="assistant", model="m", content=text)


async def on_log(params: LoggingMessageNotificationParams) -> None:
    print(params.level, params.data)


async def on_progress(
    progress: float, total: float | None, message: str | None
) -> None:
    print(progress, total, message)


async def readme_job() -> None:
    async with Client(["python", "server.py"], sampling=sampling) as client:
        tools = await client.list_tools()
        result = await client.call_tool(tools.tools[0].name, {"message": "hi"})
        assert_type(tools, ListToolsResult)
        assert_type(result, CallToolResult)


async def every_call(app: App) -> None:
    async with Client(app, on_log=on_log, roots=["file:///work"]) as client:
        assert_type(client.protocol_version, str)
        assert_type(client.server_capabilities, ServerCapabilities)
        assert_type(client.server_info, Implementation | None)
        assert_type(client.instructions, str | None)
        assert_type(await client.list_all_tools(), list[Tool])
        async for tool in client.iter_tools():
            assert_type(tool, Tool)
        called = await client.call_tool(
            "slow", {"n": 3}, timeout=5, on_progress=on_progress
        )
        assert_type(called, CallToolResult)
        assert_type(await client.read_resource("file:///a"), ReadResourceResult)
        assert_type(await client.get_prompt("review", {"code": "x"}), GetPromptResult)
        await client.set_logging_level("debug")
        await client.ping(timeout=1)
        older = client.view(v2025_11_25.Client)
        assert_type(older, v2025_11_25.Client)
        assert_type(await older.list_tools(), v2025_11_25.ListToolsResult)
    async with Client("https://example.com/mcp", headers={"X-Key": "k"}) as remote:
        assert_type(await remote.list_tools(), ListToolsResult)


async def on_updated(uri: str) -> None:
    print("changed:", uri)


async def subscriptions_and_groups(app: App) -> None:
    async with Client(app, on_resource_updated=on_updated) as client:
        await client.subscribe_resource("file:///a", timeout=5)
        await client.unsubscribe_resource("file:///a")
    servers = ClientGroup(
        {"local": app, "remote": "https://example.com/mcp"},
        client_options={"timeout": 10},
    )
    async with servers as group:
        assert_type(await group.list_all_tools(), list[Tool])
        assert_type(await group.call_tool("local_echo", {"m": 1}), CallToolResult)

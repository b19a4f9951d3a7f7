"""`App` end to end: a client of each era against one app, over memory."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import msgspec
import pytest

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.codec.wire import UNSET
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import v2024_11_05, v2025_11_25, v2026_07_28

LIMIT = 10.0
VERSIONS = ["2024-11-05", "2025-11-25", "2026-07-28"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Weather(msgspec.Struct):
    city: str
    celsius: float


def make_app(**options: Any) -> App:
    app = App("demo", version="1.2.3", instructions="Try echo.", **options)

    @app.tool(title="Echo", annotations={"readOnlyHint": True})
    def echo(message: str) -> str:
        """Return the message unchanged.

        Not part of the description."""
        return message

    @app.tool()
    async def repeat(
        message: str, times: Annotated[int, msgspec.Meta(ge=1, le=3)] = 1
    ) -> str:
        """Repeat a message."""
        return message * times

    @app.tool()
    def weather(city: str) -> Weather:
        """The weather of a city."""
        return Weather(city, 21.5)

    @app.tool()
    def broken() -> str:
        raise RuntimeError("boom")

    @app.tool()
    async def ask_name(ctx: Context) -> str:
        """Ask the user for a name."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Your name?", schema)
        return f"hello {answer.get('content', {}).get('name')}"

    @app.resource("greeting://hello", mime_type="text/plain")
    def hello() -> str:
        """A greeting."""
        return "Hello!"

    @app.resource("users://{user_id}/avatar", mime_type="image/png")
    def avatar(user_id: str) -> bytes:
        return f"png of {user_id}".encode()

    @app.prompt(arguments={"code": "the code to review"})
    def review(code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Review this {language}: {code}"

    return app


class Answers(v2025_11_25.ClientHandlers):
    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        return v2025_11_25.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def client_of(
    app: App, version: str, **options: Any
) -> AsyncGenerator[ClientSession]:
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            ClientSession(
                client_end, name="t", version="1", versions=[version], **options
            ) as client,
        ):
            yield client


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_tools_are_listed_and_called_in_every_era(version: str) -> None:
    async with client_of(make_app(), version) as client:
        assert client.protocol_version == version
        assert client.server_capabilities.keys() >= {"tools", "resources", "prompts"}
        typed = v2025_11_25.Client(client)
        tools = {tool.name: tool for tool in (await typed.list_tools()).tools}
        assert list(tools) == ["echo", "repeat", "weather", "broken", "ask_name"]
        assert tools["echo"].description == "Return the message unchanged."
        schema = msgspec.to_builtins(tools["repeat"].input_schema)
        assert schema["properties"]["times"] == {
            "type": "integer",
            "minimum": 1,
            "maximum": 3,
            "default": 1,
        }
        assert schema["required"] == ["message"]
        echoed = await typed.call_tool(name="echo", arguments={"message": "hi"})
        assert echoed.content[0].text == "hi"  # type: ignore[union-attr]
        assert len(echoed.content) == 1 and echoed.structured_content is UNSET
        repeated = await typed.call_tool(
            name="repeat", arguments={"message": "ab", "times": 2}
        )
        assert repeated.content[0].text == "abab"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_typed_results_carry_structured_content_and_an_output_schema() -> None:
    async with client_of(make_app(), "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        tools = {tool.name: tool for tool in (await typed.list_tools()).tools}
        output = msgspec.to_builtins(tools["weather"].output_schema)
        assert output["properties"] == {
            "city": {"type": "string"},
            "celsius": {"type": "number"},
        }
        result = await typed.call_tool(name="weather", arguments={"city": "Oslo"})
        assert result.structured_content == {"city": "Oslo", "celsius": 21.5}
        assert result.is_error is msgspec.UNSET


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors_and_unknown_tools_protocol_errors() -> (
    None
):
    async with client_of(make_app(), "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        bad = await typed.call_tool(
            name="repeat", arguments={"message": "a", "times": 9}
        )
        assert bad.is_error is True
        assert "times" in bad.content[0].text  # type: ignore[union-attr]
        extra = await typed.call_tool(name="echo", arguments={"message": "a", "x": 1})
        assert extra.is_error is True
        failed = await typed.call_tool(name="broken")
        assert failed.is_error is True
        assert "boom" in failed.content[0].text  # type: ignore[union-attr]
        with pytest.raises(RpcError) as caught:
            await typed.call_tool(name="missing")
        assert caught.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_resources_templates_and_prompts(version: str) -> None:
    async with client_of(make_app(), version) as client:
        typed = v2025_11_25.Client(client)
        listed = await typed.list_resources()
        assert [r.uri for r in listed.resources] == ["greeting://hello"]
        templates = await typed.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == [
            "users://{user_id}/avatar"
        ]
        text = await typed.read_resource(uri="greeting://hello")
        assert text.contents[0].text == "Hello!"  # type: ignore[union-attr]
        blob = await typed.read_resource(uri="users://7/avatar")
        assert blob.contents[0].blob == "cG5nIG9mIDc="  # type: ignore[union-attr]
        with pytest.raises(RpcError) as caught:
            await typed.read_resource(uri="nothing://here")
        # SEP-2164: -32602 from 2026-07-28, -32002 before.
        assert caught.value.code == (-32602 if version == "2026-07-28" else -32002)
        prompts = await typed.list_prompts()
        arguments = msgspec.to_builtins(prompts.prompts[0].arguments)
        assert arguments == [
            {"name": "code", "description": "the code to review", "required": True},
            {"name": "language", "required": False},
        ]
        got = await typed.get_prompt(name="review", arguments={"code": "x=1"})
        assert got.messages[0].content.text == "Review this python: x=1"  # type: ignore[union-attr]
        with pytest.raises(RpcError, match="missing required arguments"):
            await typed.get_prompt(name="review", arguments={})


@pytest.mark.anyio
async def test_pages_follow_signed_cursors_and_forged_ones_are_refused() -> None:
    async with client_of(make_app(page_size=2), "2026-07-28") as client:
        typed = v2026_07_28.Client(client)
        names: list[str] = []
        cursor: Any = msgspec.UNSET
        while True:
            page = await typed.list_tools(cursor=cursor)
            names += [tool.name for tool in page.tools]
            if page.next_cursor is msgspec.UNSET:
                break
            cursor = page.next_cursor
        assert names == ["echo", "repeat", "weather", "broken", "ask_name"]
        with pytest.raises(RpcError, match="Invalid cursor") as caught:
            await typed.list_tools(cursor=cursor[:-2] + "AA")
        assert caught.value.code == ErrorCode.INVALID_PARAMS
        with pytest.raises(RpcError, match="Invalid cursor"):
            await typed.list_prompts(cursor=cursor)  # another list's cursor


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_tool_asks_the_user_in_either_era(version: str) -> None:
    async with client_of(make_app(), version, handlers=[Answers()]) as client:
        result = await v2025_11_25.Client(client).call_tool(name="ask_name")
        assert result.content[0].text == "hello Ada"  # type: ignore[union-attr]


def test_registration_errors() -> None:
    app = App("x")
    with pytest.raises(ValueError, match="invalid tool name"):
        app.tool("has space")(lambda: "")
    app.tool("same")(lambda: "")
    with pytest.raises(ValueError, match="already registered"):
        app.tool("same")(lambda: "")
    with pytest.raises(ValueError, match="no parameter"):

        @app.resource("a://{x}")
        def nothing() -> str:
            return ""


@pytest.mark.anyio
async def test_only_what_is_registered_is_advertised() -> None:
    app = App("tools-only")
    app.tool("t")(lambda: "ok")
    async with client_of(app, "2025-11-25") as client:
        assert client.server_capabilities == {
            "logging": {},
            "tools": {"listChanged": True},
        }
    async with client_of(app, "2024-11-05") as client:
        assert isinstance(
            await v2024_11_05.Client(client).list_tools(), v2024_11_05.ListToolsResult
        )


@pytest.mark.anyio
async def test_the_asgi_app_checks_x_mcp_header_params() -> None:
    import httpx

    app = App("headers")

    @app.tool(headers={"region": "Region"})
    def forecast(region: str) -> str:
        return f"sunny in {region}"

    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "forecast", "arguments": {"region": "eu"}, "_meta": meta},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "forecast",
    }
    transport = httpx.ASGITransport(app.asgi())
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000"
    ) as client:
        missing = await client.post("/mcp", json=body, headers=headers)
        assert missing.status_code == 400
        assert missing.json()["error"]["code"] == -32020
        ok = await client.post(
            "/mcp", json=body, headers={**headers, "mcp-param-region": "eu"}
        )
        assert ok.json()["result"]["content"][0]["text"] == "sunny in eu"

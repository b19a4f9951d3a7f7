"""`App` extras: keyed and batched questions to the client, handler state in
`requestState`, required client capabilities, completions, subscriptions,
hand-written input schemas and prompts that take a `Context`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import msgspec
import pytest

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.app.context import elicit_params, sample_params
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_types import v2025_11_25

from .test_application import Answers, client_of

MODERN = "2026-07-28"
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}
ACCEPT = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Hi"},
    "model": "m",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app() -> App:
    app = App("extras", subscriptions=True)

    @app.tool()
    async def greet(ctx: Context) -> str:
        first = await ctx.elicit("Name?", NAME, key="user_name")
        ctx.state = {"asked": 1}
        second = await ctx.elicit("Again?", NAME, key="again")
        return f"{first['content']['name']}/{second['content']['name']}/{ctx.state}"

    @app.tool()
    async def many(ctx: Context) -> str:
        answers = await ctx.ask_many(
            {
                "name": ("elicitation/create", elicit_params("Name?", NAME)),
                "hello": (
                    "sampling/createMessage",
                    sample_params(
                        [{"role": "user", "content": {"type": "text", "text": "x"}}], 5
                    ),
                ),
            }
        )
        name = answers["name"]["content"]["name"]
        return f"{name} {answers['hello']['content']['text']}"

    @app.tool()
    def needs_sampling(ctx: Context) -> str:
        ctx.require_capabilities("sampling")
        return f"ok {sorted(ctx.client_capabilities)}"

    @app.tool(input_schema={"type": "object", "additionalProperties": False})
    def raw(name: str | None = None) -> str:
        return f"raw {name}"

    @app.resource("test://thing")
    def thing() -> str:
        return "thing"

    @app.resource("test://item/{id}")
    def item(id: str) -> str:
        return id

    @app.prompt()
    async def asks(ctx: Context) -> str:
        """A prompt that asks."""
        answer = await ctx.elicit("Context?", NAME, key="user_context")
        return f"about {answer['content']['name']}"

    @app.prompt()
    def plain(arg1: str) -> str:
        """A prompt."""
        return arg1

    @app.completion()
    def complete(
        ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> list[str]:
        return [f"{argument['value']}{n}" for n in range(150)]

    return app


def envelope(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


@asynccontextmanager
async def http(app: App) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app.asgi())
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000"
    ) as client:
        yield client


async def call(
    client: httpx.AsyncClient,
    method: str,
    params: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> httpx.Response:
    caps = {"elicitation": {}, "sampling": {}} if capabilities is None else capabilities
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        "params": {**params, "_meta": envelope(caps)},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        "mcp-name": params["name"],
    }
    return await client.post("/mcp", json=body, headers=headers)


@pytest.mark.anyio
async def test_keyed_questions_take_one_round_each_and_keep_handler_state() -> None:
    async with http(make_app()) as client:
        first = (await call(client, "tools/call", {"name": "greet"})).json()["result"]
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["user_name"]
        retry = {
            "name": "greet",
            "inputResponses": {"user_name": ACCEPT},
            "requestState": first["requestState"],
        }
        second = (await call(client, "tools/call", retry)).json()["result"]
        assert list(second["inputRequests"]) == ["again"]
        assert second["requestState"] != first["requestState"]
        last = {
            "name": "greet",
            "inputResponses": {"again": ACCEPT, "extra": ACCEPT},
            "requestState": second["requestState"],
        }
        done = (await call(client, "tools/call", last)).json()["result"]
        assert done["content"][0]["text"] == "Ada/Ada/{'asked': 1}"


@pytest.mark.anyio
async def test_ask_many_asks_every_question_in_one_round() -> None:
    async with http(make_app()) as client:
        first = (await call(client, "tools/call", {"name": "many"})).json()["result"]
        requests = first["inputRequests"]
        assert {k: v["method"] for k, v in requests.items()} == {
            "name": "elicitation/create",
            "hello": "sampling/createMessage",
        }
        assert requests["hello"]["params"]["maxTokens"] == 5
        retry = {
            "name": "many",
            "inputResponses": {"name": ACCEPT, "hello": SAMPLED},
            "requestState": first["requestState"],
        }
        done = (await call(client, "tools/call", retry)).json()["result"]
        assert done["content"][0]["text"] == "Ada Hi"
        partial = {**retry, "inputResponses": {"name": ACCEPT}}
        refused = await call(client, "tools/call", partial)
        assert refused.json()["error"]["code"] == -32602


@pytest.mark.anyio
async def test_a_tampered_state_and_a_misfit_answer_are_invalid_params() -> None:
    async with http(make_app()) as client:
        first = (await call(client, "tools/call", {"name": "greet"})).json()["result"]
        tampered = {
            "name": "greet",
            "inputResponses": {"user_name": ACCEPT},
            "requestState": first["requestState"] + "-TAMPERED",
        }
        bad = await call(client, "tools/call", tampered)
        assert bad.json()["error"]["code"] == -32602, bad.text
        misfit = {**tampered, "requestState": first["requestState"]}
        misfit["inputResponses"] = {"user_name": 12345}
        response = await call(client, "tools/call", misfit)
        assert response.json()["error"]["code"] == -32602


@pytest.mark.anyio
async def test_a_missing_client_capability_is_32021_with_http_400() -> None:
    async with http(make_app()) as client:
        refused = await call(client, "tools/call", {"name": "needs_sampling"}, {})
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
        ok = await call(
            client, "tools/call", {"name": "needs_sampling"}, {"sampling": {}}
        )
        assert ok.json()["result"]["content"][0]["text"] == "ok ['sampling']"


@pytest.mark.anyio
async def test_a_prompt_may_ask_the_client_too() -> None:
    async with http(make_app()) as client:
        first = (await call(client, "prompts/get", {"name": "asks"})).json()["result"]
        assert list(first["inputRequests"]) == ["user_context"]
        retry = {
            "name": "asks",
            "inputResponses": {"user_context": ACCEPT},
            "requestState": first["requestState"],
        }
        done = (await call(client, "prompts/get", retry)).json()["result"]
        assert done["messages"][0]["content"]["text"] == "about Ada"


@pytest.mark.anyio
async def test_ask_many_in_the_legacy_era_sends_each_request() -> None:
    class Both(Answers):
        async def sampling_create_message(
            self, params: v2025_11_25.CreateMessageRequestParams
        ) -> v2025_11_25.CreateMessageResult:
            return msgspec.convert(SAMPLED, v2025_11_25.CreateMessageResult)

    async with client_of(make_app(), "2025-11-25", handlers=[Both()]) as client:
        typed = v2025_11_25.Client(client)
        result = await typed.call_tool(name="many")
        assert result.content[0].text == "Ada Hi"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_completions_subscriptions_and_a_hand_written_schema() -> None:
    async with client_of(make_app(), "2025-11-25") as client:
        assert client.server_capabilities["completions"] == {}
        assert client.server_capabilities["resources"] == {
            "subscribe": True,
            "listChanged": True,
        }
        typed = v2025_11_25.Client(client)
        completed = await typed.complete(
            ref=v2025_11_25.PromptReference(name="plain"),
            argument=v2025_11_25.CompleteRequestParamsArgument(name="arg1", value="a"),
        )
        assert completed.completion.values[:2] == ["a0", "a1"]
        assert len(completed.completion.values) == 100
        assert completed.completion.total == 150
        assert completed.completion.has_more is True
        with pytest.raises(RpcError) as unknown:
            await typed.complete(
                ref=v2025_11_25.PromptReference(name="nope"),
                argument=v2025_11_25.CompleteRequestParamsArgument(name="a", value=""),
            )
        assert unknown.value.code == -32602
        await typed.subscribe(uri="test://thing")
        await typed.subscribe(uri="test://item/3")
        await typed.unsubscribe(uri="test://thing")
        with pytest.raises(RpcError) as missing:
            await typed.subscribe(uri="test://nothing")
        assert missing.value.code == -32602
        called = await typed.call_tool(name="raw", arguments={"name": "x"})
        assert called.content[0].text == "raw x"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_hand_written_input_schema_is_listed_as_is() -> None:
    async with http(make_app()) as client:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": envelope({})},
        }
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/list",
        }
        listed = (await client.post("/mcp", json=body, headers=headers)).json()
        tools = {t["name"]: t for t in listed["result"]["tools"]}
        assert tools["raw"]["inputSchema"] == {
            "type": "object",
            "additionalProperties": False,
        }


def test_without_a_completer_or_subscriptions_nothing_is_advertised() -> None:
    from mcp_specgen_runtime.app.handlers import handlers_for

    app = App("plain")
    app.prompt()(lambda: "x")
    app.resource("a://b")(lambda: "b")
    methods = {name for handlers in handlers_for(app) for name in vars(type(handlers))}
    assert "completion_complete" not in methods
    assert "resources_subscribe" not in methods

"""App middleware: the chain around every message, in both eras and every
revision (a `Client` over memory; raw JSON-RPC for hostile cases)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import msgspec
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.middleware import Call, CallNext, MiddlewareChain, Result
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import v2025_11_25, v2026_07_28

VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app(**options: Any) -> App:
    app = App("demo", version="1.0", **options)

    @app.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    @app.resource("greeting://hello", mime_type="text/plain")
    def hello() -> str:
        return "Hello!"

    return app


def era_of(version: str) -> str:
    return "modern" if version >= "2026" else "legacy"


class Recorder:
    """Middleware noting each call it sees."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.results: list[Any] = []

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        self.calls.append(call)
        result = await call_next(call)
        self.results.append(result)
        return result


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_every_request_and_notification_passes_through(version: str) -> None:
    seen = Recorder()
    app = make_app(middleware=[seen])
    async with Client(app, versions=[version]) as client:
        await client.list_tools()
        result = await client.call_tool("echo", {"message": "hi"})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    methods = [call.method for call in seen.calls]
    assert methods[-2:] == ["tools/list", "tools/call"]
    if era_of(version) == "legacy":
        assert methods[:2] == ["initialize", "notifications/initialized"]
        assert seen.calls[1].notification and seen.results[1] is None
    else:
        assert methods[0] == "server/discover"
    call = seen.calls[-1]
    assert call.era == era_of(version)
    assert call.protocol_version == version
    assert call.request_id is not None and not call.notification
    assert call.ctx is not None and call.principal is None
    assert call.session_id is None  # memory: no transport session
    assert isinstance(seen.results[-1], Result)
    assert seen.results[-1].json()["content"][0]["text"] == "hi"


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_params_are_typed_in_the_handlers_revision(version: str) -> None:
    seen = Recorder()
    app = make_app()
    app.add_middleware(seen, methods=["tools/call"])
    async with Client(app, versions=[version]) as client:
        await client.call_tool("echo", {"message": "hi"})
    [call] = seen.calls
    module = v2026_07_28 if era_of(version) == "modern" else v2025_11_25
    assert isinstance(call.params, module.CallToolRequestParams)
    assert call.params.name == "echo"
    assert call.params.arguments == {"message": "hi"}


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
async def test_a_middleware_changes_params_and_results(version: str) -> None:
    app = make_app()

    @app.on("tools/call")
    async def shout(call: Call, call_next: CallNext) -> Any:
        params = call.params
        arguments = {"message": params.arguments["message"].upper()}
        result = await call_next(
            call.replace(params=msgspec.structs.replace(params, arguments=arguments))
        )
        body = result.json()
        body["content"][0]["text"] += "!"
        return body

    async with Client(app, versions=[version]) as client:
        result = await client.call_tool("echo", {"message": "hi"})
        listed = await client.list_tools()  # not a tools/call: untouched
    assert result.content[0].text == "HI!"  # type: ignore[union-attr]
    assert [tool.name for tool in listed.tools] == ["echo"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
async def test_a_middleware_answers_without_the_handler(version: str) -> None:
    app = make_app()
    called: list[str] = []

    @app.tool()
    def secret() -> str:
        called.append("secret")
        return "never"

    @app.on("tools/call")
    async def canned(call: Call, call_next: CallNext) -> Any:
        if call.params.name == "secret":
            return {"content": [{"type": "text", "text": "canned"}]}
        return await call_next(call)

    async with Client(app, versions=[version]) as client:
        result = await client.call_tool("secret", {})
        echoed = await client.call_tool("echo", {"message": "real"})
    assert result.content[0].text == "canned"  # type: ignore[union-attr]
    assert echoed.content[0].text == "real"  # type: ignore[union-attr]
    assert called == []


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_middleware_refuses_with_a_json_rpc_error(version: str) -> None:
    app = make_app()

    @app.on("resources/read")
    async def forbid(call: Call, call_next: CallNext) -> Any:
        raise RpcError(-32001, "Reading is closed today", {"reopens": "monday"})

    async with Client(app, versions=[version]) as client:
        with pytest.raises(RpcError) as caught:
            await client.read_resource("greeting://hello")
        assert (await client.call_tool("echo", {"message": "x"})).content
    assert caught.value.code == -32001
    assert caught.value.message == "Reading is closed today"
    assert caught.value.data == {"reopens": "monday"}


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_failing_middleware_is_internal_error_and_serving_goes_on(
    version: str,
) -> None:
    app = make_app()
    failures = iter([True, False])

    async def flaky(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call" and next(failures):
            raise KeyError("oops")
        return await call_next(call)

    app.add_middleware(flaky)
    async with Client(app, versions=[version]) as client:
        with pytest.raises(RpcError) as caught:
            await client.call_tool("echo", {"message": "x"})
        again = await client.call_tool("echo", {"message": "again"})
    assert caught.value.code == ErrorCode.INTERNAL_ERROR
    assert "middleware" in caught.value.message
    assert "flaky" in caught.value.message and "KeyError" in caught.value.message
    assert again.content[0].text == "again"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_an_error_from_inside_passes_through_an_outer_middleware() -> None:
    app = make_app()
    seen: list[BaseException] = []

    async def outer(call: Call, call_next: CallNext) -> Any:
        try:
            return await call_next(call)
        except Exception as exc:
            seen.append(exc)
            raise

    app.add_middleware(outer)
    async with Client(app, versions=["2025-11-25"]) as client:
        with pytest.raises(RpcError) as caught:
            await client.call_tool("missing", {})
    assert caught.value.code == ErrorCode.INVALID_PARAMS
    assert "Unknown tool" in caught.value.message
    assert seen and isinstance(seen[0], RpcError)


@pytest.mark.anyio
async def test_the_first_middleware_is_the_outermost() -> None:
    order: list[str] = []

    def named(name: str) -> Any:
        async def middleware(call: Call, call_next: CallNext) -> Any:
            order.append(f"{name} in")
            result = await call_next(call)
            order.append(f"{name} out")
            return result

        return middleware

    app = make_app(middleware=[named("a")])
    app.add_middleware(named("b"))
    app.on("tools/list")(named("c"))
    async with Client(app, versions=["2026-07-28"]) as client:
        order.clear()
        await client.list_tools()
    assert order == ["a in", "b in", "c in", "c out", "b out", "a out"]


async def raw_session(app: App) -> Any:
    """A connection speaking raw JSON-RPC to `app`'s session, initialized."""
    client_side, server_side = memory_pair()
    session = app.session()
    return client_side, Connection(server_side, session.handler())


@pytest.mark.anyio
async def test_bad_params_seen_by_a_middleware_are_invalid_params() -> None:
    app = make_app()

    @app.on("tools/call")
    async def peek(call: Call, call_next: CallNext) -> Any:
        assert call.params is not None  # decoding refuses them
        return await call_next(call)

    client_side, server = await raw_session(app)
    async with server, Connection(client_side, None) as client:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        }
        with pytest.raises(RpcError) as caught:
            await client.request(
                "tools/call", {"name": 3, "_meta": meta}, msgspec.Raw, timeout=5
            )
        again = await client.request(
            "tools/call",
            {"name": "echo", "arguments": {"message": "ok"}, "_meta": meta},
            dict[str, Any],
            timeout=5,
        )
    assert caught.value.code == ErrorCode.INVALID_PARAMS
    assert again["content"][0]["text"] == "ok"


def test_the_chain_refuses_what_is_not_middleware() -> None:
    chain = MiddlewareChain()
    assert not chain
    with pytest.raises(TypeError):
        chain.add("nope")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        chain.add(Recorder(), methods="tools/call")
    chain.add(Recorder())
    assert chain and len(chain) == 1


def body_of(response: httpx.Response) -> Any:
    """A JSON-RPC response, from a JSON or an SSE body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])
    return response.json()


@pytest.mark.anyio
async def test_over_http_a_legacy_call_knows_its_session_a_2026_one_has_none() -> None:
    seen = Recorder()
    app = make_app(middleware=[seen])
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }
    transport = httpx.ASGITransport(app.asgi())
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000"
    ) as http:
        opened = await http.post(
            "/mcp",
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": initialize,
            },
        )
        session_id = opened.headers["mcp-session-id"]
        legacy = {
            **headers,
            "mcp-session-id": session_id,
            "mcp-protocol-version": "2025-11-25",
        }
        call = {"name": "echo", "arguments": {"message": "hi"}}
        answered = await http.post(
            "/mcp",
            headers=legacy,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        )
        modern = await http.post(
            "/mcp",
            headers={
                **headers,
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "echo",
            },
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {**call, "_meta": meta},
            },
        )
    assert body_of(answered)["result"]["content"][0]["text"] == "hi"
    assert body_of(modern)["result"]["content"][0]["text"] == "hi"
    by_id = {call.request_id: call for call in seen.calls}
    assert by_id[1].session_id == session_id and by_id[1].era == "legacy"
    assert by_id[2].session_id == session_id
    assert by_id[2].caller == "session:" + session_id
    assert by_id[3].session_id is None and by_id[3].era == "modern"
    assert by_id[3].caller == "address:127.0.0.1"


@pytest.mark.anyio
async def test_an_answer_that_cannot_be_sent_is_internal_error() -> None:
    app = make_app()

    @app.on("tools/call")
    async def odd(call: Call, call_next: CallNext) -> Any:
        return {"content": [object()]}

    async with Client(app, versions=["2025-11-25"]) as client:
        with pytest.raises(RpcError) as caught:
            await client.call_tool("echo", {"message": "x"})
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
    assert caught.value.code == ErrorCode.INTERNAL_ERROR
    assert "cannot be sent" in caught.value.message


@pytest.mark.anyio
async def test_without_middleware_for_a_method_no_call_is_even_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    original = Call.__init__

    def counting(self: Call, connection: Any, method: str, raw: Any) -> None:
        built.append(method)
        original(self, connection, method, raw)

    monkeypatch.setattr(Call, "__init__", counting)
    bare = make_app()
    async with Client(bare, versions=["2026-07-28"]) as client:
        await client.call_tool("echo", {"message": "x"})
    assert built == []
    scoped = make_app()
    scoped.add_middleware(Recorder(), methods=["prompts/get"])
    async with Client(scoped, versions=["2025-11-25"]) as client:
        await client.call_tool("echo", {"message": "x"})
    assert built == []


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_notification_nobody_serves_passes_through_as_none(
    version: str,
) -> None:
    # The engine drops a notification no handler serves (it handles a
    # cancellation itself); the chain must not make it a -32601 error.
    outcomes: list[tuple[str, object]] = []

    async def noting(call: Call, call_next: CallNext) -> Any:
        try:
            result = await call_next(call)
        except RpcError as error:
            outcomes.append((call.method, error.code))
            raise
        outcomes.append((call.method, result))
        return result

    app = make_app(middleware=[noting])
    async with Client(app, versions=[version]) as client:
        await client.session.connection.notify("notifications/unheard", {})
        await client.call_tool("echo", {"message": "after"})
    assert ("notifications/unheard", None) in outcomes


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("answer", [42, {"content": 5}])
async def test_an_answer_not_of_the_methods_result_type_is_internal_error(
    version: str, answer: Any
) -> None:
    # Whatever the client's revision: before, one the handlers are written
    # for (2025-11-25) was sent 42 as a tools/call result.
    app = make_app()

    @app.on("tools/call")
    async def odd(call: Call, call_next: CallNext) -> Any:
        return answer

    async with Client(app, versions=[version]) as client:
        with pytest.raises(RpcError) as caught:
            await client.call_tool("echo", {"message": "x"})
    assert caught.value.code == ErrorCode.INTERNAL_ERROR
    assert "cannot be sent" in caught.value.message

"""The dispatcher contract and the generated stubs, driven through a revision."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_specgen_runtime.codec.wire import UNSET, decode, encode
from mcp_specgen_runtime.errors import (
    ErrorCode,
    InvalidParamsError,
    MethodNotFoundError,
)
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher, implemented_methods
from mcp_specgen_types import v2025_11_25 as rev, v2026_07_28 as modern


class EchoServer(rev.ServerHandlers):
    def __init__(self) -> None:
        self.cancelled: list[Any] = []

    async def tools_call(self, params: rev.CallToolRequestParams) -> rev.CallToolResult:
        text = str((params.arguments or {}).get("message", ""))
        return rev.CallToolResult(content=[rev.TextContent(text=text)])

    async def tools_list(
        self, params: rev.PaginatedRequestParams
    ) -> rev.ListToolsResult:
        assert params.cursor is UNSET
        return rev.ListToolsResult(tools=[])

    async def notifications_cancelled(
        self, params: rev.CancelledNotificationParams
    ) -> None:
        self.cancelled.append(params.request_id)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_only_overridden_methods_are_served() -> None:
    assert implemented_methods(EchoServer()) == {
        "tools/call",
        "tools/list",
        "notifications/cancelled",
    }


def test_dispatch_decodes_calls_and_encodes() -> None:
    dispatcher = Dispatcher(EchoServer())
    result = run(
        dispatcher.dispatch(
            "tools/call", b'{"name":"echo","arguments":{"message":"hi"}}'
        )
    )
    assert json.loads(result) == {"content": [{"type": "text", "text": "hi"}]}


def test_absent_optional_params_become_an_empty_params_object() -> None:
    result = run(Dispatcher(EchoServer()).dispatch("tools/list", None))
    assert json.loads(result) == {"tools": []}


def test_notifications_return_nothing() -> None:
    server = EchoServer()
    assert (
        run(Dispatcher(server).dispatch("notifications/cancelled", b'{"requestId":3}'))
        is None
    )
    assert server.cancelled == [3]


@pytest.mark.parametrize(
    "method", ["no/such", "prompts/list", "sampling/createMessage"]
)
def test_unknown_or_unimplemented_methods_are_32601(method: str) -> None:
    with pytest.raises(MethodNotFoundError) as caught:
        run(Dispatcher(EchoServer()).dispatch(method, b"{}"))
    assert caught.value.code == ErrorCode.METHOD_NOT_FOUND == -32601
    assert method in caught.value.message


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        (b'{"name": 5}', "Expected `str`, got `int` - at `$.name`"),
        (b"{}", "Object missing required field `name`"),
        (b"[]", "Expected `object`, got `array`"),
        (b"{", "Input data was truncated"),
        (None, "params are required"),
    ],
)
def test_params_that_do_not_fit_are_32602_with_the_reason(
    params: bytes | None, reason: str
) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        run(Dispatcher(EchoServer()).dispatch("tools/call", params))
    assert caught.value.code == -32602
    assert reason in caught.value.message
    assert "tools/call" in caught.value.message


class RecordingSender:
    """A fake session: records what the client stub sends, answers with canned JSON."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []

    async def request(self, method: str, params: Any, result_type: Any) -> Any:
        self.sent.append(
            (method, json.loads(encode(params)) if params is not None else None)
        )
        return decode(self.answer, result_type)

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append(
            (method, json.loads(encode(params)) if params is not None else None)
        )


def test_client_accepts_keywords_or_the_params_struct() -> None:
    sender = RecordingSender(b'{"content":[{"type":"text","text":"ok"}]}')
    client = rev.Client(sender)
    by_keywords = run(client.call_tool(name="echo", arguments={"message": "hi"}))
    by_struct = run(client.call_tool(rev.CallToolRequestParams(name="echo")))
    assert isinstance(by_keywords, rev.CallToolResult)
    assert by_struct == by_keywords
    assert sender.sent == [
        ("tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
        ("tools/call", {"name": "echo"}),
    ]


def test_client_notifications_and_parameterless_calls() -> None:
    sender = RecordingSender(b"{}")
    client = rev.Client(sender)
    run(client.notify_cancelled(request_id=1, reason="user"))
    run(client.ping())
    assert sender.sent == [
        ("notifications/cancelled", {"requestId": 1, "reason": "user"}),
        ("ping", {}),
    ]


def test_client_method_names_are_derived_mechanically() -> None:
    names = {name for name in vars(rev.Client) if not name.startswith("_")}
    assert {
        "call_tool",
        "list_tools",
        "read_resource",
        "get_prompt",
        "complete",
        "initialize",
        "ping",
        "set_level",
        "subscribe",
        "notify_initialized",
    } <= names


def test_modern_client_fills_the_request_envelope_when_no_meta_is_given() -> None:
    sender = RecordingSender(b'{"content":[]}')
    run(modern.Client(sender).call_tool(name="echo"))
    sender.answer = b'{"tools":[],"cacheScope":"public","ttlMs":0}'
    run(modern.Client(sender).list_tools(meta=modern.dispatch.request_meta()))
    envelope = {
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    }
    assert sender.sent == [
        ("tools/call", {"_meta": envelope, "name": "echo"}),
        ("tools/list", {"_meta": envelope}),
    ]

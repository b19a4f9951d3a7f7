"""`serving`: one request or notification served by a handler, without a
connection: what the reply is for each outcome, and `current_request()`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_specgen_runtime.errors import MethodNotFoundError, RpcError
from mcp_specgen_runtime.jsonrpc.serving import (
    Handler,
    RequestContext,
    current_request,
    request_in_progress,
    serve_notification,
    serve_request,
)


class Notes:
    """A peer that keeps the notifications sent to it."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))

    async def request(
        self,
        method: str,
        params: Any,
        result_type: Any,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - mirrors Peer
    ) -> Any:
        raise AssertionError("no request expected")


def context(method: str = "work", token: Any = None) -> RequestContext:
    return RequestContext(Notes(), 7, method, token)


async def reply(handler: Handler | None, method: str = "work") -> Any:
    return json.loads(await serve_request(handler, context(method), b"{}"))


def raising(exc: BaseException) -> Handler:
    async def handler(method: str, params: bytes | None) -> bytes | None:
        raise exc

    return handler


@pytest.mark.anyio
async def test_the_result_or_empty_object_is_the_reply() -> None:
    async def handler(method: str, params: bytes | None) -> bytes | None:
        assert current_request().method == method
        return b'{"ok":true}' if method == "work" else None

    assert await reply(handler) == {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}
    assert (await reply(handler, "other"))["result"] == {}
    assert request_in_progress() is None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("handler", "method", "expected"),
    [
        (None, "ping", {"result": {}}),
        (raising(MethodNotFoundError("ping")), "ping", {"result": {}}),
        (None, "work", {"code": -32601}),
        (raising(RpcError(-5, "no", {"x": 1})), "work", {"code": -5}),
        (raising(ValueError("bug")), "work", {"code": -32603}),
        (raising(SystemExit(3)), "work", {"code": -32603}),
    ],
)
async def test_each_outcome_has_its_reply(
    handler: Handler | None, method: str, expected: dict[str, Any]
) -> None:
    found = await reply(handler, method)
    assert found["id"] == 7
    if "result" in expected:
        assert found["result"] == expected["result"]
    else:
        assert found["error"]["code"] == expected["code"]


@pytest.mark.anyio
async def test_notifications_are_answered_with_nothing() -> None:
    for handler in (None, raising(RpcError(-5, "no")), raising(ValueError("bug"))):
        await serve_notification(handler, "notifications/x", None)


@pytest.mark.anyio
async def test_progress_goes_to_the_peer_with_the_token() -> None:
    served = context(token="tok")
    await served.report_progress(1, 2, "half")
    peer = served.connection
    assert isinstance(peer, Notes)
    assert peer.sent == [
        (
            "notifications/progress",
            {"progressToken": "tok", "progress": 1, "total": 2, "message": "half"},
        )
    ]


def test_current_request_outside_a_handler_raises() -> None:
    with pytest.raises(RuntimeError, match="not inside"):
        current_request()


def test_the_progress_token_is_read_from_params_when_first_asked() -> None:
    asked = context()
    asked.token_from(b'{"_meta":{"progressToken":"t-1"},"x":[1]}')
    assert asked.progress_token == "t-1"
    for params in (None, b"{}", b'{"_meta":{"progressToken":1.5}}', b"[1"):
        unread = context()
        unread.token_from(params)
        assert unread.progress_token is None


def test_a_token_set_by_a_layer_that_read_the_params_wins() -> None:
    told = context()
    told.token_from(b'{"_meta":{"progressToken":"from-params"}}')
    told.progress_token = 9
    assert told.progress_token == 9
    assert told.derive().progress_token == 9

"""JSON-RPC envelopes: bad input gets the spec's error and serving goes on; batches."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.errors import (
    ErrorCode,
    MessageTooLargeError,
    RpcError,
)
from mcp_specgen_runtime.jsonrpc.connection import (
    Connection,
)
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher
from mcp_specgen_runtime.transports import memory_pair
from tests.unit.runtime.jsonrpc.support import (
    LIMIT,
    EchoServer,
    Peer,
    connected,
    echo,
    notification,
    request,
    routes,
    serving,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- bad input ------------------------------------------------------------------


@pytest.mark.anyio
async def test_not_json_is_a_parse_error_with_null_id_and_serving_goes_on() -> None:
    async with serving(routes()) as (_, peer):
        for garbage in (b'{"jsonrpc": "2.0", "id": 1', b"\xff", b""):
            reply = await peer.call(garbage)
            assert reply["id"] is None
            assert reply["error"]["code"] == ErrorCode.PARSE_ERROR == -32700
            assert reply["error"]["message"].startswith("Parse error")
        await peer.assert_alive()


@pytest.mark.parametrize(
    ("message", "reply_id", "reason"),
    [
        ({"id": 1, "method": "ping"}, 1, '"jsonrpc" must be exactly "2.0"'),
        ({"jsonrpc": "1.0", "id": 2, "method": "ping"}, 2, '"jsonrpc"'),
        ({"jsonrpc": 2.0, "id": 3, "method": "ping"}, 3, '"jsonrpc"'),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, "not null"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, "string or an int"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, "string or an int"),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, "string or an int"),
        ({"jsonrpc": "2.0", "id": 4, "method": 5}, 4, "`$.method`"),
        ({"jsonrpc": "2.0", "id": "a"}, "a", '"method" is missing'),
        ({"jsonrpc": "2.0"}, None, '"method" is missing'),
        ({"jsonrpc": "2.0", "id": 5, "method": "x", "params": 1}, 5, "params must"),
        ({"jsonrpc": "2.0", "id": 6, "method": "x", "params": None}, 6, "params"),
        ({"jsonrpc": "2.0", "id": 7, "method": "x", "result": {}}, 7, "cannot carry"),
        (
            {"jsonrpc": "2.0", "id": 8, "result": {}, "error": {"code": 1}},
            None,  # the id names one of our requests, not one of the peer's
            "",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 9,
                "result": {},
                "error": {"code": 1, "message": ""},
            },
            None,
            "both result and error",
        ),
        ({"jsonrpc": "2.0", "result": {}}, None, 'needs an "id"'),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, None, "cannot be null"),
        (5, None, "Expected `object | array`"),
        ("text", None, "Expected `object | array`"),
        (None, None, "Expected `object | array`"),
    ],
)
@pytest.mark.anyio
async def test_invalid_requests_are_32600_saying_what_is_wrong(
    message: Any, reply_id: Any, reason: str
) -> None:
    async with serving(routes()) as (_, peer):
        reply = await peer.call(message)
        assert reply["jsonrpc"] == "2.0"
        assert reply["id"] == reply_id
        assert reply["error"]["code"] == ErrorCode.INVALID_REQUEST == -32600
        assert reply["error"]["message"].startswith("Invalid Request")
        assert reason in reply["error"]["message"]
        await peer.assert_alive()


@pytest.mark.anyio
async def test_unknown_methods_are_32601_from_a_dispatcher() -> None:
    async with serving(Dispatcher(EchoServer()).dispatch) as (_, peer):
        reply = await peer.call(request(1, "prompts/list", {}))
        assert reply == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32601, "message": "Method not found: prompts/list"},
        }


@pytest.mark.anyio
async def test_params_that_do_not_fit_are_32602_with_the_reason() -> None:
    async with serving(Dispatcher(EchoServer()).dispatch) as (_, peer):
        reply = await peer.call(request("r", "tools/call", {"name": 5}))
        assert reply["id"] == "r"
        assert reply["error"]["code"] == ErrorCode.INVALID_PARAMS == -32602
        assert "Expected `str`, got `int` - at `$.name`" in reply["error"]["message"]
        reply = await peer.call(request(2, "tools/call", {"name": "echo"}))
        assert reply["result"] == {"content": [{"type": "text", "text": ""}]}


@pytest.mark.anyio
async def test_a_crashing_handler_is_32603_without_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def crash(params: bytes | None) -> bytes:
        raise ValueError("secret detail")

    async with serving(routes(crash=crash, echo=echo)) as (_, peer):
        await peer.send(request(1, "crash"))
        raw = await peer.transport.receive()
        assert json.loads(raw) == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32603, "message": "Internal error"},
        }
        assert b"secret" not in raw and b"Traceback" not in raw
        assert (await peer.call(request(2, "echo", {"a": 1})))["result"] == {"a": 1}
    assert "secret detail" in caplog.text  # logged, not sent


@pytest.mark.anyio
async def test_rpc_errors_travel_with_code_message_and_data() -> None:
    async def refuse(params: bytes | None) -> bytes:
        raise RpcError(-32000, "no such tool", {"tool": "x"})

    async with connected(routes(refuse=refuse)) as (_, client):
        with pytest.raises(RpcError) as caught:
            await client.request("refuse", {}, dict)
        assert (caught.value.code, caught.value.message) == (-32000, "no such tool")
        assert caught.value.data == {"tool": "x"}
        with pytest.raises(RpcError) as caught:
            await client.request("nothing", None, dict)
        assert caught.value.code == -32601 and caught.value.data is None


@pytest.mark.anyio
async def test_error_data_that_is_not_json_is_left_out() -> None:
    async def refuse(params: bytes | None) -> bytes:
        raise RpcError(-32000, "odd", object())

    async with serving(routes(refuse=refuse)) as (_, peer):
        reply = await peer.call(request(1, "refuse"))
        assert reply["error"] == {"code": -32000, "message": "odd"}


@pytest.mark.anyio
async def test_a_failing_notification_handler_does_not_stop_serving() -> None:
    async def boom(params: bytes | None) -> None:
        raise ValueError("boom")

    async with serving(routes(boom=boom)) as (_, peer):
        await peer.send(notification("boom"))
        await peer.send(notification("unknown"))
        await peer.assert_alive()


# --- batches --------------------------------------------------------------------


@pytest.mark.anyio
async def test_batches_are_answered_as_one_array_when_allowed() -> None:
    async with serving(routes(echo=echo), allow_batches=True) as (_, peer):
        reply = await peer.call(
            [
                request(1, "echo", {"a": 1}),
                notification("echo", {"n": 1}),
                request(2, "nothing"),
                {"jsonrpc": "2.0", "id": 3},
                [request(4, "echo")],
                request(5, "ping"),
            ]
        )
        by_id = {item["id"]: item for item in reply}
        assert len(reply) == 5
        assert by_id[1]["result"] == {"a": 1}
        assert by_id[2]["error"]["code"] == -32601
        assert by_id[3]["error"]["code"] == -32600
        assert by_id[None]["error"]["code"] == -32600  # the nested batch
        assert by_id[5]["result"] == {}
        await peer.send([notification("echo"), notification("other")])
        await peer.assert_alive()  # nothing was sent for notifications only
        reply = await peer.call([])
        assert reply["id"] is None and "empty batch" in reply["error"]["message"]


@pytest.mark.anyio
async def test_batches_are_refused_unless_allowed() -> None:
    async with serving(routes(echo=echo)) as (_, peer):
        for batch in ([request(1, "echo")], []):
            reply = await peer.call(batch)
            assert reply["id"] is None and reply["error"]["code"] == -32600
            assert "batches are not supported" in reply["error"]["message"]
        await peer.assert_alive()


@pytest.mark.anyio
async def test_a_batch_may_carry_responses_to_our_requests() -> None:
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with Connection(ours, allow_batches=True) as connection:
            async with anyio.create_task_group() as tasks:

                async def ask() -> None:
                    assert await connection.request("x", None, int) == 42

                tasks.start_soon(ask)
                sent = await peer.receive()
                await peer.send([{"jsonrpc": "2.0", "id": sent["id"], "result": 42}])
    await theirs.aclose()


class SkippingTransport:
    """Wraps a transport; receiving `skip` reports a message too large to
    read, whose ends are the message's `head` and `tail`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def receive(self) -> bytes:
        received: bytes = await self.inner.receive()
        if received.startswith(b'{"skip":'):
            ends = json.loads(received)["skip"]
            raise MessageTooLargeError(
                "message line too long: more than 10 bytes",
                10,
                ends[0].encode(),
                ends[1].encode(),
            )
        return received

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
async def test_a_skipped_oversized_message_is_32600_and_serving_goes_on() -> None:
    ours, theirs = memory_pair()
    with anyio.fail_after(LIMIT):
        try:
            async with Connection(SkippingTransport(ours), routes()):
                peer = Peer(theirs)
                await peer.send(
                    {"skip": ['{"jsonrpc":"2.0","method":"x","params":{', ""]}
                )
                refused = await peer.receive()
                assert refused["id"] is None
                assert refused["error"]["code"] == -32600
                assert "more than 10 bytes" in refused["error"]["message"]
                await peer.assert_alive()
        finally:
            await theirs.aclose()


# --- input that msgspec cannot read at all --------------------------------------

DEEP = b"[" * 3000 + b"]" * 3000
"""Nesting past the interpreter's recursion limit (msgspec's too)."""


@pytest.mark.parametrize(
    ("line", "code", "reply_id", "reason"),
    [
        (DEEP, -32600, None, "nested too deeply"),
        (
            b'{"jsonrpc":"2.0","id":3,"method":"x","params":' + DEEP + b"}",
            -32600,
            3,
            "nested too deeply",
        ),
        (
            b'{"jsonrpc":"2.0","method":"x","params":' + DEEP + b',"id":"t"}',
            -32600,
            "t",
            "nested too deeply",
        ),
        (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32600, 1, "UTF-8"),
        (b'{"jsonrpc":"2.0","id":"\xff","method":"x"}', -32600, None, "UTF-8"),
        (b'{"jsonrpc":"2.0","id":4,"method":7} x', -32700, None, "trailing"),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"x"}', -32600, None, "id must be"),
        (b'{"jsonrpc":"2.0","id":5,"method":1e400}', -32600, 5, "out of range"),
        (b'{"jsonrpc":"2.0","id":6,"method":"\xff"', -32700, None, "Parse error"),
    ],
)
@pytest.mark.anyio
async def test_unreadable_input_is_answered_with_the_id_when_it_can_be_found(
    line: bytes, code: int, reply_id: Any, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with serving(routes()) as (_, peer):
        reply = await peer.call(line)
        assert reply["id"] == reply_id
        assert reply["error"]["code"] == code
        assert reason in reply["error"]["message"]
        await peer.assert_alive()
    assert "Traceback" not in caplog.text and not any(
        r.exc_info for r in caplog.records
    )


@pytest.mark.anyio
async def test_an_unreadable_item_spoils_only_itself_in_a_batch() -> None:
    async with serving(routes(echo=echo), allow_batches=True) as (_, peer):
        reply = await peer.call(
            b'[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}},'
            b'{"jsonrpc":"2.0","id":2,"method":1e400},'
            b'{"jsonrpc":"2.0","id":3,"method":"\xff"},'
            b'{"jsonrpc":"2.0","id":1e400,"method":"echo"},'
            b'{"jsonrpc":"2.0","id":4,"method":"echo"}]'
        )
        by_id = {item["id"]: item for item in reply}
        assert len(reply) == 5
        assert by_id[1]["result"] == {"a": 1} and by_id[4]["result"] == {}
        assert by_id[2]["error"]["code"] == by_id[3]["error"]["code"] == -32600
        assert by_id[None]["error"]["code"] == -32600
        await peer.assert_alive()


@pytest.mark.anyio
async def test_meta_members_the_engine_reads_may_be_unreadable() -> None:
    async def empty(params: bytes | None) -> bytes:
        return b"{}"

    async with serving(routes(echo=empty)) as (_, peer):
        reply = await peer.call(
            b'{"jsonrpc":"2.0","id":1,"method":"echo",'
            b'"params":{"_meta":{"progressToken":"\xff"}}}'
        )
        assert reply["id"] == 1 and "result" in reply
        await peer.send(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
            b'"params":{"requestId":"\xff"}}'
        )
        await peer.assert_alive()


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"', ""),
        ('{"method":"tools/call","params":{"a":"', '"}},"jsonrpc":"2.0","id":7}'),
    ],
)
@pytest.mark.anyio
async def test_a_skipped_oversized_request_is_32600_with_its_id(
    head: str, tail: str
) -> None:
    ours, theirs = memory_pair()
    with anyio.fail_after(LIMIT):
        try:
            async with Connection(SkippingTransport(ours), routes()):
                peer = Peer(theirs)
                refused = await peer.call({"skip": [head, tail]})
                assert refused["id"] == 7 and refused["error"]["code"] == -32600
                assert "more than 10 bytes" in refused["error"]["message"]
                await peer.assert_alive()
        finally:
            await theirs.aclose()


@pytest.mark.parametrize(
    ("head", "tail"),
    [
        ('{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"', ""),
        ('{"result":{"content":[{"text":"', '"}]},"jsonrpc":"2.0","id":1}'),
    ],
)
@pytest.mark.anyio
async def test_a_skipped_oversized_response_fails_its_request_at_once(
    head: str, tail: str
) -> None:
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with Connection(SkippingTransport(ours)) as connection:
            async with anyio.create_task_group() as tasks:

                async def ask() -> None:
                    with pytest.raises(MessageTooLargeError) as caught:
                        await connection.request("tools/call", {}, dict)
                    assert caught.value.limit == 10
                    text = str(caught.value)
                    assert text.startswith("the response to tools/call (id 1)")
                    assert "more than 10 bytes" in text

                tasks.start_soon(ask)
                assert (await peer.receive())["id"] == 1
                refused = await peer.call({"skip": [head, tail]})
                assert refused["id"] is None and refused["error"]["code"] == -32600
    await theirs.aclose()

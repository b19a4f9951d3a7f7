"""`direct.py`: a request served in its POST's own task, its answer written
straight to ASGI `send`."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from mcp_specgen_runtime.errors import ProtocolError, RpcError
from mcp_specgen_runtime.jsonrpc.serving import RequestContext, current_request
from mcp_specgen_runtime.transports.http import direct
from mcp_specgen_runtime.transports.http.direct import DirectAnswer, answer_direct

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Wire:
    """ASGI `send` and `receive`: what was sent, and a client that leaves
    when told to."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = anyio.Event()
        self.received = 0

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def receive(self) -> dict[str, Any]:
        self.received += 1
        await self.gone.wait()
        return {"type": "http.disconnect"}

    @property
    def start(self) -> dict[str, Any]:
        return self.sent[0]

    @property
    def headers(self) -> dict[bytes, bytes]:
        return dict(self.start["headers"])

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent[1:]]


async def serve(
    wire: Wire,
    handler: Any,
    error_status: dict[int, int] | None = None,
) -> DirectAnswer:
    answer = DirectAnswer(wire.send, error_status, unreachable="no way back")
    context = RequestContext(answer, 7, "tools/call", 7)
    await answer_direct(answer, handler, context, b"{}", wire.receive)
    return answer


def reply(body: bytes) -> Any:
    return msgspec.json.decode(body)


async def test_a_result_with_nothing_before_it_is_one_json_answer() -> None:
    async def handler(method: str, params: bytes | None) -> bytes:
        return b'{"ok":true}'

    wire = Wire()
    answer = await serve(wire, handler)
    assert wire.start["status"] == 200
    assert wire.headers[b"content-type"] == b"application/json"
    assert len(wire.sent) == 2
    assert reply(wire.bodies[0]) == {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}
    assert wire.headers[b"content-length"] == str(len(wire.bodies[0])).encode()
    assert answer.over and not answer.streaming
    assert wire.received == 0  # a quick answer never watches the client


async def test_an_error_answer_gets_the_status_of_its_code() -> None:
    async def handler(method: str, params: bytes | None) -> bytes:
        raise RpcError(-32601, "no such method")

    wire = Wire()
    await serve(wire, handler, {-32601: 404})
    assert wire.start["status"] == 404
    assert reply(wire.bodies[0])["error"]["code"] == -32601


async def test_a_notification_first_turns_the_answer_into_an_sse_stream() -> None:
    async def handler(method: str, params: bytes | None) -> bytes:
        await current_request().report_progress(1, 2)
        await current_request().report_progress(2, 2)
        return b"{}"

    wire = Wire()
    answer = await serve(wire, handler)
    assert wire.start["status"] == 200
    assert wire.headers[b"content-type"] == b"text/event-stream"
    assert [m["more_body"] for m in wire.sent[1:]] == [True, True, False]
    datas = [reply(body.split(b"data: ", 1)[1]) for body in wire.bodies]
    assert [d.get("method") for d in datas] == ["notifications/progress"] * 2 + [None]
    assert datas[2] == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert answer.streaming and answer.over


async def test_what_is_sent_after_the_answer_is_dropped() -> None:
    async def handler(method: str, params: bytes | None) -> bytes:
        return b"{}"

    wire = Wire()
    answer = await serve(wire, handler)
    await answer.notify("notifications/message", {"level": "info", "data": "late"})
    await answer.finish(b"again")
    assert len(wire.sent) == 2


async def test_a_client_going_away_cancels_the_request_unanswered() -> None:
    cancelled = False

    async def handler(method: str, params: bytes | None) -> bytes:
        nonlocal cancelled
        try:
            await anyio.sleep_forever()
        finally:
            cancelled = True
        return b"{}"  # pragma: no cover - never reached

    wire = Wire()
    wire.gone.set()  # seen once the client is watched, from QUICK_ANSWER_S on
    with anyio.fail_after(5):
        answer = await serve(wire, handler)
    assert cancelled
    assert wire.sent == []
    assert answer.over


async def test_a_stream_watches_the_client_from_its_first_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only the stream's start can begin the watch within the test's bound.
    monkeypatch.setattr(direct, "QUICK_ANSWER_S", 3600.0)
    started = anyio.Event()

    async def handler(method: str, params: bytes | None) -> bytes:
        await current_request().report_progress(1)
        started.set()
        await anyio.sleep_forever()
        return b"{}"  # pragma: no cover - never reached

    wire = Wire()

    async def leave() -> None:
        await started.wait()
        wire.gone.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(leave)
            await serve(wire, handler)
    assert wire.headers[b"content-type"] == b"text/event-stream"
    assert [m["more_body"] for m in wire.sent[1:]] == [True]


async def test_requests_to_the_client_are_refused_clearly() -> None:
    answer = DirectAnswer(Wire().send, unreachable="this server is stateless")
    with pytest.raises(ProtocolError, match="sampling/createMessage: this server"):
        await answer.request("sampling/createMessage", {}, object)
    modern = DirectAnswer(Wire().send)
    with pytest.raises(ProtocolError, match="request_client"):
        await modern.request("roots/list", {}, object)

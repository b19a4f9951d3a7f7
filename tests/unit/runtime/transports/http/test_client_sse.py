"""`client_sse`: the HTTP client's SSE streams. Legacy answers resumed with
`Last-Event-ID`, the standalone GET stream, and `StreamReader.read_reply`,
against `httpx.MockTransport` handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from mcp_specgen_runtime.transports.http.client_messages import Post
from mcp_specgen_runtime.transports.http.client_sse import StreamReader
from tests.unit.runtime.transports.http.http_mocks import answer_of, mocked, request


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_a_broken_legacy_stream_is_resumed_with_last_event_id() -> None:
    """The POST's stream ends after a priming event with an id: the transport
    GETs with Last-Event-ID after the stream's retry delay."""
    seen: list[httpx.Request] = []
    reply = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        sse = {"content-type": "text/event-stream"}
        if request.method == "POST":
            body = msgspec.json.decode(request.content)
            if body["method"] == "initialize":
                result = {"protocolVersion": "2025-11-25"}
                return httpx.Response(
                    200,
                    headers={"mcp-session-id": "s1"},
                    json={"jsonrpc": "2.0", "id": body["id"], "result": result},
                )
            return httpx.Response(
                200, headers=sse, content=b"id: ev-1\nretry: 10\ndata:\n\n"
            )
        if request.method == "DELETE":
            return httpx.Response(204)
        assert request.headers["last-event-id"] == "ev-1"
        return httpx.Response(
            200, headers=sse, content=b"id: ev-2\ndata: " + reply + b"\n\n"
        )

    async with mocked(handler, standalone_stream=False) as transport:
        initialized = await answer_of(transport, request(0, "initialize"))
        assert initialized["result"]["protocolVersion"] == "2025-11-25"
        answered = await answer_of(transport, request(1))
    assert answered == msgspec.json.decode(reply)
    get = seen[-2]
    assert get.method == "GET"
    assert get.headers["mcp-session-id"] == "s1"
    assert get.headers["mcp-protocol-version"] == "2025-11-25"


@pytest.mark.anyio
async def test_a_standalone_stream_refused_with_405_is_not_retried() -> None:
    seen: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        if request.method == "GET":
            return httpx.Response(405)
        if request.method == "DELETE":
            return httpx.Response(405)
        body = msgspec.json.decode(request.content)
        if body.get("method") == "initialize":
            result = {"protocolVersion": "2025-03-26"}
            return httpx.Response(
                200, json={"jsonrpc": "2.0", "id": body["id"], "result": result}
            )
        return httpx.Response(202)

    async with mocked(handler) as transport:
        await answer_of(transport, request(1, "initialize"))
        await transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await anyio.sleep(0.1)
        assert transport.session_id is None
    assert seen == ["POST", "POST", "GET"]  # no session: no DELETE


def stream_reader(queued: list[bytes]) -> StreamReader:
    """A reader that opens no GET stream and queues into `queued`."""

    async def open_get(last_id: str) -> httpx.Response | None:
        return None

    def deliver(post: Post | None, message: bytes, unanswered: Any) -> None:
        queued.append(message)

    def fail(request_ids: Any, reason: str) -> None:
        raise AssertionError(reason)

    return StreamReader(
        open_get=open_get,
        deliver=deliver,
        fail=fail,
        queue=queued.append,
        max_message_size=1024,
    )


@pytest.mark.anyio
async def test_read_reply_passes_on_what_comes_before_the_response() -> None:
    notice = b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}'
    reply = b'{"jsonrpc":"2.0","id":"x","result":{"tools":[]}}'
    body = b"data:\n\ndata: " + notice + b"\n\ndata: " + reply + b"\n\n"
    queued: list[bytes] = []
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=body
    )
    found = await stream_reader(queued).read_reply(response)
    assert found == msgspec.json.decode(reply)
    assert queued == [notice]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (400, {"content-type": "application/json"}, b"{}"),
        (200, {"content-type": "text/plain"}, b"{}"),
        (200, {"content-type": "application/json"}, b"[1]"),
        (200, {"content-type": "application/json"}, b"{" * 2000),
    ],
)
async def test_read_reply_finds_no_response_in_other_answers(
    status: int, headers: dict[str, str], body: bytes
) -> None:
    response = httpx.Response(status, headers=headers, content=body)
    assert await stream_reader([]).read_reply(response) is None


@pytest.mark.anyio
async def test_a_cancelled_stream_fails_nothing() -> None:
    """Cancelling the reader of a request (the 2026 cancellation) ends its
    stream without a synthesized error."""
    queued: list[bytes] = []
    reader = stream_reader(queued)
    post = Post(b"{}", "tools/call", frozenset({7}), version="2026-07-28")

    async def body() -> AsyncIterator[bytes]:
        yield b": open\n\n"
        await anyio.sleep_forever()

    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=body()
    )
    assert reader.modern(7) is None
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            reader.read_soon(tasks, post, response)
            assert reader.modern(7) is True
            await anyio.sleep(0.05)
            reader.cancel(7)
    assert reader.modern(7) is None
    assert queued == []

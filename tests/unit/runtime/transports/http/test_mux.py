"""`SessionMux` routing of a task's messages (2025-11-25): to the task's open
`tasks/result` POST, else the GET stream, else parked until one opens."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.transports.http.mux import ResponseStream, SessionMux

RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


def ask(request_id: int, task_id: str) -> bytes:
    params = {"message": "?", "_meta": {RELATED: {"taskId": task_id}}}
    return message(id=request_id, method="elicitation/create", params=params)


def result_request(request_id: int, task_id: str) -> bytes:
    return message(id=request_id, method="tasks/result", params={"taskId": task_id})


def queued(stream: ResponseStream) -> list[bytes]:
    found: list[bytes] = []
    while True:
        try:
            found.append(stream.messages.receive_nowait())
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.EndOfStream):
            return found


@pytest.fixture
async def mux() -> AsyncIterator[SessionMux]:
    made = SessionMux()
    yield made
    await made.aclose()


@pytest.fixture
def streams() -> Iterator[Callable[..., ResponseStream]]:
    made: list[ResponseStream] = []

    def stream(*request_ids: int) -> ResponseStream:
        made.append(ResponseStream(frozenset(request_ids)))
        return made[-1]

    yield stream
    for each in made:
        each.end()


@pytest.mark.anyio
async def test_a_task_request_goes_to_its_tasks_result_stream(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    mine = streams(7)
    other = streams(8)
    mux.feed(result_request(7, "A"), mine)
    mux.feed(result_request(8, "B"), other)
    await mux.send(ask(1, "A"))
    assert queued(mine) == [ask(1, "A")] and queued(other) == []


@pytest.mark.anyio
async def test_a_task_request_waits_for_a_stream_of_its_task(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    await mux.send(ask(1, "A"))
    await mux.send(ask(2, "B"))
    other = streams(8)
    mux.feed(result_request(8, "B"), other)
    assert queued(other) == [ask(2, "B")]
    mine = streams(7)
    mux.feed(result_request(7, "A"), mine)
    assert queued(mine) == [ask(1, "A")]


@pytest.mark.anyio
async def test_the_get_stream_takes_what_waits_and_what_comes(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    await mux.send(ask(1, "A"))
    standalone = streams()
    mux.open_standalone(standalone)
    assert queued(standalone) == [ask(1, "A")]
    await mux.send(ask(2, "A"))
    assert queued(standalone) == [ask(2, "A")]
    mux.close_standalone(standalone)
    assert mux.standalone is None


@pytest.mark.anyio
async def test_notifications_and_plain_requests_are_not_parked(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    note = message(
        method="notifications/progress", params={"_meta": {RELATED: {"taskId": "A"}}}
    )
    await mux.send(note)
    await mux.send(message(id=3, method="roots/list", params={}))
    stream = streams(7)
    mux.feed(result_request(7, "A"), stream)
    assert queued(stream) == []


@pytest.mark.anyio
async def test_a_finished_tasks_result_stops_being_a_destination(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    stream = streams(7)
    mux.feed(result_request(7, "A"), stream)
    mux.forget(stream)
    standalone = streams()
    mux.open_standalone(standalone)
    await mux.send(ask(1, "A"))
    assert queued(standalone) == [ask(1, "A")]


def cancelled(request_id: int) -> bytes:
    return message(method="notifications/cancelled", params={"requestId": request_id})


def answer(request_id: int) -> bytes:
    return message(id=request_id, result={"action": "decline"})


@pytest.mark.anyio
async def test_a_cancelled_parked_request_is_dropped_unsent(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    await mux.send(ask(1, "A"))
    await mux.send(ask(2, "A"))
    await mux.send(cancelled(1))  # the task ended, expired or gave up
    standalone = streams()
    mux.open_standalone(standalone)
    assert queued(standalone) == [ask(2, "A")]


@pytest.mark.anyio
async def test_a_request_on_a_dropped_stream_is_parked_again_until_answered(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    first = streams(7)
    mux.feed(result_request(7, "A"), first)
    await mux.send(ask(1, "A"))
    await mux.send(ask(2, "A"))
    mux.feed(answer(2), None)  # answered: never sent again
    mux.forget(first)  # the client dropped the stream, maybe unread
    second = streams(8)
    mux.feed(result_request(8, "A"), second)
    assert queued(second) == [ask(1, "A")]
    mux.feed(answer(1), None)
    mux.forget(second)
    standalone = streams()
    mux.open_standalone(standalone)
    assert queued(standalone) == []


@pytest.mark.anyio
async def test_a_request_on_an_ended_stream_goes_at_once_where_one_is_open(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    standalone = streams()
    mux.open_standalone(standalone)
    result = streams(7)
    mux.feed(result_request(7, "A"), result)
    await mux.send(ask(1, "A"))
    mux.forget(result)
    assert queued(standalone) == [ask(1, "A")]
    mux.close_standalone(standalone)
    again = streams()
    mux.open_standalone(again)
    assert queued(again) == [ask(1, "A")]


@pytest.mark.anyio
async def test_a_cancelled_sent_request_is_not_sent_again(
    mux: SessionMux, streams: Callable[..., ResponseStream]
) -> None:
    result = streams(7)
    mux.feed(result_request(7, "A"), result)
    await mux.send(ask(1, "A"))
    await mux.send(cancelled(1))  # the client saw it: it hears of the cancel
    assert queued(result) == [ask(1, "A"), cancelled(1)]
    mux.forget(result)
    standalone = streams()
    mux.open_standalone(standalone)
    assert queued(standalone) == []

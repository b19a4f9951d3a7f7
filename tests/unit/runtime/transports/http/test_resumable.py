"""Resumable SSE streams of `McpHttpApp`: dropped mid-way, resumed with GET
and `Last-Event-ID`, over uvicorn with real sockets.

The tool `steps` reports progress 1, waits for gate 0, reports progress 2,
waits for gate 1, reports progress 3 and answers "done": the test drops the
connection between steps and checks the resumed stream gets exactly what
the client missed, in order, then what follows live.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.stores.events import MemoryEventStore
from mcp_specgen_runtime.transports.http import SSEParser
from mcp_specgen_runtime.transports.http.client import connect_http
from mcp_specgen_runtime.transports.http.server import McpHttpApp, close_sse_stream
from mcp_specgen_types import v2025_03_26, v2025_11_25, v2026_07_28
from tests.unit.runtime.transports.http.test_server import (
    BASE,
    LIMIT,
    error_of,
    no_errors_logged,  # noqa: F401 - the autouse fixture, for these tests too
    open_session,
    rpc,
    served,
    session_headers,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Steps:
    """The gates of the `steps` tool."""

    def __init__(self) -> None:
        self.gates = [anyio.Event(), anyio.Event()]
        self.released: bool | None = None

    async def run(self) -> str:
        request = current_request()
        await request.report_progress(1, 3)
        await self.gates[0].wait()
        await request.report_progress(2, 3)
        await self.gates[1].wait()
        await request.report_progress(3, 3)
        return "done"


def steps_session(steps: Steps) -> ServerSession:
    class Tools1125(v2025_11_25.ServerHandlers):
        async def tools_call(
            self, params: v2025_11_25.CallToolRequestParams
        ) -> v2025_11_25.CallToolResult:
            if params.name == "poll":
                steps.released = close_sse_stream()
                await steps.gates[0].wait()
                text = "polled"
            else:
                text = await steps.run()
            return v2025_11_25.CallToolResult(
                content=[v2025_11_25.TextContent(text=text)]
            )

    class Tools0326(v2025_03_26.ServerHandlers):
        async def tools_call(
            self, params: v2025_03_26.CallToolRequestParams
        ) -> v2025_03_26.CallToolResult:
            if params.name == "poll":
                steps.released = close_sse_stream()
                return v2025_03_26.CallToolResult(
                    content=[v2025_03_26.TextContent(text="not released")]
                )
            text = await steps.run()
            return v2025_03_26.CallToolResult(
                content=[v2025_03_26.TextContent(text=text)]
            )

    class Tools2026(v2026_07_28.ServerHandlers):
        async def tools_call(
            self, params: v2026_07_28.CallToolRequestParams
        ) -> v2026_07_28.CallToolResult:
            text = await steps.run()
            return v2026_07_28.CallToolResult(
                content=[v2026_07_28.TextContent(text=text)]
            )

    return ServerSession(
        [Tools0326(), Tools1125(), Tools2026()],
        name="steps",
        version="1",
        versions=["2025-03-26", "2025-11-25", "2026-07-28"],
    )


def steps_call(request_id: int = 1) -> dict[str, Any]:
    params = {"name": "steps", "arguments": {}, "_meta": {"progressToken": "t"}}
    return rpc(request_id, "tools/call", params)


def progress(n: int) -> dict[str, Any]:
    params = {"progressToken": "t", "progress": n, "total": 3}
    return rpc(None, "notifications/progress", params)


def done(request_id: int = 1) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": "done"}]}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


class Reader:
    """The events of one streamed SSE response, read as they come."""

    def __init__(self, response: httpx.Response) -> None:
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"] == "text/event-stream"
        self.parser = SSEParser()
        self.chunks = response.aiter_bytes()
        self.pending: list[Any] = []

    async def event(self) -> Any:
        """The next event (priming events included)."""
        with anyio.fail_after(LIMIT):
            while not self.pending:
                self.pending.extend(self.parser.feed(await anext(self.chunks)))
        return self.pending.pop(0)

    async def message(self) -> tuple[str, dict[str, Any]]:
        """The next message with its event id."""
        event = await self.event()
        assert event.data, f"a priming event where a message was due: {event}"
        return event.id, json.loads(event.data)

    async def rest(self) -> list[tuple[str, dict[str, Any]]]:
        """Every message left, up to the end of the response."""
        found: list[tuple[str, dict[str, Any]]] = []
        with anyio.fail_after(LIMIT):
            async for chunk in self.chunks:
                self.pending.extend(self.parser.feed(chunk))
        found.extend((e.id, json.loads(e.data)) for e in self.pending if e.data)
        self.pending.clear()
        return found


@asynccontextmanager
async def steps_server(
    store: MemoryEventStore | None = None, **options: Any
) -> AsyncIterator[tuple[str, Steps, McpHttpApp]]:
    steps = Steps()
    app = McpHttpApp(steps_session(steps), event_store=store, **options)
    async with served(app) as url:
        yield url, steps, app


async def kept_after(
    store: MemoryEventStore, event_id: str, owner: str, n: int
) -> None:
    """Wait until the store holds `n` events after `event_id`."""
    with anyio.fail_after(LIMIT):
        while True:
            if len((await store.replay(event_id, owner)).events) >= n:
                return
            await asyncio.sleep(0.01)


def get_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    headers = {"accept": "text/event-stream", **session_headers(session_id)}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    return headers


async def test_a_post_stream_starts_with_a_priming_event_and_retry() -> None:
    async with steps_server(retry_ms=250) as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                priming = await reader.event()
                assert priming.data == b"" and priming.id
                assert reader.parser.retry_ms == 250
                first_id, first = await reader.message()
                assert first == progress(1)
                assert first_id.split(".")[0] == priming.id.split(".")[0]
                steps.gates[0].set()
                steps.gates[1].set()
                rest = await reader.rest()
            assert [m for _, m in rest] == [progress(2), progress(3), done()]
            ids = [first_id, *(i for i, _ in rest)]
            assert len(set(ids)) == len(ids)


async def test_a_dropped_post_stream_resumes_with_what_was_missed_then_live() -> None:
    store = MemoryEventStore()
    async with steps_server(store) as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                await reader.event()  # priming
                last_id, first = await reader.message()
                assert first == progress(1)
            # The connection is gone (the response was not read to its end).
            steps.gates[0].set()  # progress 2 is sent while no one listens
            await kept_after(store, last_id, session_id, 1)
            async with client.stream(
                "GET", url, headers=get_headers(session_id, last_id)
            ) as resumed:
                reader = Reader(resumed)
                _, missed = await reader.message()
                assert missed == progress(2)
                steps.gates[1].set()  # then live: progress 3 and the result
                rest = await reader.rest()
            assert [m for _, m in rest] == [progress(3), done()]


async def test_a_response_lost_with_its_post_arrives_on_the_resumed_stream() -> None:
    store = MemoryEventStore()
    async with steps_server(store) as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            async with client.stream(
                "POST", url, json=steps_call(7), headers=headers
            ) as response:
                reader = Reader(response)
                priming = await reader.event()
            steps.gates[0].set()
            steps.gates[1].set()
            await kept_after(store, priming.id, session_id, 4)
            resumed = await client.get(url, headers=get_headers(session_id, priming.id))
            assert resumed.status_code == 200
            events = [e for e in SSEParser().feed(resumed.content) if e.data]
            messages = [json.loads(e.data) for e in events]
            assert messages == [progress(1), progress(2), progress(3), done(7)]
            # Resumed again from its middle: the same tail, nothing else.
            again = await client.get(url, headers=get_headers(session_id, events[1].id))
            tail = [json.loads(e.data) for e in SSEParser().feed(again.content)]
            assert tail == [progress(3), done(7)]


async def test_the_get_stream_resumes_with_what_was_missed_then_live() -> None:
    store = MemoryEventStore()
    async with steps_server(store) as (url, _, app):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            state = app.sessions.get(session_id)
            assert state is not None

            async def notify(n: int) -> dict[str, Any]:
                params = {"uri": f"file:///{n}"}
                await state.connection.notify("notifications/resources/updated", params)
                return rpc(None, "notifications/resources/updated", params)

            async with client.stream(
                "GET", url, headers=get_headers(session_id)
            ) as get:
                reader = Reader(get)
                priming = await reader.event()
                assert priming.data == b"" and priming.id
                first = await notify(1)
                last_id, message = await reader.message()
                assert message == first
            missed = await notify(2)  # stored: the GET stream lives on
            await kept_after(store, last_id, session_id, 1)
            async with client.stream(
                "GET", url, headers=get_headers(session_id, last_id)
            ) as resumed:
                reader = Reader(resumed)
                assert (await reader.message())[1] == missed
                live = await notify(3)
                assert (await reader.message())[1] == live


async def test_a_resume_takes_over_a_connection_the_server_still_holds() -> None:
    async with steps_server() as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                await reader.event()
                last_id, _ = await reader.message()
                async with client.stream(
                    "GET", url, headers=get_headers(session_id, last_id)
                ) as resumed:
                    # The first connection ends: the stream is the new one's.
                    assert await reader.rest() == []
                    steps.gates[0].set()
                    steps.gates[1].set()
                    rest = await Reader(resumed).rest()
            assert [m for _, m in rest] == [progress(2), progress(3), done()]


async def test_foreign_unknown_and_malformed_ids_are_refused() -> None:
    async with steps_server() as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            mine = await open_session(client, url=url)
            theirs = await open_session(client, url=url)
            headers = {**BASE, **session_headers(mine)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                priming = await reader.event()
                stream = priming.id.split(".")[0]
                for session_id, last_id, why in (
                    (theirs, priming.id, "no stream of this session"),
                    (mine, "not-an-event-id", "no stream of this session"),
                    (mine, f"{stream}.999999", "no event of its stream"),
                ):
                    refused = await client.get(
                        url, headers=get_headers(session_id, last_id)
                    )
                    assert refused.status_code == 400
                    assert "Cannot resume" in error_of(refused)["message"]
                    assert why in error_of(refused)["message"]
                # Refusals took nothing over: the stream goes on here.
                steps.gates[0].set()
                steps.gates[1].set()
                rest = await reader.rest()
            assert [m for _, m in rest] == [
                progress(1),
                progress(2),
                progress(3),
                done(),
            ]


async def test_a_resume_past_evicted_events_is_refused() -> None:
    store = MemoryEventStore(max_events_per_stream=2)
    async with steps_server(store) as (url, steps, app):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                priming = await reader.event()
            steps.gates[0].set()
            steps.gates[1].set()
            with anyio.fail_after(LIMIT):  # all 5 events stored, 2 kept
                while True:
                    if not app._live:  # pyright: ignore[reportPrivateUsage]
                        break
                    await asyncio.sleep(0.01)
            refused = await client.get(url, headers=get_headers(session_id, priming.id))
            assert refused.status_code == 400
            assert "no longer kept" in error_of(refused)["message"]


async def test_older_revisions_get_ids_without_priming() -> None:
    async with steps_server() as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            version = "2025-03-26"
            session_id = await open_session(client, version, url=url)
            headers = {**BASE, **session_headers(session_id, version)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                first = await reader.event()
                assert first.data and first.id  # a message, with an id
                steps.gates[0].set()
                steps.gates[1].set()
                rest = await reader.rest()
            assert all(event_id for event_id, _ in rest)


async def test_without_resumability_events_carry_no_ids() -> None:
    async with steps_server(resumable=False) as (url, steps, app):
        assert app.event_store is None
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            async with client.stream(
                "POST", url, json=steps_call(), headers=headers
            ) as response:
                reader = Reader(response)
                first = await reader.event()
                assert first.data and not first.id
                steps.gates[0].set()
                steps.gates[1].set()
                assert all(not event_id for event_id, _ in await reader.rest())


class CutFirstStream:
    """Ends the first SSE answer after its `keep` body chunks, as a network
    failure would (the app's later sends are swallowed)."""

    def __init__(self, app: McpHttpApp, keep: int) -> None:
        self.app = app
        self.keep = keep
        self.cut = False

    async def aclose(self) -> None:
        await self.app.aclose()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self.cut:
            await self.app(scope, receive, send)
            return
        state = {"sse": False, "chunks": 0, "over": False}

        async def cutting(message: dict[str, Any]) -> None:
            if state["over"]:
                return
            if message["type"] == "http.response.start":
                headers = dict(message["headers"])
                state["sse"] = headers.get(b"content-type") == b"text/event-stream"
            elif state["sse"]:
                state["chunks"] += 1
                if state["chunks"] >= self.keep:
                    self.cut = True
                    state["over"] = True
                    message = {**message, "more_body": False}
            await send(message)

        await self.app(scope, receive, cutting)


async def test_our_client_resumes_a_cut_stream_and_loses_nothing() -> None:
    steps = Steps()
    steps.gates[0].set()
    steps.gates[1].set()
    app = McpHttpApp(steps_session(steps), retry_ms=10)
    cut = CutFirstStream(app, keep=2)  # the priming event and progress 1
    async with served(cut) as url:  # pyright: ignore[reportArgumentType]
        async with connect_http(
            url, name="t", version="1", versions=["2025-11-25"]
        ) as session:
            params = {"name": "steps", "arguments": {}, "_meta": {"progressToken": "t"}}
            result = await session.request(
                "tools/call", params, v2025_11_25.CallToolResult
            )
    assert cut.cut
    assert result.content == [v2025_11_25.TextContent(text="done")]


async def test_close_sse_stream_ends_the_connection_and_the_client_resumes() -> None:
    async with steps_server(retry_ms=10) as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = {**BASE, **session_headers(session_id)}
            body = rpc(3, "tools/call", {"name": "poll", "arguments": {}})
            async with client.stream("POST", url, json=body, headers=headers) as answer:
                reader = Reader(answer)
                priming = await reader.event()
                assert priming.data == b"" and reader.parser.retry_ms == 10
                assert await reader.rest() == []  # ended: released, not done
            assert steps.released is True
            async with client.stream(
                "GET", url, headers=get_headers(session_id, priming.id)
            ) as resumed:
                steps.gates[0].set()
                rest = await Reader(resumed).rest()
            assert [m for _, m in rest] == [
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "result": {"content": [{"type": "text", "text": "polled"}]},
                }
            ]


async def test_close_sse_stream_does_nothing_without_priming() -> None:
    async with steps_server() as (url, steps, _):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            version = "2025-03-26"
            session_id = await open_session(client, version, url=url)
            headers = {**BASE, **session_headers(session_id, version)}
            body = rpc(3, "tools/call", {"name": "poll", "arguments": {}})
            answer = await client.post(url, json=body, headers=headers)
            assert answer.json()["result"]["content"][0]["text"] == "not released"
            assert steps.released is False
    assert close_sse_stream() is False  # outside any request


async def test_our_client_follows_a_released_stream() -> None:
    steps = Steps()
    steps.gates[0].set()
    app = McpHttpApp(steps_session(steps), retry_ms=10)
    async with served(app) as url:
        async with connect_http(
            url, name="t", version="1", versions=["2025-11-25"]
        ) as session:
            params = {"name": "poll", "arguments": {}}
            result = await session.request(
                "tools/call", params, v2025_11_25.CallToolResult
            )
    assert steps.released is True
    assert result.content == [v2025_11_25.TextContent(text="polled")]

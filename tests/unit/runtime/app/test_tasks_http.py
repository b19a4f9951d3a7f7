"""Tasks of the 2025-11-25 design over Streamable HTTP: a task outlives the
POST that created it, a task's question to the client reaches it on the
`tasks/result` stream (or the GET stream), and tasks are bound to the
authenticated principal (`auth=` with a `StaticVerifier`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.auth.server import Principal, ResourceServer, StaticVerifier
from mcp_specgen_runtime.transports.http.client import connect_http
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from tests.unit.runtime.transports.http.test_server import (
    BASE,
    close_app,
    initialize,
    open_session,
    rpc,
    served,
    session_headers,
    sse_events,
)

from .task_app import make_app
from .test_tasks import LEGACY, RELATED, Recorder, call_task, get

LIMIT = 10.0
BASE_URL = "http://127.0.0.1:8000"
RESOURCE = f"{BASE_URL}/mcp"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def principal(subject: str) -> Principal:
    return Principal(
        subject=subject,
        client_id="client-1",
        scopes=frozenset({"mcp"}),
        claims={"aud": RESOURCE},
        issuer="https://as.example",
    )


TOKENS = {
    "alice-1": principal("alice"),
    "alice-2": principal("alice"),  # another token of the same caller
    "bob": principal("bob"),
}


@asynccontextmanager
async def protected(*, stateless: bool = False) -> AsyncIterator[httpx.AsyncClient]:
    server = ResourceServer(
        StaticVerifier(TOKENS), RESOURCE, authorization_servers=["https://as.example"]
    )
    app = make_app()
    transport = httpx.ASGITransport(app.asgi(auth=server, stateless=stateless))
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, timeout=LIMIT
    ) as http:
        try:
            with anyio.fail_after(LIMIT):
                yield http
        finally:
            await app.tasks.aclose()


class Caller:
    """One legacy session of one bearer token, speaking raw JSON-RPC."""

    def __init__(self, http: httpx.AsyncClient, token: str) -> None:
        self.http = http
        self.token = token
        self.session_id = ""
        self.ids = iter(range(1, 10_000))

    def headers(self) -> dict[str, str]:
        return {
            **BASE,
            "authorization": f"Bearer {self.token}",
            **session_headers(self.session_id),
        }

    async def open(self) -> Caller:
        response = await self.http.post(
            "/mcp",
            json=initialize(),
            headers={**BASE, "authorization": f"Bearer {self.token}"},
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        done = await self.http.post(
            "/mcp", json=rpc(None, "notifications/initialized"), headers=self.headers()
        )
        assert done.status_code == 202
        return self

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = await self.http.post(
            "/mcp", json=rpc(next(self.ids), method, params), headers=self.headers()
        )
        assert response.status_code == 200, response.text
        reply: dict[str, Any] = response.json()
        return reply


@pytest.mark.anyio
async def test_tasks_are_bound_to_the_principal_not_the_session() -> None:
    async with protected() as http:
        alice = await Caller(http, "alice-1").open()
        again = await Caller(http, "alice-2").open()
        bob = await Caller(http, "bob").open()
        created = await alice.send(
            "tools/call", {"name": "slow", "arguments": {"text": "mine"}, "task": {}}
        )
        task_id = created["result"]["task"]["taskId"]
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            refused = await bob.send(method, {"taskId": task_id})
            assert refused["error"] == {
                "code": -32602,
                "message": "Failed to retrieve task: Task not found",
            }
        assert (await bob.send("tasks/list", {}))["result"]["tasks"] == []
        # The same caller, from another session and token, sees its task.
        result = (await again.send("tasks/result", {"taskId": task_id}))["result"]
        assert result["content"][0]["text"] == "mine"
        listed = (await again.send("tasks/list", {}))["result"]["tasks"]
        assert [t["taskId"] for t in listed] == [task_id]
        bobs = await bob.send(
            "tools/call", {"name": "slow", "arguments": {"text": "b"}, "task": {}}
        )
        bob_id = bobs["result"]["task"]["taskId"]
        assert [
            t["taskId"] for t in (await bob.send("tasks/list", {}))["result"]["tasks"]
        ] == [bob_id]
        assert (await alice.send("tasks/get", {"taskId": bob_id}))["error"][
            "code"
        ] == -32602


@pytest.mark.anyio
async def test_anonymous_sessions_cannot_read_each_others_tasks() -> None:
    app = McpHttpApp(make_app().session())
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, timeout=LIMIT
    ) as http:
        try:
            first = await open_session(http)
            second = await open_session(http)
            body = rpc(
                1,
                "tools/call",
                {"name": "slow", "arguments": {"text": "x"}, "task": {}},
            )
            created = (
                await http.post(
                    "/mcp", json=body, headers={**BASE, **session_headers(first)}
                )
            ).json()
            task_id = created["result"]["task"]["taskId"]
            peek = rpc(2, "tasks/get", {"taskId": task_id})
            theirs = (
                await http.post(
                    "/mcp", json=peek, headers={**BASE, **session_headers(second)}
                )
            ).json()
            assert theirs["error"]["code"] == -32602
            mine = (
                await http.post(
                    "/mcp", json=peek, headers={**BASE, **session_headers(first)}
                )
            ).json()
            assert mine["result"]["taskId"] == task_id
        finally:
            await close_app(app)


@pytest.mark.anyio
async def test_a_question_waits_for_tasks_result_and_is_answered_on_its_stream() -> (
    None
):
    """No GET stream: the task's elicitation is parked until the requestor,
    seeing `input_required`, calls `tasks/result`; it arrives on that SSE
    stream, the answer is a later POST, and the same stream ends with the
    result. The POST that created the task was long over."""
    app = McpHttpApp(make_app().session())
    async with served(app) as url, httpx.AsyncClient(timeout=LIMIT) as http:
        response = await http.post(
            url, json=initialize(0, LEGACY, elicitation={}), headers=BASE
        )
        session = session_headers(response.headers["mcp-session-id"])
        headers = {**BASE, **session}
        await http.post(
            url, json=rpc(None, "notifications/initialized"), headers=headers
        )
        body = rpc(1, "tools/call", {"name": "ask", "arguments": {}, "task": {}})
        created = await http.post(url, json=body, headers=headers)
        assert created.headers["content-type"] == "application/json"
        task_id = created.json()["result"]["task"]["taskId"]
        status = ""
        for n in range(100):
            polled = await http.post(
                url, json=rpc(10 + n, "tasks/get", {"taskId": task_id}), headers=headers
            )
            status = polled.json()["result"]["status"]
            if status == "input_required":
                break
            await anyio.sleep(0.01)
        assert status == "input_required"
        fetch = rpc(2, "tasks/result", {"taskId": task_id})
        async with http.stream("POST", url, json=fetch, headers=headers) as answer:
            events = sse_events(answer)
            question = await anext(events)
            assert question["method"] == "elicitation/create"
            assert question["params"]["_meta"] == {RELATED: {"taskId": task_id}}
            reply = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Bo"}},
            }
            accepted = await http.post(url, json=reply, headers=headers)
            assert accepted.status_code == 202
            final = await anext(events)
            assert final["id"] == 2
            assert final["result"]["content"][0]["text"] == "hello Bo"
            assert final["result"]["_meta"] == {RELATED: {"taskId": task_id}}


@pytest.mark.anyio
async def test_our_client_answers_a_task_question_over_http() -> None:
    recorder = Recorder()
    app = McpHttpApp(make_app().session())
    async with (
        served(app) as url,
        connect_http(
            url, name="t", version="1", versions=[LEGACY], handlers=[recorder]
        ) as session,
    ):
        recorder.session = session
        task = await call_task(session, "ask")
        result = await get(session, "tasks/result", {"taskId": task["taskId"]})
        assert result["content"][0]["text"] == "hello Ann"
        assert recorder.elicited[0]["_meta"] == {RELATED: {"taskId": task["taskId"]}}
        assert recorder.seen_status == ["input_required"]


@pytest.mark.anyio
async def test_a_question_goes_to_the_get_stream_when_one_is_open() -> None:
    app = McpHttpApp(make_app().session())
    async with served(app) as url, httpx.AsyncClient(timeout=LIMIT) as http:
        response = await http.post(
            url, json=initialize(0, LEGACY, elicitation={}), headers=BASE
        )
        headers = {**BASE, **session_headers(response.headers["mcp-session-id"])}
        await http.post(
            url, json=rpc(None, "notifications/initialized"), headers=headers
        )
        get_headers = {
            "accept": "text/event-stream",
            **session_headers(response.headers["mcp-session-id"]),
        }
        async with http.stream("GET", url, headers=get_headers) as stream:
            events = sse_events(stream)
            body = rpc(1, "tools/call", {"name": "ask", "arguments": {}, "task": {}})
            created = await http.post(url, json=body, headers=headers)
            task_id = created.json()["result"]["task"]["taskId"]
            question = await anext(events)
            while question.get("method") != "elicitation/create":
                question = await anext(events)
            assert question["params"]["_meta"] == {RELATED: {"taskId": task_id}}
            reply = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "decline"},
            }
            await http.post(url, json=reply, headers=headers)
            final = await http.post(
                url, json=rpc(2, "tasks/result", {"taskId": task_id}), headers=headers
            )
            assert final.json()["result"]["content"][0]["text"] == "hello None"


@pytest.mark.anyio
async def test_tools_call_params_of_the_wrong_shape_are_invalid_params() -> None:
    app = McpHttpApp(make_app().session())
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, timeout=LIMIT
    ) as http:
        try:
            session = await open_session(http)
            headers = {**BASE, **session_headers(session)}
            replies = [
                (await http.post("/mcp", json=rpc(i, "tools/call", p), headers=headers))
                for i, p in enumerate([["slow"], {"name": 5}], start=1)
            ]
        finally:
            await close_app(app)
    errors = [reply.json()["error"] for reply in replies]
    assert [error["code"] for error in errors] == [-32602, -32602]
    assert "params must be a JSON object" in errors[0]["message"]
    assert "name must be a string" in errors[1]["message"]


async def stateless_post(
    http: httpx.AsyncClient, method: str, params: dict[str, Any], token: str = ""
) -> dict[str, Any]:
    headers = {**BASE, "mcp-protocol-version": LEGACY}
    if token:
        headers["authorization"] = f"Bearer {token}"
    response = await http.post("/mcp", json=rpc(1, method, params), headers=headers)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


@pytest.mark.anyio
async def test_stateless_anonymous_tasks_are_id_holders_and_never_listed() -> None:
    app = make_app()
    transport = httpx.ASGITransport(app.asgi(stateless=True))
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, timeout=LIMIT
    ) as http:
        try:
            hello = await stateless_post(http, "initialize", initialize()["params"])
            created = await stateless_post(
                http,
                "tools/call",
                {"name": "slow", "arguments": {"text": "alice"}, "task": {}},
            )
            task_id = created["result"]["task"]["taskId"]
            listed = await stateless_post(http, "tasks/list", {})
            held = await stateless_post(http, "tasks/result", {"taskId": task_id})
        finally:
            await app.tasks.aclose()
    tasks = hello["result"]["capabilities"]["tasks"]
    assert "list" not in tasks and "cancel" in tasks
    assert listed["error"]["code"] == -32601
    assert "cannot tell anonymous callers apart" in listed["error"]["message"]
    assert held["result"]["content"][0]["text"] == "alice"


@pytest.mark.anyio
async def test_stateless_callers_with_a_principal_list_their_own_tasks() -> None:
    async with protected(stateless=True) as http:
        hello = await stateless_post(
            http, "initialize", initialize()["params"], "alice-1"
        )
        created = await stateless_post(
            http,
            "tools/call",
            {"name": "slow", "arguments": {"text": "a"}, "task": {}},
            "alice-1",
        )
        mine = await stateless_post(http, "tasks/list", {}, "alice-2")
        theirs = await stateless_post(http, "tasks/list", {}, "bob")
    assert "list" in hello["result"]["capabilities"]["tasks"]
    task_id = created["result"]["task"]["taskId"]
    assert [t["taskId"] for t in mine["result"]["tasks"]] == [task_id]
    assert theirs["result"]["tasks"] == []


@pytest.mark.anyio
async def test_a_cancelled_tasks_parked_question_is_dropped() -> None:
    app = McpHttpApp(make_app().session())
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, timeout=LIMIT
    ) as http:
        try:
            session_id = await open_session(http, elicitation={})
            headers = {**BASE, **session_headers(session_id)}
            mux = app.sessions.get(session_id).mux  # type: ignore[union-attr]
            body = rpc(1, "tools/call", {"name": "ask", "arguments": {}, "task": {}})
            created = (await http.post("/mcp", json=body, headers=headers)).json()
            task_id = created["result"]["task"]["taskId"]
            await anyio.wait_all_tasks_blocked()
            parked = len(mux._parked)  # no GET nor tasks/result stream
            cancel = rpc(2, "tasks/cancel", {"taskId": task_id})
            await http.post("/mcp", json=cancel, headers=headers)
            await anyio.wait_all_tasks_blocked()
            assert parked == 1 and not mux._parked
        finally:
            await close_app(app)


@pytest.mark.anyio
async def test_a_2026_tools_call_with_a_non_string_name_is_invalid_params() -> None:
    app = make_app()
    transport = httpx.ASGITransport(app.asgi())
    headers = {
        **BASE,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "slow",
    }
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE_URL, timeout=LIMIT
    ) as http:
        try:
            params = {"name": 5, "arguments": {}, "_meta": envelope}
            reply = await http.post(
                "/mcp", json=rpc(1, "tools/call", params), headers=headers
            )
        finally:
            await app.tasks.aclose()
    error = reply.json()["error"]
    assert error["code"] == -32602
    assert "name must be a string" in error["message"]

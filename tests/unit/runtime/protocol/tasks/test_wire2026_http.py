"""The tasks extension over Streamable HTTP: `Mcp-Name` must mirror
`params.taskId` on `tasks/get|update|cancel` (SEP-2663 on SEP-2243; -32020,
HTTP 400), and a task belongs to the principal that created it (another
caller's `tasks/get`, `tasks/update` and `tasks/cancel` are -32602).

The app runs in-process (`httpx.ASGITransport`); `authenticate` takes the
bearer token as the principal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.protocol.tasks.wire2026 import TASKS
from mcp_specgen_runtime.transports.http.server import HttpRequest, McpHttpApp

LIMIT = 10.0
MODERN = "2026-07-28"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def bearer_principal(request: HttpRequest) -> object:
    authorization = request.headers.get("authorization") or ""
    return authorization.removeprefix("Bearer ") or None


@asynccontextmanager
async def http_client() -> AsyncGenerator[httpx.AsyncClient]:
    app = App("tasks-http")
    never = asyncio.Event()

    @app.tool(task_support="optional")
    async def waiting() -> str:
        await never.wait()
        return "never"

    served: Any = McpHttpApp(app.session(), authenticate=bearer_principal)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(served), base_url="http://127.0.0.1:8000"
    ) as client:
        try:
            with anyio.fail_after(LIMIT):
                yield client
        finally:
            await served.aclose()


async def post(
    client: httpx.AsyncClient,
    method: str,
    params: dict[str, Any],
    *,
    token: str = "alice",
    name: str | None = None,
    tasks: bool = True,
) -> httpx.Response:
    declared: dict[str, Any] = {"extensions": {TASKS: {}}} if tasks else {}
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": declared,
    }
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**params, "_meta": meta},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    routed = name if name is not None else params.get("name", params.get("taskId"))
    if routed:  # "" leaves the header out
        headers["mcp-name"] = routed
    return await client.post("/mcp", json=body, headers=headers)


async def create(client: httpx.AsyncClient) -> str:
    response = await post(client, "tools/call", {"name": "waiting", "arguments": {}})
    task_id: str = response.json()["result"]["taskId"]
    return task_id


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_mcp_name_must_mirror_the_task_id(method: str) -> None:
    async with http_client() as client:
        task_id = await create(client)
        params: dict[str, Any] = {"taskId": task_id}
        if method == "tasks/update":
            params["inputResponses"] = {}
        matched = await post(client, method, params)
        wrong = await post(client, method, params, name="another-task")
        missing = await post(client, method, params, name="")
    assert matched.status_code == 200
    assert "result" in matched.json()
    for refused in (wrong, missing):
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32020


@pytest.mark.anyio
async def test_another_principal_cannot_see_or_touch_the_task() -> None:
    async with http_client() as client:
        task_id = await create(client)
        replies = [
            await post(client, "tasks/get", {"taskId": task_id}, token="mallory"),
            await post(
                client,
                "tasks/update",
                {"taskId": task_id, "inputResponses": {}},
                token="mallory",
            ),
            await post(client, "tasks/cancel", {"taskId": task_id}, token="mallory"),
        ]
        own = await post(client, "tasks/get", {"taskId": task_id})
    assert [r.json()["error"]["code"] for r in replies] == [-32602] * 3
    assert own.json()["result"]["status"] == "working"


@pytest.mark.anyio
async def test_without_the_extension_tasks_methods_are_400_and_32021() -> None:
    async with http_client() as client:
        refused = await post(client, "tasks/get", {"taskId": "t"}, tasks=False)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32021


@pytest.mark.anyio
async def test_anonymous_callers_limits_are_kept_per_address() -> None:
    app = App("tasks-http", task_options={"max_active_per_owner": 1})
    release = asyncio.Event()

    @app.tool(task_support="optional")
    async def waiting() -> str:
        await release.wait()
        return "done"

    served: Any = McpHttpApp(app.session())

    def client_at(host: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(served, client=(host, 50_000))
        return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")

    call = {"name": "waiting", "arguments": {}}
    try:
        with anyio.fail_after(LIMIT):
            async with client_at("10.0.0.1") as one, client_at("10.0.0.2") as two:
                first = await post(one, "tools/call", call, token="")
                again = await post(one, "tools/call", call, token="")
                other = await post(two, "tools/call", call, token="")
            release.set()
    finally:
        await served.aclose()
    assert first.json()["result"]["status"] == "working"
    assert again.json()["error"]["code"] == -32029
    assert other.json()["result"]["status"] == "working"

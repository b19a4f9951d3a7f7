"""`request_client` in the 2026 era, through the real HTTP app: the sealed
`requestState` of a round belongs to the caller it was issued to, and the
client's answers reach the handler as the schema's form values allow.

The app runs in-process (`httpx.ASGITransport`); `authenticate` takes the
bearer token as the principal.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.codec.wire import convert
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.client_requests import request_client
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.http.server import HttpRequest, McpHttpApp
from mcp_specgen_types import v2025_11_25, v2026_07_28

LIMIT = 10.0
"""Seconds any one test may take."""
MODERN = "2026-07-28"
AMOUNT_SCHEMA = {"type": "object", "properties": {"amount": {"type": "number"}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Asking(v2026_07_28.ServerHandlers):
    """One tool, `pay`: asks the client for an amount, then echoes it."""

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResult:
        question = v2026_07_28.ElicitRequestFormParams(
            message="How much?",
            requested_schema=convert(
                AMOUNT_SCHEMA, v2026_07_28.ElicitRequestFormParamsRequestedSchema
            ),
        )
        answer = await request_client(
            "elicitation/create", question, v2026_07_28.ElicitResult
        )
        amount = (answer.content or {}).get("amount")
        return v2026_07_28.CallToolResult(
            content=[v2026_07_28.TextContent(text=f"paid {amount!r}")]
        )


async def bearer_principal(request: HttpRequest) -> object:
    authorization = request.headers.get("authorization") or ""
    return authorization.removeprefix("Bearer ") or None


@asynccontextmanager
async def http_client(**options: Any) -> AsyncGenerator[httpx.AsyncClient]:
    session = ServerSession([Asking()], name="asking", version="1", **options)
    app: Any = McpHttpApp(session, authenticate=bearer_principal)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app), base_url="http://127.0.0.1:8000"
    ) as client:
        try:
            with anyio.fail_after(LIMIT):
                yield client
        finally:
            await app.aclose()


async def pay(client: httpx.AsyncClient, token: str, **retry: Any) -> dict[str, Any]:
    """Call `pay` as the holder of `token`; the JSON-RPC response."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "pay", "arguments": {}, **retry, "_meta": meta},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "pay",
    }
    response = await client.post("/mcp", json=body, headers=headers)
    reply: dict[str, Any] = response.json()
    return reply


def accepted(amount: object) -> dict[str, Any]:
    return {"r0": {"action": "accept", "content": {"amount": amount}}}


@pytest.mark.anyio
async def test_another_principal_cannot_complete_a_pending_request() -> None:
    async with http_client() as client:
        first = (await pay(client, "alice"))["result"]
        assert first["resultType"] == "input_required"
        state = first["requestState"]
        stolen = await pay(
            client, "mallory", inputResponses=accepted(1), requestState=state
        )
        assert stolen["error"]["code"] == -32602
        assert "issued to another caller" in stolen["error"]["message"]
        done = await pay(
            client, "alice", inputResponses=accepted(1), requestState=state
        )
        assert done["result"]["content"][0]["text"] == "paid 1"


@pytest.mark.anyio
async def test_the_caller_may_send_a_state_again_with_other_answers() -> None:
    """Tokens are not single-use: within their lifetime, the caller they were
    issued to can replay a round, answering differently (as the README says)."""
    async with http_client() as client:
        state = (await pay(client, "alice"))["result"]["requestState"]
        for amount in (1, 2):
            done = await pay(
                client, "alice", inputResponses=accepted(amount), requestState=state
            )
            assert done["result"]["content"][0]["text"] == f"paid {amount}"


@pytest.mark.anyio
async def test_a_state_older_than_the_session_ttl_is_refused() -> None:
    async with http_client(state_ttl_s=-1) as client:
        state = (await pay(client, "alice"))["result"]["requestState"]
        late = await pay(
            client, "alice", inputResponses=accepted(1), requestState=state
        )
        assert late["error"]["code"] == -32602
        assert "expired" in late["error"]["message"]


@pytest.mark.anyio
async def test_a_fractional_answer_reaches_the_tool() -> None:
    """The official Python SDK client answers a `number` field with 2.5."""
    async with http_client() as client:
        state = (await pay(client, "alice"))["result"]["requestState"]
        done = await pay(
            client, "alice", inputResponses=accepted(2.5), requestState=state
        )
        assert done["result"]["content"][0]["text"] == "paid 2.5"


class FractionalAnswers(v2025_11_25.ClientHandlers):
    """A legacy client answering every form with an amount of 2.5."""

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        return v2025_11_25.ElicitResult(action="accept", content={"amount": 2.5})


@pytest.mark.anyio
async def test_a_fractional_answer_reaches_the_tool_in_the_legacy_era() -> None:
    session = ServerSession(
        [Asking()], name="asking", version="1", versions=["2025-11-25", MODERN]
    )
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, session.handler()),
            ClientSession(
                client_end,
                name="client",
                version="0",
                versions=["2025-11-25"],
                handlers=[FractionalAnswers()],
            ) as client,
        ):
            result = await v2025_11_25.Client(client).call_tool(name="pay")
    assert result.content[0] == v2025_11_25.TextContent(text="paid 2.5")

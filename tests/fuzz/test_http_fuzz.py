"""Fuzzing the Streamable HTTP server with the cases of the stdio fuzz.

The ASGI app (`http_app`) is called in process through httpx's
`ASGITransport`, one POST per case, in each connection state: no session
(before initialize), a 2025-11-25 session, a 2025-03-26 session (batches),
2026-07-28 (stateless; the standard headers a conforming client derives from
the body). What must hold for every case:

- no 5xx, and every body a JSON-RPC answer (JSON, or SSE carrying JSON);
- with a session or 2026: the answers of `cases.expect`, the same as over
  stdio (in a 400 body when the whole POST is refused; 202 and no body for
  silence); a 2026 POST whose body and headers no longer agree may get
  -32020 (header mismatch) instead, and one the server cannot route (a
  response, a notification without the envelope, an invalid message without
  id) a 4xx error with id null;
- before initialize: a 4xx JSON-RPC error, with the request's id or null;
- after each case, a valid ping is answered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.transports.http.server import http_app
from tests.fuzz.cases import (
    ENVELOPE,
    STATES,
    VERSION,
    Case,
    generate,
)
from tests.fuzz.support import SEED, Tally, make_app, mismatch, reply_of

CASES = 400
"""Cases per state."""
HEADER_MISMATCH = -32020
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
ACCEPT = {"accept": "application/json, text/event-stream"}
JSON = {"content-type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Poster:
    """Posts raw bodies with the headers of a connection state."""

    def __init__(self, client: httpx.AsyncClient, state: str) -> None:
        self.client = client
        self.state = state
        self.headers: dict[str, str] = {**ACCEPT, **JSON}
        self.pings = 0

    async def open(self) -> None:
        if self.state not in ("legacy", "batch"):
            return
        version = VERSION[self.state]
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        }
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        opened = await self.client.post("/mcp", json=body, headers=self.headers)
        assert opened.status_code == 200, opened.text
        self.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = version
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        done = await self.client.post("/mcp", json=initialized, headers=self.headers)
        assert done.status_code == 202

    def headers_for(self, data: bytes, modern: bool) -> dict[str, str]:
        """The headers a conforming client sends with `data` (2026: derived
        from the body where it can be read)."""
        headers = {**self.headers}
        if not modern:
            return headers
        headers["mcp-protocol-version"] = VERSION["modern"]
        try:
            body = json.loads(data)
        except (ValueError, RecursionError):  # no JSON, or too deep for json
            return headers
        if not isinstance(body, dict):
            return headers
        method = body.get("method")
        if isinstance(method, str) and _header_value(method):
            headers["mcp-method"] = method
        params = body.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if isinstance(name, str) and _header_value(name):
            headers["mcp-name"] = name
        return headers

    async def post(self, data: bytes, modern: bool) -> tuple[int, list[Any]]:
        """The status and the JSON-RPC messages answered."""
        response = await self.client.post(
            "/mcp", content=data, headers=self.headers_for(data, modern)
        )
        return response.status_code, _messages(response)

    async def ping(self) -> None:
        """A valid request must be answered: a ping (2026, which has no ping,
        and before initialize, when no session is open: a stateless
        `server/discover`)."""
        self.pings += 1
        method = "ping" if self.state in ("legacy", "batch") else "server/discover"
        modern = self.state in ("fresh", "modern")
        params: dict[str, Any] = {"_meta": ENVELOPE} if modern else {}
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": f"sync-{self.pings}"}
        body.update(method=method, params=params)
        data = json.dumps(body).encode()
        status, messages = await self.post(data, modern)
        assert status == 200 and len(messages) == 1, (status, messages)
        assert messages[0]["id"] == f"sync-{self.pings}"
        assert "result" in messages[0], messages


def _header_value(value: str) -> bool:
    return value.isascii() and value.isprintable()


def _messages(response: httpx.Response) -> list[Any]:
    if not response.content:
        return []
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        lines = response.text.splitlines()
        return [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    assert kind.startswith("application/json"), (response.status_code, kind)
    return [json.loads(response.content)]


def judge(state: str, case: Case, status: int, messages: list[Any]) -> str | None:
    """Why this answer is wrong for `case` (None: it is right)."""
    if status >= 500:
        return f"HTTP {status}"
    if state == "fresh":
        if not case.expected.replies:
            return None if status in (202, 400, 404) else f"HTTP {status}"
        if status < 400 or len(messages) != 1:
            return f"expected a 4xx error, got HTTP {status} {messages}"
        try:
            found_id, code = reply_of(messages[0])
        except AssertionError as exc:
            return f"malformed answer: {exc}"
        ids = {None, *(reply_id for reply_id, _ in case.expected.replies)}
        return None if code is not None and found_id in ids else f"got {messages}"
    if state == "modern" and _refused_unrouted(case, status, messages):
        return None
    if not case.expected.replies and status != 202:
        return f"expected 202 and silence, got HTTP {status} {messages}"
    problem = mismatch(case, messages)
    if problem is not None and state == "modern" and len(messages) == 1:
        try:
            if reply_of(messages[0])[1] == HEADER_MISMATCH:
                return None
        except AssertionError:
            pass
    return problem


def _refused_unrouted(case: Case, status: int, messages: list[Any]) -> bool:
    """A 2026 POST the server cannot route (a response, a notification without
    the envelope, an invalid message without id) may be refused whole: 4xx
    and one error with id null, whatever its code."""
    if case.expected.replies not in ((), ((None, -32600),)):
        return False
    if not 400 <= status < 500 or len(messages) != 1:
        return False
    try:
        found_id, code = reply_of(messages[0])
    except AssertionError:
        return False
    return found_id is None and code is not None


@asynccontextmanager
async def in_process() -> AsyncGenerator[httpx.AsyncClient]:
    app = http_app(make_app().session())
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000", timeout=10
    ) as client:
        yield client


@pytest.mark.parametrize("state", STATES)
@pytest.mark.anyio
async def test_every_malformed_body_gets_a_json_rpc_answer(state: str) -> None:
    tally = Tally()
    with anyio.fail_after(120):
        async with in_process() as client:
            poster = Poster(client, state)
            await poster.open()
            for case in generate(state, SEED, CASES, stdio=False):
                try:
                    modern = state == "modern"
                    status, messages = await poster.post(case.data, modern)
                    problem = judge(state, case, status, messages)
                    await poster.ping()
                except (AssertionError, ValueError, httpx.HTTPError) as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                tally.record(case, problem)
    print(f"http {state}: {tally.summary()}")
    assert not tally.failures, tally.summary()

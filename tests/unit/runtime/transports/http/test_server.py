"""`McpHttpApp`, the Streamable HTTP server, driven over HTTP.

Complete responses go through httpx's `ASGITransport` (in-process; it buffers
each response whole). Streams (SSE answers read as they come, the standalone
GET stream, a client hanging up) go through uvicorn on a free loopback port,
running in the test's own event loop, with httpx or a raw socket as client.
Every test fails on an ERROR logged by uvicorn or the runtime (an app that
returns without completing its response, a handler that crashed).

The server under test serves `Tools1125` (2025-11-25) and `Tools2026`
(2026-07-28), whose tools echo, report progress, ask the client for its roots,
name the authenticated principal, block until released or cancelled, notify in
the background, and mirror a parameter into a header; `echo_session` serves
the other revisions (2025-03-26 for batches).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import msgspec
import pytest
import uvicorn

from mcp_specgen_runtime.codec.wire import convert
from mcp_specgen_runtime.errors import ErrorCode, ProtocolError, RpcError
from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_runtime.protocol.client_requests import request_client
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.http import (
    HEADER_MISMATCH,
    UNSUPPORTED_PROTOCOL_VERSION,
    SecurityPolicy,
    SSEParser,
    is_valid_session_id,
)
from mcp_specgen_runtime.transports.http.server import (
    HttpRequest,
    McpHttpApp,
    http_app,
    http_principal,
)
from mcp_specgen_types import v2025_11_25, v2026_07_28
from tests.unit.runtime.session_programs.echo_session import session as echo_session

LIMIT = 10.0
"""Seconds any one wait may take."""
IDLE = 1.0
"""The idle timeout of sessions meant to expire (wide enough for the requests
setting them up to come well within it)."""
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
BASE = {"accept": ACCEPT, "content-type": "application/json"}
ORIGIN = "http://127.0.0.1:8000"
CLIENT_INFO = {"name": "http-server-tests", "version": "0.0.0"}
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
REGIONAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "query": {"type": "string"},
    },
    "required": ["region", "query"],
}
"""A tool mirroring `region` into `Mcp-Param-Region`."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- the server -------------------------------------------------------------------


class Probe:
    """What the blocking and background tools report to the test."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()
        self.finished = anyio.Event()
        self.tasks: set[asyncio.Task[None]] = set()

    async def block(self) -> str:
        self.started.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        self.finished.set()
        return "released"


def _text(arguments: dict[str, Any] | None, key: str = "message") -> str:
    return str((arguments or {}).get(key, ""))


class Tools1125(v2025_11_25.ServerHandlers):
    """Legacy tools: echo, progress, roots, principal, block, background."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    async def tools_list(
        self, params: v2025_11_25.PaginatedRequestParams
    ) -> v2025_11_25.ListToolsResult:
        schema = convert(SCHEMA, v2025_11_25.ToolInputSchema)
        names = ("echo", "progress", "roots", "principal", "block", "background")
        tools = [v2025_11_25.Tool(name=name, input_schema=schema) for name in names]
        return v2025_11_25.ListToolsResult(tools=tools)

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        return v2025_11_25.CallToolResult(
            content=[v2025_11_25.TextContent(text=await self._run(params))]
        )

    async def _run(self, params: v2025_11_25.CallToolRequestParams) -> str:
        name = params.name
        if name == "echo":
            return _text(params.arguments)
        if name == "progress":
            request = current_request()
            await request.report_progress(1, 2, "half way")
            await request.report_progress(2, 2)
            return "done"
        if name == "roots":
            try:
                roots = await request_client(
                    "roots/list",
                    v2025_11_25.RequestParams(),
                    v2025_11_25.ListRootsResult,
                )
            except ProtocolError as exc:
                return f"no roots: {exc}"
            return ",".join(root.uri for root in roots.roots)
        if name == "principal":
            return repr(http_principal())
        if name == "block":
            return await self.probe.block()
        if name == "background":
            # Notify from a task of its own, unrelated to this request, that
            # runs as soon as the handler has replied.
            connection = current_request().connection
            task = asyncio.get_running_loop().create_task(
                connection.notify("notifications/tools/list_changed", None)
            )
            self.probe.tasks.add(task)
            task.add_done_callback(self.probe.tasks.discard)
            return "spawned"
        raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {name}")


class Tools2026(v2026_07_28.ServerHandlers):
    """Modern tools: echo, progress, principal, block, regional."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    async def tools_list(
        self, params: v2026_07_28.PaginatedRequestParams
    ) -> v2026_07_28.ListToolsResult:
        schema = convert(SCHEMA, v2026_07_28.ToolInputSchema)
        names = ("echo", "progress", "principal", "block")
        tools = [v2026_07_28.Tool(name=name, input_schema=schema) for name in names]
        tools.append(
            v2026_07_28.Tool(
                name="regional",
                input_schema=convert(REGIONAL_SCHEMA, v2026_07_28.ToolInputSchema),
            )
        )
        return v2026_07_28.ListToolsResult(tools=tools, cache_scope="public", ttl_ms=0)

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        return v2026_07_28.CallToolResult(
            content=[v2026_07_28.TextContent(text=await self._run(params))]
        )

    async def _run(self, params: v2026_07_28.CallToolRequestParams) -> str:
        name = params.name
        if name == "echo":
            return _text(params.arguments)
        if name == "progress":
            request = current_request()
            await request.report_progress(1, 2, "half way")
            await request.report_progress(2, 2)
            return "done"
        if name == "principal":
            return repr(http_principal())
        if name == "block":
            return await self.probe.block()
        if name == "regional":
            arguments = params.arguments or {}
            return f"{arguments.get('region')}: {arguments.get('query')}"
        raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {name}")


def tools_session(probe: Probe, *, legacy: bool = True) -> ServerSession:
    handlers: list[Any] = [Tools2026(probe)]
    if legacy:
        handlers.insert(0, Tools1125(probe))
    return ServerSession(handlers, name="http-tests", version="1.0.0")


def tool_schema(name: str) -> dict[str, Any] | None:
    return REGIONAL_SCHEMA if name == "regional" else None


def make_app(probe: Probe | None = None, **options: Any) -> McpHttpApp:
    options.setdefault("tool_input_schema", tool_schema)
    return McpHttpApp(tools_session(probe or Probe()), **options)


# --- messages ---------------------------------------------------------------------


def rpc(
    request_id: int | str | None, method: str, params: Any = None
) -> dict[str, Any]:
    """A JSON-RPC request (a notification when `request_id` is None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return message


def initialize(
    request_id: int = 0, version: str = LEGACY, **capabilities: Any
) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": CLIENT_INFO,
    }
    return rpc(request_id, "initialize", params)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def modern(
    request_id: int | str, method: str, params: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026 request, and the headers a conforming client sends with it."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = rpc(request_id, method, {**(params or {}), "_meta": meta})
    headers = {**BASE, "mcp-protocol-version": MODERN, "mcp-method": method}
    name = (params or {}).get("name")
    if isinstance(name, str):
        headers["mcp-name"] = name
    return body, headers


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC error of an error response."""
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    error: dict[str, Any] = body["error"]
    return error


def result_text(message: dict[str, Any]) -> str:
    text: str = message["result"]["content"][0]["text"]
    return text


def sse_messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a complete SSE response (priming events,
    with no data, left out)."""
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    events = [e for e in SSEParser().feed(response.content) if e.data]
    assert all(event.event == "message" for event in events)
    return [json.loads(event.data) for event in events]


# --- running the app --------------------------------------------------------------


class ErrorLog(logging.Handler):
    """Collects the ERROR records of uvicorn and the runtime."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def no_errors_logged() -> Iterator[None]:
    log = ErrorLog()
    loggers = [logging.getLogger(name) for name in ("uvicorn", "mcp_specgen_runtime")]
    for logger in loggers:
        logger.addHandler(log)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeHandler(log)
    assert [record.getMessage() for record in log.records] == []


def _session_tasks() -> set[asyncio.Task[Any]]:
    names = {"Connection.run", "Connection.aclose"}
    return {
        task
        for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__qualname__", None) in names
    }


async def close_app(app: McpHttpApp) -> None:
    """End the app's sessions and wait for their tasks to finish."""
    await app.aclose()
    tasks = _session_tasks()
    if tasks:
        done, pending = await asyncio.wait(tasks, timeout=LIMIT)
        assert not pending
        for task in done:
            assert task.cancelled() or task.exception() is None


@asynccontextmanager
async def in_process(app: McpHttpApp) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client calling `app` in-process (whole responses only)."""
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000", timeout=LIMIT
    ) as client:
        try:
            with anyio.fail_after(LIMIT * 3):
                yield client
        finally:
            await close_app(app)


@asynccontextmanager
async def served(app: McpHttpApp, limit: float = LIMIT * 3) -> AsyncIterator[str]:
    """Serve `app` with uvicorn on a free loopback port; the endpoint's URL,
    for at most `limit` seconds."""
    # IPPROTO_TCP named, or asyncio leaves TCP_NODELAY off on the accepted
    # sockets (Nagle's algorithm then meets delayed ACKs: 40 ms a request).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        log_level="warning",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[listener]))
    try:
        with anyio.fail_after(LIMIT):
            while not server.started:
                assert not task.done(), "uvicorn did not start"
                await asyncio.sleep(0.01)
        with anyio.fail_after(limit):
            yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        with anyio.fail_after(LIMIT):
            await task
        listener.close()
        await close_app(app)


async def post(
    client: httpx.AsyncClient,
    body: Any,
    headers: dict[str, str] | None = None,
    url: str = "/mcp",
) -> httpx.Response:
    return await client.post(url, json=body, headers={**BASE, **(headers or {})})


async def open_session(
    client: httpx.AsyncClient,
    version: str = LEGACY,
    url: str = "/mcp",
    **capabilities: Any,
) -> str:
    """Initialize a legacy session; its id."""
    response = await post(client, initialize(0, version, **capabilities), url=url)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == version
    session_id = response.headers["mcp-session-id"]
    initialized = rpc(None, "notifications/initialized")
    done = await post(client, initialized, session_headers(session_id, version), url)
    assert done.status_code == 202
    assert done.content == b""
    return session_id


def session_headers(session_id: str, version: str = LEGACY) -> dict[str, str]:
    return {"mcp-session-id": session_id, "mcp-protocol-version": version}


async def sse_events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of a streamed SSE response, as they come
    (priming events, with no data, left out)."""
    assert response.headers["content-type"] == "text/event-stream"
    parser = SSEParser()
    async for chunk in response.aiter_bytes():
        for event in parser.feed(chunk):
            if event.data:
                yield json.loads(event.data)


# --- the guards -------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_foreign_origin_is_403_and_a_local_one_passes() -> None:
    async with in_process(make_app()) as client:
        refused = await post(client, initialize(), {"origin": "http://evil.example"})
        assert refused.status_code == 403
        assert refused.json()["id"] is None
        assert "Origin" in error_of(refused)["message"]
        allowed = await post(client, initialize(), {"origin": "http://localhost:5173"})
        assert allowed.status_code == 200


@pytest.mark.anyio
async def test_a_foreign_host_is_421() -> None:
    async with in_process(make_app()) as client:
        refused = await post(client, initialize(), {"host": "evil.example:8000"})
        assert refused.status_code == 421
        assert "Host" in error_of(refused)["message"]
        get = await client.get(
            "/mcp", headers={"host": "attacker.test", "accept": "text/event-stream"}
        )
        assert get.status_code == 421


@pytest.mark.anyio
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", None]
)
async def test_a_body_that_is_not_json_is_415(content_type: str | None) -> None:
    headers = {"accept": ACCEPT}
    if content_type is not None:
        headers["content-type"] = content_type
    async with in_process(make_app()) as client:
        body = json.dumps(initialize()).encode()
        refused = await client.post("/mcp", content=body, headers=headers)
        assert refused.status_code == 415
        assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "accept"),
    [
        ("POST", "application/json"),
        ("POST", "text/event-stream"),
        ("POST", None),
        ("GET", "application/json"),
        ("GET", None),
    ],
)
async def test_a_client_that_does_not_accept_the_answer_is_406(
    method: str, accept: str | None
) -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        headers = {"content-type": "application/json", **session_headers(session_id)}
        if accept is not None:
            headers["accept"] = accept
        body = json.dumps(rpc(1, "tools/list")).encode() if method == "POST" else None
        request = client.build_request(method, "/mcp", content=body, headers=headers)
        if accept is None:
            del request.headers["accept"]  # httpx's default is */*
        refused = await client.send(request)
        assert refused.status_code == 406
        assert "Not Acceptable" in error_of(refused)["message"]


@pytest.mark.anyio
async def test_a_body_over_the_limit_is_413_declared_or_streamed() -> None:
    app = make_app(policy=SecurityPolicy(max_body_size=200))
    big = initialize()
    big["params"]["clientInfo"] = {"name": "x" * 300, "version": "0"}
    encoded = json.dumps(big).encode()

    async def chunked() -> AsyncIterator[bytes]:
        for start in range(0, len(encoded), 64):
            yield encoded[start : start + 64]

    async with in_process(app) as client:
        declared = await post(client, big)
        assert declared.status_code == 413
        assert "limit is 200 bytes" in error_of(declared)["message"]
        streamed = await client.post("/mcp", content=chunked(), headers=BASE)
        assert "content-length" not in streamed.request.headers
        assert streamed.status_code == 413
        small = await post(client, initialize())
        assert small.status_code == 200


@pytest.mark.anyio
async def test_another_path_is_404_and_another_method_405() -> None:
    async with in_process(make_app()) as client:
        elsewhere = await post(client, initialize(), url="/other")
        assert elsewhere.status_code == 404
        put = await client.put("/mcp", json=initialize(), headers=BASE)
        assert put.status_code == 405
        assert put.headers["allow"] == "GET, POST, DELETE"


@pytest.mark.anyio
async def test_malformed_json_is_400_parse_error() -> None:
    async with in_process(make_app()) as client:
        refused = await client.post("/mcp", content=b'{"jsonrpc": "2.0",', headers=BASE)
        assert refused.status_code == 400
        assert error_of(refused)["code"] == ErrorCode.PARSE_ERROR
        assert refused.json()["id"] is None
        for not_a_message in (b"[]", b"42", b'"text"'):
            refused = await client.post("/mcp", content=not_a_message, headers=BASE)
            assert refused.status_code == 400
            assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST


@pytest.mark.anyio
async def test_authentication_401_and_the_principal_in_both_eras() -> None:
    async def authenticate(request: HttpRequest) -> object:
        assert request.path == "/mcp"
        authorization = request.headers.get("authorization")
        if authorization is None or not authorization.startswith("Bearer "):
            return None
        return authorization.removeprefix("Bearer ")

    def bearer(token: str) -> dict[str, str]:
        return {"authorization": f"Bearer {token}"}

    async with in_process(make_app(authenticate=authenticate)) as client:
        refused = await post(client, initialize())
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert "Unauthorized" in error_of(refused)["message"]
        get = await client.get("/mcp", headers={"accept": "text/event-stream"})
        assert get.status_code == 401

        opened = await post(client, initialize(), bearer("alice"))
        assert opened.status_code == 200
        session_id = opened.headers["mcp-session-id"]
        headers = session_headers(session_id)
        answer = await post(
            client, rpc(1, "tools/call", call("principal")), headers | bearer("alice")
        )
        assert result_text(answer.json()) == "'alice'"
        refused = await post(client, rpc(3, "tools/call", call("principal")), headers)
        assert refused.status_code == 401

        body, modern_headers = modern(4, "tools/call", call("principal"))
        answer = await post(client, body, modern_headers | bearer("carol"))
        assert answer.status_code == 200
        assert result_text(answer.json()) == "'carol'"


async def authenticate_bearer(request: HttpRequest) -> object:
    """The bearer token, or "anonymous" without one."""
    authorization = request.headers.get("authorization") or ""
    return authorization.removeprefix("Bearer ") or "anonymous"


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.mark.anyio
async def test_a_legacy_session_is_unknown_to_another_principal() -> None:
    async with in_process(make_app(authenticate=authenticate_bearer)) as client:
        opened = await post(client, initialize(), bearer("alice"))
        session_id = opened.headers["mcp-session-id"]
        alice = session_headers(session_id) | bearer("alice")
        mallory = session_headers(session_id) | bearer("mallory")
        stolen = await post(client, rpc(1, "tools/call", call("principal")), mallory)
        assert stolen.status_code == 404
        assert "Session not found" in error_of(stolen)["message"]
        get = await client.get("/mcp", headers=mallory | {"accept": ACCEPT})
        assert get.status_code == 404
        assert (await client.delete("/mcp", headers=mallory)).status_code == 404
        # Still alice's, and working.
        answer = await post(client, rpc(2, "tools/call", call("principal")), alice)
        assert result_text(answer.json()) == "'alice'"
        assert (await client.delete("/mcp", headers=alice)).status_code == 200


@pytest.mark.anyio
async def test_a_principal_flooding_initialize_evicts_only_its_own_sessions() -> None:
    app = make_app(
        authenticate=authenticate_bearer, max_sessions=4, max_sessions_per_principal=2
    )
    async with in_process(app) as client:
        opened = await post(client, initialize(), bearer("alice"))
        alice = session_headers(opened.headers["mcp-session-id"]) | bearer("alice")
        flood = [await post(client, initialize()) for _ in range(10)]
        assert [response.status_code for response in flood] == [200] * 10
        assert len(app.sessions) == 3
        # The flood's oldest sessions are gone; the others' are untouched.
        first = session_headers(flood[0].headers["mcp-session-id"])
        gone = await post(client, rpc(1, "tools/list"), first)
        assert gone.status_code == 404
        answer = await post(client, rpc(1, "tools/call", call("principal")), alice)
        assert result_text(answer.json()) == "'alice'"
        assert (await post(client, initialize(), bearer("alice"))).status_code == 200


# --- legacy sessions --------------------------------------------------------------


@pytest.mark.anyio
async def test_initialize_creates_a_session_with_a_visible_ascii_id() -> None:
    async with in_process(make_app()) as client:
        response = await post(client, initialize())
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        session_id = response.headers["mcp-session-id"]
        assert is_valid_session_id(session_id)
        assert all(0x21 <= ord(c) <= 0x7E for c in session_id)
        assert response.json() == {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": LEGACY,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-tests", "version": "1.0.0"},
            },
        }
        other = await post(client, initialize())
        assert other.headers["mcp-session-id"] != session_id
        answer = await post(
            client,
            rpc(1, "tools/call", call("echo", message="hi")),
            {"mcp-session-id": session_id},
        )
        assert answer.status_code == 200
        assert answer.headers["mcp-session-id"] == session_id
        assert result_text(answer.json()) == "hi"


@pytest.mark.anyio
async def test_a_request_without_a_session_id_is_400() -> None:
    async with in_process(make_app()) as client:
        await open_session(client)
        refused = await post(client, rpc(1, "tools/list"))
        assert refused.status_code == 400
        assert "Mcp-Session-Id" in error_of(refused)["message"]
        get = await client.get("/mcp", headers={"accept": "text/event-stream"})
        assert get.status_code == 400
        delete = await client.delete("/mcp")
        assert delete.status_code == 400


@pytest.mark.anyio
@pytest.mark.parametrize("session_id", ["no-such-session", "bad id", "x" * 300])
async def test_an_unknown_session_is_404(session_id: str) -> None:
    async with in_process(make_app()) as client:
        await open_session(client)
        refused = await post(client, rpc(1, "tools/list"), session_headers(session_id))
        assert refused.status_code == 404
        assert "Session not found" in error_of(refused)["message"]
        get = await client.get(
            "/mcp",
            headers={"accept": "text/event-stream", "mcp-session-id": session_id},
        )
        assert get.status_code == 404


@pytest.mark.anyio
async def test_an_expired_session_is_404() -> None:
    async with in_process(make_app(idle_timeout_s=IDLE)) as client:
        session_id = await open_session(client)
        await anyio.sleep(IDLE * 1.5)
        refused = await post(client, rpc(1, "tools/list"), session_headers(session_id))
        assert refused.status_code == 404
        again = await open_session(client)
        answer = await post(client, rpc(1, "tools/list"), session_headers(again))
        assert answer.status_code == 200


@pytest.mark.anyio
async def test_delete_ends_a_session() -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        headers = session_headers(session_id)
        deleted = await client.delete("/mcp", headers=headers)
        assert deleted.status_code == 200
        refused = await post(client, rpc(1, "tools/list"), headers)
        assert refused.status_code == 404
        again = await client.delete("/mcp", headers=headers)
        assert again.status_code == 404


@pytest.mark.anyio
async def test_aclose_leaves_no_session_task_running() -> None:
    app = make_app()
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
        kept = await open_session(client)
        ended = await open_session(client)
        deleted = await client.delete("/mcp", headers=session_headers(ended))
        assert deleted.status_code == 200
        assert _session_tasks()  # two runners, and the deleted one's closer
        with anyio.fail_after(LIMIT):
            await app.aclose()
        # Every runner and closer finished within aclose, none left behind.
        assert _session_tasks() == set()
        assert kept not in app.sessions


@pytest.mark.anyio
async def test_the_session_cap_is_503_until_one_ends() -> None:
    async with in_process(make_app(max_sessions=2)) as client:
        first = await open_session(client)
        await open_session(client)
        refused = await post(client, initialize())
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "30"
        assert "mcp-session-id" not in refused.headers
        # The live sessions keep working.
        answer = await post(client, rpc(1, "tools/list"), session_headers(first))
        assert answer.status_code == 200
        await client.delete("/mcp", headers=session_headers(first))
        await open_session(client)


@pytest.mark.anyio
async def test_the_protocol_version_header_of_a_legacy_request() -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        refused = await post(
            client, rpc(1, "tools/list"), session_headers(session_id, "1999-01-01")
        )
        assert refused.status_code == 400
        error = error_of(refused)
        assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
        assert error["data"] == {"supported": [LEGACY], "requested": "1999-01-01"}
        # A modern version is not one a legacy session speaks either.
        refused = await post(
            client, rpc(2, "tools/list"), session_headers(session_id, MODERN)
        )
        assert refused.status_code == 400
        assert error_of(refused)["code"] == UNSUPPORTED_PROTOCOL_VERSION
        # Absent: the negotiated version is assumed.
        answer = await post(
            client, rpc(3, "tools/list"), {"mcp-session-id": session_id}
        )
        assert answer.status_code == 200
        assert answer.json()["id"] == 3


@pytest.mark.anyio
async def test_a_notification_only_post_is_202() -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        headers = session_headers(session_id)
        accepted = await post(
            client, rpc(None, "notifications/roots/list_changed"), headers
        )
        assert accepted.status_code == 202
        assert accepted.content == b""
        # A response to no pending request is accepted (and dropped) too.
        stray = {"jsonrpc": "2.0", "id": 99, "result": {}}
        assert (await post(client, stray, headers)).status_code == 202
        answer = await post(
            client, rpc(1, "tools/call", call("echo", message="ok")), headers
        )
        assert result_text(answer.json()) == "ok"


@pytest.mark.anyio
async def test_batches_on_2025_03_26_and_not_after() -> None:
    app = McpHttpApp(echo_session("2025-03-26", "2025-11-25"))
    async with in_process(app) as client:
        old = await open_session(client, "2025-03-26")
        batch = [
            rpc(1, "tools/call", call("echo", message="one")),
            rpc(None, "notifications/roots/list_changed"),
            rpc("two", "tools/call", call("echo", message="two")),
        ]
        answer = await post(client, batch, session_headers(old, "2025-03-26"))
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        replies = answer.json()
        assert isinstance(replies, list)
        texts = {reply["id"]: result_text(reply) for reply in replies}
        assert texts == {1: "one", "two": "two"}
        only_notifications = [rpc(None, "notifications/roots/list_changed")] * 2
        accepted = await post(
            client, only_notifications, session_headers(old, "2025-03-26")
        )
        assert accepted.status_code == 202

        new = await open_session(client, LEGACY)
        refused = await post(client, batch, session_headers(new))
        assert refused.status_code == 400
        assert "batch" in error_of(refused)["message"]


@pytest.mark.anyio
async def test_the_invalid_items_of_a_batch_are_answered_as_the_engine_does() -> None:
    app = McpHttpApp(echo_session("2025-03-26"))
    async with in_process(app) as client:
        session_id = await open_session(client, "2025-03-26")
        headers = session_headers(session_id, "2025-03-26")
        echo = rpc(1, "tools/call", call("echo", message="one"))
        bad_version = {**rpc(2, "tools/list"), "jsonrpc": "1.0"}
        bad_id = {**rpc(3, "tools/list"), "id": 1.5}
        answer = await post(client, [echo, bad_version, bad_id, echo], headers)
        assert answer.status_code == 200
        replies = [(r["id"], r.get("error", {}).get("code")) for r in answer.json()]
        assert sorted(replies, key=repr) == sorted(
            [
                (1, None),
                (1, ErrorCode.INVALID_REQUEST),  # its id is in flight: with the id
                (2, ErrorCode.INVALID_REQUEST),
                (None, ErrorCode.INVALID_REQUEST),
            ],
            key=repr,
        )
        # Nothing to serve: the invalid items are answered at once, 400.
        refused = await post(client, [bad_id, rpc(None, "notifications/x")], headers)
        assert refused.status_code == 400
        assert [reply["id"] for reply in refused.json()] == [None]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "fault",
    [{"jsonrpc": "1.0"}, {"params": True}, {"result": {}}, {"jsonrpc": "2\u0000.0"}],
    ids=["version", "params", "result", "nul"],
)
async def test_a_2026_request_breaking_the_envelope_is_400_invalid_request(
    fault: dict[str, Any],
) -> None:
    body, headers = modern(9, "tools/list")
    async with in_process(make_app()) as client:
        refused = await post(client, {**body, **fault}, headers)
        assert refused.status_code == 400
        assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST
        assert refused.json()["id"] == 9


@pytest.mark.anyio
async def test_progress_before_the_result_makes_an_sse_answer() -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        params = {**call("progress"), "_meta": {"progressToken": "tok"}}
        answer = await post(
            client, rpc(7, "tools/call", params), session_headers(session_id)
        )
        assert answer.status_code == 200
        assert answer.headers["mcp-session-id"] == session_id
        messages = sse_messages(answer)
        assert messages[:2] == [
            rpc(
                None,
                "notifications/progress",
                {
                    "progressToken": "tok",
                    "progress": 1,
                    "total": 2,
                    "message": "half way",
                },
            ),
            rpc(
                None,
                "notifications/progress",
                {"progressToken": "tok", "progress": 2, "total": 2},
            ),
        ]
        assert len(messages) == 3
        assert messages[2]["id"] == 7
        assert result_text(messages[2]) == "done"
        # Without a progress token nothing is sent before the result: JSON.
        plain = await post(
            client, rpc(8, "tools/call", call("progress")), session_headers(session_id)
        )
        assert plain.headers["content-type"] == "application/json"
        assert result_text(plain.json()) == "done"


# --- legacy streams (over uvicorn) ------------------------------------------------


@pytest.mark.anyio
async def test_the_get_stream_carries_messages_sent_outside_any_request() -> None:
    probe = Probe()
    app = make_app(probe)
    async with served(app) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        session_id = await open_session(client, url=url)
        headers = session_headers(session_id)
        get_headers = {"accept": "text/event-stream", **headers}
        async with client.stream("GET", url, headers=get_headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["mcp-session-id"] == session_id
            events = sse_events(stream)

            second = await client.get(url, headers=get_headers)
            assert second.status_code == 409
            assert "already has a standalone SSE stream" in error_of(second)["message"]

            # A handler's background task notifies right after its reply.
            answer = await post(
                client, rpc(1, "tools/call", call("background")), headers, url
            )
            assert result_text(answer.json()) == "spawned"
            message = await anext(events)
            assert message == rpc(None, "notifications/tools/list_changed")

            # The server notifies on its own, outside any request.
            state = app.sessions.get(session_id)
            assert state is not None
            await state.connection.notify("notifications/resources/list_changed", None)
            message = await anext(events)
            assert message == rpc(None, "notifications/resources/list_changed")

        # Closed by the client: the stream can be opened again (once the
        # server has seen it go).
        async def reopen() -> int:
            while True:
                async with client.stream("GET", url, headers=get_headers) as stream:
                    if stream.status_code != 409:
                        return stream.status_code
                await asyncio.sleep(0.01)

        with anyio.fail_after(LIMIT):
            assert await reopen() == 200


@pytest.mark.anyio
async def test_delete_ends_the_open_streams_of_a_session() -> None:
    probe = Probe()
    async with (
        served(make_app(probe)) as url,
        httpx.AsyncClient(timeout=LIMIT) as client,
    ):
        session_id = await open_session(client, url=url)
        headers = session_headers(session_id)
        get_headers = {"accept": "text/event-stream", **headers}
        async with client.stream("GET", url, headers=get_headers) as stream:
            assert stream.status_code == 200

            body = rpc(1, "tools/call", call("block"))
            pending = asyncio.get_running_loop().create_task(
                post(client, body, headers, url)
            )
            with anyio.fail_after(LIMIT):
                await probe.started.wait()
            deleted = await client.delete(url, headers=headers)
            assert deleted.status_code == 200
            # The GET stream ends, as a complete response.
            assert [message async for message in sse_events(stream)] == []
            # The pending request is answered: its session is gone.
            with anyio.fail_after(LIMIT):
                refused = await pending
            assert refused.status_code == 404
            assert "Session not found" in error_of(refused)["message"]
        with anyio.fail_after(LIMIT):
            await probe.cancelled.wait()


@pytest.mark.anyio
async def test_a_server_to_client_request_rides_the_posts_stream() -> None:
    async with served(make_app()) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        session_id = await open_session(client, url=url, roots={})
        headers = session_headers(session_id)
        body = rpc(5, "tools/call", call("roots"))
        async with client.stream(
            "POST", url, json=body, headers={**BASE, **headers}
        ) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            asked = await anext(events)
            assert asked["method"] == "roots/list"
            roots = {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": roots}
            accepted = await post(client, answer, headers, url)
            assert accepted.status_code == 202
            final = await anext(events)
            assert final["id"] == 5
            assert result_text(final) == "file:///a,file:///b"
            assert [message async for message in events] == []


@pytest.mark.anyio
async def test_a_malformed_response_is_400_and_fails_the_request_it_answers() -> None:
    async with served(make_app()) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        session_id = await open_session(client, url=url, roots={})
        headers = session_headers(session_id)
        body = rpc(5, "tools/call", call("roots"))
        async with client.stream(
            "POST", url, json=body, headers={**BASE, **headers}
        ) as stream:
            events = sse_events(stream)
            asked = await anext(events)
            error = {"code": 1, "message": "no"}
            both = {"jsonrpc": "2.0", "id": asked["id"], "result": {}, "error": error}
            refused = await post(client, both, headers, url)
            assert refused.status_code == 400
            assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST
            assert refused.json()["id"] is None  # it names our request, not theirs
            with anyio.fail_after(LIMIT):
                final = await anext(events)
            assert final["id"] == 5
            assert result_text(final).startswith("no roots: malformed response")


@pytest.mark.anyio
async def test_a_legacy_request_outlives_its_clients_disconnection() -> None:
    probe = Probe()
    async with (
        served(make_app(probe)) as url,
        httpx.AsyncClient(timeout=LIMIT) as client,
    ):
        session_id = await open_session(client, url=url)
        headers = session_headers(session_id)
        body = json.dumps(rpc(1, "tools/call", call("block"))).encode()
        await hang_up_during(url, body, headers, probe)
        probe.release.set()
        with anyio.fail_after(LIMIT):
            await probe.finished.wait()
        assert not probe.cancelled.is_set()
        answer = await post(
            client, rpc(2, "tools/call", call("echo", message="on")), headers, url
        )
        assert result_text(answer.json()) == "on"


@pytest.mark.anyio
async def test_a_hung_up_legacy_post_does_not_hold_its_session() -> None:
    probe = Probe()
    app = make_app(probe, idle_timeout_s=IDLE)
    async with served(app) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        session_id = await open_session(client, url=url)
        body = json.dumps(rpc(1, "tools/call", call("block"))).encode()
        await hang_up_during(url, body, session_headers(session_id), probe)

        # Nothing holds the session now: it expires (any request sweeps), and
        # its end cancels what it still runs.
        async def expired() -> None:
            while session_id in app.sessions:
                await client.delete(url)  # 400 (no session id), after a sweep
                await asyncio.sleep(0.05)

        with anyio.fail_after(LIMIT):
            await expired()
            await probe.cancelled.wait()


@pytest.mark.anyio
async def test_a_request_id_in_flight_cannot_be_reused() -> None:
    probe = Probe()
    async with in_process(make_app(probe)) as client:
        session_id = await open_session(client)
        headers = session_headers(session_id)
        first = asyncio.get_running_loop().create_task(
            post(client, rpc(1, "tools/call", call("block")), headers)
        )
        with anyio.fail_after(LIMIT):
            await probe.started.wait()
        reused = await post(
            client, rpc(1, "tools/call", call("echo", message="2")), headers
        )
        assert reused.status_code == 400
        assert "already in flight" in error_of(reused)["message"]
        assert reused.json()["id"] == 1  # readable: answered with it
        probe.release.set()
        with anyio.fail_after(LIMIT):
            answer = await first
        assert answer.json()["id"] == 1
        assert result_text(answer.json()) == "released"
        # Answered: the id is free again.
        again = await post(
            client, rpc(1, "tools/call", call("echo", message="3")), headers
        )
        assert result_text(again.json()) == "3"


@pytest.mark.anyio
async def test_a_cancelled_legacy_request_ends_its_post_with_an_error() -> None:
    probe = Probe()
    async with in_process(make_app(probe)) as client:
        session_id = await open_session(client)
        headers = session_headers(session_id)
        pending = asyncio.get_running_loop().create_task(
            post(client, rpc(5, "tools/call", call("block")), headers)
        )
        with anyio.fail_after(LIMIT):
            await probe.started.wait()
        cancel = rpc(None, "notifications/cancelled", {"requestId": 5})
        assert (await post(client, cancel, headers)).status_code == 202
        with anyio.fail_after(LIMIT):
            answer = await pending
            await probe.cancelled.wait()
        assert answer.json()["id"] == 5
        assert error_of(answer)["code"] == -32800
        assert not probe.finished.is_set()


async def hang_up_during(
    url: str, body: bytes, headers: dict[str, str], probe: Probe
) -> None:
    """POST `body` on a raw connection, and close it once the handler runs."""
    address = httpx.URL(url)
    port = address.port
    assert port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [
        f"POST {address.path} HTTP/1.1",
        f"host: 127.0.0.1:{port}",
        f"content-length: {len(body)}",
        *(f"{name}: {value}" for name, value in {**BASE, **headers}.items()),
    ]
    writer.write("\r\n".join(lines).encode() + b"\r\n\r\n" + body)
    await writer.drain()
    with anyio.fail_after(LIMIT):
        await probe.started.wait()
    writer.close()
    await writer.wait_closed()
    del reader


# --- 2026-07-28 requests ----------------------------------------------------------


@pytest.mark.anyio
async def test_a_modern_request_is_answered_without_a_session() -> None:
    async with in_process(make_app()) as client:
        body, headers = modern("a", "tools/call", call("echo", message="hé"))
        answer = await post(client, body, headers | {"mcp-session-id": "ignored"})
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in answer.headers
        message = answer.json()
        assert message["id"] == "a"
        assert result_text(message) == "hé"
        assert message["result"]["resultType"] == "complete"


@pytest.mark.anyio
async def test_a_modern_envelope_spelled_with_escapes_is_still_modern() -> None:
    # The era is told from the body's `_meta` even when its key is escaped
    # (the quick scan that spares legacy bodies a params decode must not
    # miss it), a session header notwithstanding.
    async with in_process(make_app()) as client:
        body, headers = modern("a", "tools/call", call("echo", message="hi"))
        raw = json.dumps(body).replace(
            '"io.modelcontextprotocol/protocolVersion"',
            '"io.modelcontextprotocol\\/protocol\\u0056ersion"',
        )
        answer = await client.post(
            "/mcp",
            content=raw.encode(),
            headers={**BASE, **headers, "mcp-session-id": "ignored"},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["resultType"] == "complete"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("change", "mentioned"),
    [
        ({"mcp-method": None}, "Mcp-Method header is missing"),
        ({"mcp-method": "tools/list"}, "Mcp-Method"),
        ({"mcp-name": None}, "Mcp-Name header is missing"),
        ({"mcp-name": "other"}, "Mcp-Name"),
        ({"mcp-name": "=?base64?not base64?="}, "malformed"),
        ({"mcp-protocol-version": None}, "MCP-Protocol-Version header is missing"),
        ({"mcp-protocol-version": LEGACY}, "MCP-Protocol-Version"),
    ],
)
async def test_modern_headers_must_match_the_body(
    change: dict[str, str | None], mentioned: str
) -> None:
    body, headers = modern(17, "tools/call", call("echo", message="x"))
    for name, value in change.items():
        headers.pop(name)
        if value is not None:
            headers[name] = value
    async with in_process(make_app()) as client:
        refused = await post(client, body, headers)
        assert refused.status_code == 400
        assert refused.json()["id"] == 17
        error = error_of(refused)
        assert error["code"] == HEADER_MISMATCH
        assert mentioned in error["message"]


@pytest.mark.anyio
async def test_an_encoded_mcp_name_is_decoded_before_the_comparison() -> None:
    body, headers = modern(1, "tools/call", call("echo", message="x"))
    headers["mcp-name"] = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    async with in_process(make_app()) as client:
        answer = await post(client, body, headers)
        assert answer.status_code == 200
        assert result_text(answer.json()) == "x"


@pytest.mark.anyio
async def test_an_unsupported_modern_version_is_400_with_the_supported_ones() -> None:
    body, headers = modern(1, "tools/list")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    headers["mcp-protocol-version"] = "2099-01-01"
    async with in_process(make_app()) as client:
        refused = await post(client, body, headers)
        assert refused.status_code == 400
        error = error_of(refused)
        assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
        assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


@pytest.mark.anyio
async def test_modern_errors_the_spec_gives_a_status() -> None:
    async with in_process(make_app()) as client:
        body, headers = modern(1, "no/such/method")
        unknown = await post(client, body, headers)
        assert unknown.status_code == 404
        assert error_of(unknown)["code"] == ErrorCode.METHOD_NOT_FOUND
        assert unknown.json()["id"] == 1
        body, headers = modern(2, "tools/call", {"name": 42})
        headers.pop("mcp-name", None)
        invalid = await post(client, body, headers)
        assert invalid.status_code == 400
        assert error_of(invalid)["code"] == ErrorCode.INVALID_PARAMS


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("region", "status"),
    [
        (None, 400),
        ("eu-west1", 400),
        ("us-west1", 200),
        ("=?base64?" + base64.b64encode(b"us-west1").decode() + "?=", 200),
    ],
)
async def test_mcp_param_headers_are_checked_against_the_arguments(
    region: str | None, status: int
) -> None:
    body, headers = modern(
        9, "tools/call", call("regional", region="us-west1", query="q")
    )
    if region is not None:
        headers["mcp-param-region"] = region
    async with in_process(make_app()) as client:
        answer = await post(client, body, headers)
        assert answer.status_code == status
        assert answer.json()["id"] == 9
        if status == 200:
            assert result_text(answer.json()) == "us-west1: q"
        else:
            error = error_of(answer)
            assert error["code"] == HEADER_MISMATCH
            assert "Mcp-Param-Region" in error["message"]


@pytest.mark.anyio
async def test_a_non_ascii_param_travels_base64_encoded() -> None:
    region = "Zürich ☃"
    body, headers = modern(9, "tools/call", call("regional", region=region, query="q"))
    encoded = base64.b64encode(region.encode()).decode()
    async with in_process(make_app()) as client:
        headers["mcp-param-region"] = f"=?base64?{encoded}?="
        answer = await post(client, body, headers)
        assert answer.status_code == 200
        assert result_text(answer.json()) == f"{region}: q"


@pytest.mark.anyio
async def test_modern_progress_makes_an_sse_answer() -> None:
    async with in_process(make_app()) as client:
        body, headers = modern(3, "tools/call", call("progress"))
        body["params"]["_meta"]["progressToken"] = 42
        answer = await post(client, body, headers)
        assert answer.status_code == 200
        messages = sse_messages(answer)
        assert [m.get("method") for m in messages] == [
            "notifications/progress",
            "notifications/progress",
            None,
        ]
        assert messages[0]["params"] == {
            "progressToken": 42,
            "progress": 1,
            "total": 2,
            "message": "half way",
        }
        assert messages[2]["id"] == 3
        assert result_text(messages[2]) == "done"


@pytest.mark.anyio
async def test_a_modern_notification_is_202() -> None:
    async with in_process(make_app()) as client:
        for method in ("notifications/cancelled", "notifications/unheard/of"):
            body, headers = modern(0, method, {"requestId": 1})
            del body["id"]
            accepted = await post(client, body, headers)
            assert accepted.status_code == 202
            assert accepted.content == b""


@pytest.mark.anyio
async def test_a_modern_request_is_cancelled_when_its_client_hangs_up() -> None:
    probe = Probe()
    async with served(make_app(probe)) as url:
        body, headers = modern(1, "tools/call", call("block"))
        await hang_up_during(url, json.dumps(body).encode(), headers, probe)
        with anyio.fail_after(LIMIT):
            await probe.cancelled.wait()
        assert not probe.finished.is_set()


@pytest.mark.anyio
async def test_a_modern_only_server_has_no_get_stream_nor_sessions() -> None:
    app = McpHttpApp(tools_session(Probe(), legacy=False))
    async with in_process(app) as client:
        get = await client.get("/mcp", headers={"accept": "text/event-stream"})
        assert get.status_code == 405
        assert get.headers["allow"] == "POST"
        delete = await client.delete("/mcp", headers={"mcp-session-id": "abc"})
        assert delete.status_code == 405
        assert delete.headers["allow"] == "POST"
        refused = await post(client, initialize(7))
        assert refused.status_code == 400
        assert "mcp-session-id" not in refused.headers
        # It names the versions it serves, so a legacy client can tell why.
        assert refused.json()["id"] == 7
        assert error_of(refused)["code"] == UNSUPPORTED_PROTOCOL_VERSION
        assert error_of(refused)["data"] == {"supported": [MODERN], "requested": LEGACY}
        body, headers = modern(1, "tools/call", call("echo", message="m"))
        assert result_text((await post(client, body, headers)).json()) == "m"


@pytest.mark.anyio
async def test_a_dual_era_server_refuses_a_get_at_a_modern_version() -> None:
    async with in_process(make_app()) as client:
        get = await client.get(
            "/mcp",
            headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN},
        )
        assert get.status_code == 405
        assert get.headers["allow"] == "GET, POST, DELETE"


# --- load -------------------------------------------------------------------------

CLIENTS = 16
REQUESTS = 1_000
IN_FLIGHT = 2
"""Requests each client keeps in flight at once (on two connections)."""


@pytest.mark.anyio
@pytest.mark.timeout(240)
async def test_sixteen_clients_times_a_thousand_requests_none_lost() -> None:
    """16 legacy sessions over uvicorn, each its own httpx client keeping two
    requests in flight: every response comes back to its own request."""
    answered = dict.fromkeys(range(CLIENTS), 0)

    async def one_client(url: str, index: int) -> None:
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            session_id = await open_session(client, url=url)
            headers = session_headers(session_id)
            ids = iter(range(REQUESTS))

            async def worker() -> None:
                for request_id in ids:
                    message = f"{index}:{request_id}"
                    body = rpc(request_id, "tools/call", call("echo", message=message))
                    response = await post(client, body, headers, url)
                    assert response.status_code == 200, response.text
                    # A slow answer (past PRIME_AFTER_S) may come as SSE.
                    if response.headers["content-type"] == "text/event-stream":
                        [reply] = sse_messages(response)
                    else:
                        reply = response.json()
                    assert reply["id"] == request_id
                    assert result_text(reply) == message
                    answered[index] += 1

            async with anyio.create_task_group() as workers:
                for _ in range(IN_FLIGHT):
                    workers.start_soon(worker)
            deleted = await client.delete(url, headers=headers)
            assert deleted.status_code == 200

    app = McpHttpApp(echo_session(LEGACY))
    async with served(app, LIMIT * 20) as url:
        async with anyio.create_task_group() as clients:
            for index in range(CLIENTS):
                clients.start_soon(one_client, url, index)
        assert len(app.sessions) == 0
    assert answered == dict.fromkeys(range(CLIENTS), REQUESTS)


@pytest.mark.anyio
async def test_http_app_serves_the_legacy_sse_endpoints_beside_mcp() -> None:
    app = http_app(tools_session(Probe()))
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
        no_session = await client.post("/messages", json=rpc(1, "ping"))
        assert no_session.status_code == 400  # the HTTP+SSE endpoint answers
        answer = await client.post("/mcp", json=initialize(), headers=BASE)
        assert answer.status_code == 200
        assert is_valid_session_id(answer.headers["mcp-session-id"])
    modern_only = http_app(tools_session(Probe(), legacy=False))
    assert isinstance(modern_only, McpHttpApp)


class Listening2026(Tools2026):
    """Adds `subscriptions/listen`: acknowledge, announce a tools change, and
    hold the stream open until the probe is released."""

    async def subscriptions_listen(
        self, params: v2026_07_28.SubscriptionsListenRequestParams
    ) -> v2026_07_28.SubscriptionsListenResult:
        request = current_request()
        tag = {"io.modelcontextprotocol/subscriptionId": request.request_id}
        wanted = msgspec.to_builtins(params.notifications)
        await request.connection.notify(
            "notifications/subscriptions/acknowledged",
            {"notifications": wanted, "_meta": tag},
        )
        await request.connection.notify(
            "notifications/tools/list_changed", {"_meta": tag}
        )
        await self.probe.block()
        return v2026_07_28.SubscriptionsListenResult(
            meta=v2026_07_28.SubscriptionsListenResultMetaObject(
                subscription_id=request.request_id
            )
        )


@pytest.mark.anyio
async def test_subscriptions_listen_is_a_long_lived_response_stream() -> None:
    probe = Probe()
    session = ServerSession([Listening2026(probe)], name="listen", version="1")
    app = McpHttpApp(session)
    async with served(app) as url, httpx.AsyncClient() as client:
        body, headers = modern(
            9, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
        )
        async with client.stream("POST", url, json=body, headers=headers) as answer:
            events = sse_events(answer)
            acknowledged = await anext(events)
            changed = await anext(events)
            # Both arrived while the request is still open.
            assert not probe.finished.is_set()
            probe.release.set()
            final = await anext(events)
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["_meta"] == {
        "io.modelcontextprotocol/subscriptionId": 9
    }
    assert changed["method"] == "notifications/tools/list_changed"
    assert final["id"] == 9
    assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9


# --- 2026 envelope refusals (conformance server-stateless) ---------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "meta",
    [
        None,
        {"io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": MODERN},
    ],
)
async def test_an_incomplete_envelope_is_400_invalid_params_with_the_id(
    meta: dict[str, Any] | None,
) -> None:
    params = {} if meta is None else {"_meta": meta}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "server/discover"}
    async with in_process(make_app()) as client:
        response = await post(client, rpc(101, "server/discover", params), headers)
        assert response.status_code == 400
        assert response.json()["id"] == 101
        assert error_of(response)["code"] == ErrorCode.INVALID_PARAMS


@pytest.mark.anyio
async def test_header_mismatch_comes_before_an_unsupported_version() -> None:
    body, headers = modern(302, "server/discover")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v9"
    async with in_process(make_app()) as client:
        mismatch = await post(client, body, headers)
        assert mismatch.status_code == 400
        assert error_of(mismatch)["code"] == -32020
        unsupported = await post(
            client, {**body, "id": 301}, {**headers, "mcp-protocol-version": "v9"}
        )
        assert unsupported.status_code == 400
        assert unsupported.json()["id"] == 301
        error = error_of(unsupported)
        assert error["code"] == -32022
        assert error["data"]["requested"] == "v9"


@pytest.mark.anyio
async def test_a_2026_ping_is_404_method_not_found() -> None:
    body, headers = modern(500, "ping")
    async with in_process(make_app()) as client:
        response = await post(client, body, headers)
        assert response.status_code == 404
        assert response.json()["id"] == 500
        assert error_of(response)["code"] == ErrorCode.METHOD_NOT_FOUND


# --- hardening: what no body may do ----------------------------------------------

DEEP = b"[" * 1000 + b"]" * 1000
"""JSON nested 1,000 levels (deeper than msgspec decodes in a server's stack)."""


def _raw(message: dict[str, Any], old: bytes = b"", new: bytes = b"") -> bytes:
    return json.dumps(message).encode().replace(old, new)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "code", "reply_id"),
    [
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list\xff"}',
            ErrorCode.INVALID_REQUEST,
            1,
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\xff',
            ErrorCode.PARSE_ERROR,
            None,
        ),
        (DEEP, ErrorCode.INVALID_REQUEST, None),
        (
            _raw(rpc(1, "tools/list", {"deep": 0}), b"0", DEEP),
            ErrorCode.INVALID_REQUEST,
            1,
        ),
    ],
    ids=["utf8-method", "utf8-trailing", "deep", "deep-params"],
)
async def test_a_body_that_is_no_message_is_400_as_the_engine_classifies_it(
    body: bytes, code: int, reply_id: int | None
) -> None:
    """-32700 only for what is no JSON; JSON breaking the envelope (invalid
    UTF-8 in its members, nesting too deep) is -32600 with the id when one is
    usable, as over stdio: before a session, in one, and as a 2026 request."""
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        for headers in ({}, session_headers(session_id), modern(1, "tools/list")[1]):
            refused = await client.post("/mcp", content=body, headers=BASE | headers)
            assert refused.status_code == 400
            assert error_of(refused)["code"] == code
            assert refused.json()["id"] == reply_id


@pytest.mark.anyio
@pytest.mark.parametrize("value", [b'"\xc3\x28"', b"1e999"], ids=["utf8", "1e999"])
async def test_params_that_cannot_be_decoded_are_invalid_params_with_the_id(
    value: bytes,
) -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        legacy = _raw(rpc(1, "tools/call", call("echo", message="hi")), b'"hi"', value)
        answer = await client.post(
            "/mcp", content=legacy, headers=BASE | session_headers(session_id)
        )
        assert answer.status_code == 200  # a legacy session's answer
        assert error_of(answer)["code"] == ErrorCode.INVALID_PARAMS
        assert answer.json()["id"] == 1
        message, headers = modern(2, "tools/call", call("echo", message="hi"))
        body = _raw(message, b'"hi"', value)
        refused = await client.post("/mcp", content=body, headers=BASE | headers)
        assert refused.status_code == 400  # 2026: the spec's status for -32602
        assert error_of(refused)["code"] == ErrorCode.INVALID_PARAMS
        assert refused.json()["id"] == 2


BAD_IDS: list[Any] = [[1], {"a": 1}, 1.5, True, False, None]


@pytest.mark.anyio
@pytest.mark.parametrize("bad_id", BAD_IDS, ids=repr)
async def test_a_modern_request_with_a_bad_id_is_400_and_never_runs(
    bad_id: Any,
) -> None:
    probe = Probe()
    async with in_process(make_app(probe)) as client:
        body, headers = modern(1, "tools/call", call("block"))
        body["id"] = bad_id
        refused = await post(client, body, headers)
        assert refused.status_code == 400
        assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST
        assert refused.json()["id"] is None
        await asyncio.sleep(0)
        assert not probe.started.is_set()


@pytest.mark.anyio
@pytest.mark.parametrize("bad_id", BAD_IDS, ids=repr)
async def test_a_legacy_request_with_a_bad_id_is_400_and_never_runs(
    bad_id: Any,
) -> None:
    probe = Probe()
    async with in_process(make_app(probe)) as client:
        session_id = await open_session(client)
        body = rpc(1, "tools/call", call("block"))
        body["id"] = bad_id
        refused = await post(client, body, session_headers(session_id))
        assert refused.status_code == 400
        assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST
        assert refused.json()["id"] is None
        await asyncio.sleep(0)
        assert not probe.started.is_set()
        # The session is unharmed.
        answer = await post(
            client,
            rpc(2, "tools/call", call("echo", message="ok")),
            session_headers(session_id),
        )
        assert result_text(answer.json()) == "ok"


class CountingApp(McpHttpApp):
    """`McpHttpApp` counting the HTTP requests it has finished with."""

    finished = 0
    _changed: anyio.Event | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if scope["type"] == "http":
                self.finished += 1
                if self._changed is not None:
                    self._changed.set()

    async def until_finished(self, count: int) -> None:
        with anyio.fail_after(LIMIT):
            while self.finished < count:
                self._changed = anyio.Event()
                await self._changed.wait()


@pytest.mark.anyio
async def test_the_id_of_a_hung_up_request_still_running_cannot_be_reused() -> None:
    probe = Probe()
    app = CountingApp(tools_session(probe))
    async with served(app) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        session_id = await open_session(client, url=url)
        headers = session_headers(session_id)
        body = json.dumps(rpc(1, "tools/call", call("block"))).encode()
        await hang_up_during(url, body, headers, probe)
        await app.until_finished(3)  # initialize, initialized, the hung-up POST
        # The old request still runs (disconnection is not cancellation): a
        # new one under its id would get its answer, so it is refused.
        new = rpc(1, "tools/call", call("echo", message="NEW REQUEST"))
        with anyio.fail_after(LIMIT):
            reused = await post(client, new, headers, url)
        assert reused.status_code == 400
        assert error_of(reused)["code"] == ErrorCode.INVALID_REQUEST
        assert "already in flight" in error_of(reused)["message"]
        probe.release.set()
        with anyio.fail_after(LIMIT):
            await probe.finished.wait()
        # Answered (to no one): the id is free, and names the new request.
        with anyio.fail_after(LIMIT):
            while True:
                again = await post(client, new, headers, url)
                if again.status_code == 200:
                    break
                assert "already in flight" in error_of(again)["message"]
                await asyncio.sleep(0.01)
        assert result_text(again.json()) == "NEW REQUEST"


async def post_slowly(url: str, *, trickle: bool) -> bytes:
    """POST a body that stalls after its first bytes (or trickles a byte at a
    time) on a raw connection; all the server answers, until it closes."""
    address = httpx.URL(url)
    port = address.port
    assert port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = [
        f"POST {address.raw_path.decode()} HTTP/1.1",
        f"host: 127.0.0.1:{port}",
        "content-length: 1000",
        *(f"{name}: {value}" for name, value in BASE.items()),
    ]
    writer.write("\r\n".join(head).encode() + b'\r\n\r\n{"jsonrpc"')

    async def dribble() -> None:
        try:
            while True:
                await asyncio.sleep(0.05)
                writer.write(b" ")
                await writer.drain()
        except OSError:
            pass

    dribbling = asyncio.get_running_loop().create_task(dribble())
    if not trickle:
        dribbling.cancel()
    try:
        with anyio.fail_after(LIMIT):
            return await reader.read()  # to the end: the server closes
    finally:
        dribbling.cancel()
        writer.close()


@pytest.mark.anyio
@pytest.mark.parametrize("trickle", [False, True], ids=["stalled", "trickling"])
async def test_a_body_slower_than_the_timeout_is_408_and_the_connection_closes(
    trickle: bool,
) -> None:
    local = SecurityPolicy.for_bind("127.0.0.1", 0)
    policy = dataclasses.replace(local, body_timeout_s=0.5)
    async with served(make_app(policy=policy)) as url:
        answer = await post_slowly(url, trickle=trickle)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in head.lower()
    error = json.loads(body)["error"]
    assert error["code"] == ErrorCode.INVALID_REQUEST
    assert "0.5" in error["message"]


@pytest.mark.anyio
async def test_a_message_neither_request_nor_response_is_400() -> None:
    async with in_process(make_app()) as client:
        session_id = await open_session(client)
        for body in (
            {"jsonrpc": "2.0", "id": 5},
            {"jsonrpc": "2.0", "mnthod": "tools/call", "id": 5},
        ):
            refused = await post(client, body, session_headers(session_id))
            assert refused.status_code == 400
            assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST


@pytest.mark.anyio
async def test_an_initialize_notification_is_400_and_opens_no_session() -> None:
    app = make_app()
    async with in_process(app) as client:
        body = initialize()
        del body["id"]
        refused = await post(client, body)
        assert refused.status_code == 400
        assert error_of(refused)["code"] == ErrorCode.INVALID_REQUEST
        assert "mcp-session-id" not in refused.headers
        assert len(app.sessions) == 0

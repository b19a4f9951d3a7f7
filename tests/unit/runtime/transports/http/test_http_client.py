"""`HttpClientTransport` and `connect_http`: our client over Streamable HTTP.

Two kinds of server:

- our own `McpHttpApp` serving `echo_session` (plus a `slow` tool reporting
  progress, and 2026 tools with `x-mcp-header` parameters), run by uvicorn in
  a thread on a free port; every HTTP request the client makes is recorded
  with an httpx event hook;
- `httpx.MockTransport` handlers (`http_mocks`), for answers our server never
  gives (HTTP errors with odd bodies, streams that end early).

Resumed SSE streams are tested in test_client_sse.py, the HTTP+SSE fallback
seam in test_fallback.py, the message reading and the tool memory without
any HTTP in test_client_messages.py and test_client_tools.py.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import msgspec
import pytest
import uvicorn

import mcp_specgen_types
from mcp_specgen_runtime.codec.wire import convert
from mcp_specgen_runtime.errors import (
    ErrorCode,
    NegotiationError,
    RequestTimeoutError,
    RpcError,
    TransportError,
)
from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_runtime.jsonrpc.dispatch import is_legacy, package_in
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.http.client import (
    HttpClientTransport,
    SessionExpiredError,
    connect_http,
)
from mcp_specgen_runtime.transports.http.legacy_sse import LegacySseApp
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from mcp_specgen_types import v2025_11_25, v2026_07_28
from tests.unit.runtime.session_programs.echo_session import (
    HANDLERS,
    NAME,
    Echo1125,
    Echo2026,
    session,
)
from tests.unit.runtime.transports.http.http_mocks import (
    answer_of,
    mock_client,
    mocked,
    request,
)

LIMIT = 20.0
"""Seconds any one test may take."""
CLIENT = {"name": "http-client-tests", "version": "0.0.1"}
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
"""The modern revision the test server speaks (its handlers are written in it)."""
NEWEST_MODERN = [
    v
    for v in mcp_specgen_types.KNOWN_VERSIONS
    if v != "draft" and not is_legacy(package_in(mcp_specgen_types.MODULES, v))
][-1]
"""The revision a client offering every dated one probes first (the newest
generated: MODERN today, a later one once pinned)."""
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------
# The server: echo_session plus a few tools
# --------------------------------------------------------------------------

CANCELLED = threading.Event()
"""Set when a `slow` tool call is cancelled on the server."""

REGION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "text": {"type": "string"},
    },
}
BAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "object", "x-mcp-header": "N"}},
}
SCHEMAS = {"where": REGION_SCHEMA, "bad": BAD_SCHEMA}


async def slow(arguments: dict[str, Any] | Any) -> str:
    """Report `steps` progress notifications, then wait `delay` seconds."""
    given = arguments if isinstance(arguments, dict) else {}
    steps = int(given.get("steps", 0))
    for step in range(1, steps + 1):
        await current_request().report_progress(step, steps, f"step {step}")
    try:
        await anyio.sleep(float(given.get("delay", 0)))
    except anyio.get_cancelled_exc_class():
        CANCELLED.set()
        raise
    return f"done after {steps} steps"


class Tools1125(Echo1125):
    async def tools_list(
        self, params: v2025_11_25.PaginatedRequestParams
    ) -> v2025_11_25.ListToolsResult:
        listed = await super().tools_list(params)
        schema = convert({"type": "object"}, v2025_11_25.ToolInputSchema)
        extra = v2025_11_25.Tool(name="slow", input_schema=schema)
        return v2025_11_25.ListToolsResult(tools=[*listed.tools, extra])

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        if params.name != "slow":
            return await super().tools_call(params)
        text = await slow(params.arguments)
        return v2025_11_25.CallToolResult(content=[v2025_11_25.TextContent(text=text)])


class Tools2026(Echo2026):
    async def tools_list(
        self, params: v2026_07_28.PaginatedRequestParams
    ) -> v2026_07_28.ListToolsResult:
        listed = await super().tools_list(params)
        tools = [*listed.tools]
        for name, schema in [("slow", {"type": "object"}), *SCHEMAS.items()]:
            converted = convert(schema, v2026_07_28.ToolInputSchema)
            tools.append(v2026_07_28.Tool(name=name, input_schema=converted))
        return v2026_07_28.ListToolsResult(tools=tools, cache_scope="public", ttl_ms=0)

    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        given = params.arguments if isinstance(params.arguments, dict) else {}
        if params.name == "slow":
            text = await slow(given)
        elif params.name == "where":
            text = f"{given.get('text')} in {given.get('region')}"
        else:
            return await super().tools_call(params)
        return v2026_07_28.CallToolResult(
            content=[v2026_07_28.TextContent(text=text)], is_error=False
        )


def server_session(*versions: str) -> ServerSession:
    """echo_session's revisions, with the extra tools at 2025-11-25 and 2026."""
    chosen = versions or ("2025-06-18", "2025-11-25", MODERN)
    classes = {**HANDLERS, "2025-11-25": Tools1125, MODERN: Tools2026}
    return ServerSession(
        [classes[version]() for version in chosen], name=NAME, version="1.0.0"
    )


@dataclass
class Served:
    """A running server: its app and URL."""

    app: McpHttpApp
    url: str


@contextmanager
def serving(app: McpHttpApp) -> Iterator[Served]:
    """Run `app` with uvicorn in a thread on a free loopback port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="error", ws="none", lifespan="on", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "no server"
        time.sleep(0.01)
    try:
        yield Served(app, f"http://127.0.0.1:{port}/mcp")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def served() -> Iterator[Served]:
    """The default server: 2025-06-18, 2025-11-25 and 2026-07-28."""
    CANCELLED.clear()
    app = McpHttpApp(server_session(), tool_input_schema=SCHEMAS.get)
    with serving(app) as running:
        yield running


# --------------------------------------------------------------------------
# Recording what the client sends
# --------------------------------------------------------------------------


@dataclass
class Sent:
    """One HTTP request the client made."""

    method: str
    headers: dict[str, str]
    body: Any

    @property
    def rpc_method(self) -> str | None:
        return self.body.get("method") if isinstance(self.body, dict) else None


@dataclass
class Recorder:
    """An httpx client recording every request it sends."""

    sent: list[Sent] = field(default_factory=list[Sent])

    async def hook(self, request: httpx.Request) -> None:
        body = msgspec.json.decode(request.content) if request.content else None
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.sent.append(Sent(request.method, headers, body))

    def client(self, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(event_hooks={"request": [self.hook]}, **options)

    def posts(self, rpc_method: str) -> list[Sent]:
        return [
            s for s in self.sent if s.method == "POST" and s.rpc_method == rpc_method
        ]

    def methods(self) -> list[str]:
        return [s.method for s in self.sent]


@asynccontextmanager
async def connected(
    url: str, recorder: Recorder | None = None, **options: Any
) -> AsyncIterator[ClientSession]:
    """`connect_http` with a recording client."""
    recorder = recorder or Recorder()
    async with (
        recorder.client(timeout=10) as client,
        connect_http(url, **CLIENT, http_client=client, **options) as session,
    ):
        yield session


def transport_of(session: ClientSession) -> HttpClientTransport:
    transport = session.connection.transport
    assert isinstance(transport, HttpClientTransport)
    return transport


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


class Progress1125(v2025_11_25.ClientHandlers):
    """Records progress notifications."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str | None]] = []

    async def notifications_progress(
        self, params: v2025_11_25.ProgressNotificationParams
    ) -> None:
        message = params.message if isinstance(params.message, str) else None
        self.seen.append((params.progress, message))


class Progress2026(v2026_07_28.ClientHandlers):
    """Records progress notifications."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str | None]] = []

    async def notifications_progress(
        self, params: v2026_07_28.ProgressNotificationParams
    ) -> None:
        message = params.message if isinstance(params.message, str) else None
        self.seen.append((params.progress, message))


# --------------------------------------------------------------------------
# 1. Negotiation in both eras against our server
# --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("version", LEGACY)
async def test_legacy_session_id_and_protocol_version_headers(version: str) -> None:
    """initialize goes bare; every later request carries the session id and
    the negotiated version; the GET stream opens; closing sends DELETE."""
    recorder = Recorder()
    app = McpHttpApp(server_session(version))
    with serving(app) as server, anyio.fail_after(LIMIT):
        async with connected(server.url, recorder, versions=[version]) as session:
            transport = transport_of(session)
            assert session.protocol_version == version
            assert session.era == "legacy"
            assert session.server_info.name == NAME
            session_id = transport.session_id
            assert session_id is not None and session_id in app.sessions
            assert transport.protocol_version == version
            client = session.package.Client(session)
            listed = await client.list_tools()
            assert listed.tools[0].name == "echo"
            echoed = await client.call_tool(name="echo", arguments={"message": "hé"})
            assert texts(echoed) == ["hé"]
            for _ in range(100):  # the GET stream opens in the background
                if "GET" in recorder.methods():
                    break
                await anyio.sleep(0.02)
        assert session_id not in app.sessions

    (initialize,) = recorder.posts("initialize")
    assert SESSION_HEADER not in initialize.headers
    assert VERSION_HEADER not in initialize.headers
    assert initialize.headers["accept"] == "application/json, text/event-stream"
    assert initialize.headers["content-type"] == "application/json"
    later = [s for s in recorder.sent if s is not initialize]
    assert [s.method for s in later][-1] == "DELETE"
    assert "GET" in [s.method for s in later]
    for sent in later:
        assert sent.headers[SESSION_HEADER] == session_id, sent
        assert sent.headers[VERSION_HEADER] == version, sent
    get = next(s for s in later if s.method == "GET")
    assert get.headers["accept"] == "text/event-stream"
    assert recorder.posts("server/discover") == []  # no modern version allowed


@pytest.mark.anyio
async def test_the_discover_probe_falls_back_to_initialize_on_a_legacy_server() -> None:
    """A legacy-only server answers the discover POST with 400 and a plain
    JSON-RPC error: the session falls back to initialize."""
    recorder = Recorder()
    app = McpHttpApp(server_session("2025-06-18", "2025-11-25"))
    with serving(app) as server, anyio.fail_after(LIMIT):
        async with connected(server.url, recorder) as session:
            assert session.protocol_version == "2025-11-25"
            assert transport_of(session).session_id is not None
    assert [s.rpc_method for s in recorder.sent if s.method == "POST"][:3] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
    ]


async def lenient_legacy(request: httpx.Request) -> httpx.Response:
    """A 2025-11-25 server answering any unknown request with an empty result
    (as the official conformance suite's 2025 mocks do)."""
    if request.method != "POST":
        return httpx.Response(405)
    body = msgspec.json.decode(request.content)
    if "id" not in body:
        return httpx.Response(202)
    result: dict[str, Any] = {}
    if body["method"] == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "lenient", "version": "1"},
        }
    return httpx.Response(
        200, json={"jsonrpc": "2.0", "id": body["id"], "result": result}
    )


@pytest.mark.anyio
async def test_a_discover_answered_with_an_empty_result_falls_back() -> None:
    with anyio.fail_after(LIMIT):
        async with (
            mock_client(lenient_legacy) as client,
            connect_http("http://mcp.test/mcp", **CLIENT, http_client=client) as s,
        ):
            assert (s.protocol_version, s.era) == ("2025-11-25", "legacy")


@pytest.mark.anyio
async def test_modern_negotiation_and_calls_carry_the_2026_headers(
    served: Served,
) -> None:
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(served.url, recorder) as session:
            transport = transport_of(session)
            assert session.protocol_version == MODERN
            assert session.era == "modern"
            assert session.server_info.name == NAME
            assert transport.session_id is None
            client = v2026_07_28.Client(session)
            listed = await client.list_tools()
            names = [tool.name for tool in listed.tools]
            assert names == ["echo", "slow", "where"]  # "bad" is dropped
            echoed = await client.call_tool(name="echo", arguments={"message": "hé"})
            assert texts(echoed) == ["hé"]
            assert echoed.result_type == "complete"
            # A typed client of another revision works the same.
            legacy = await v2025_11_25.Client(session).call_tool(
                name="echo", arguments={"message": "x"}
            )
            assert texts(legacy) == ["x"]
    assert recorder.methods() == ["POST"] * len(recorder.sent)  # no GET, no DELETE
    # The probe offers the client's newest revision; a server speaking an
    # older one refuses it (-32022) and the probe goes again at MODERN.
    probes = recorder.posts("server/discover")
    assert probes[0].headers[VERSION_HEADER] == NEWEST_MODERN
    assert probes[-1].headers[VERSION_HEADER] == MODERN
    assert len(probes) == (1 if NEWEST_MODERN == MODERN else 2)
    for sent in recorder.sent:
        assert SESSION_HEADER not in sent.headers
        assert sent.headers["mcp-method"] == sent.rpc_method
        if sent is not probes[0]:
            assert sent.headers[VERSION_HEADER] == MODERN
    calls = recorder.posts("tools/call")
    assert [c.headers["mcp-name"] for c in calls] == ["echo", "echo"]
    assert "mcp-name" not in recorder.posts("tools/list")[0].headers


@pytest.mark.anyio
async def test_mcp_param_headers_mirror_x_mcp_header_arguments(
    served: Served,
) -> None:
    """After tools/list, a call carries Mcp-Param-Region (base64 when needed)."""
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(served.url, recorder) as session:
            client = v2026_07_28.Client(session)
            await client.list_tools()
            result = await client.call_tool(
                name="where", arguments={"region": "us-west1", "text": "hi"}
            )
            assert texts(result) == ["hi in us-west1"]
            result = await client.call_tool(
                name="where", arguments={"region": "Zürich", "text": "hi"}
            )
            assert texts(result) == ["hi in Zürich"]
            result = await client.call_tool(name="where", arguments={"text": "hi"})
            assert texts(result) == ["hi in None"]
    calls = recorder.posts("tools/call")
    assert [c.headers.get("mcp-param-region") for c in calls] == [
        "us-west1",
        "=?base64?WsO8cmljaA==?=",
        None,
    ]


@pytest.mark.anyio
async def test_a_header_mismatch_lists_the_tools_and_retries_the_call(
    served: Served,
) -> None:
    """A call before any tools/list lacks Mcp-Param-Region: the server says
    -32020; the transport lists the tools itself and sends the call again."""
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(served.url, recorder) as session:
            result = await v2026_07_28.Client(session).call_tool(
                name="where", arguments={"region": "eu", "text": "hi"}
            )
            assert texts(result) == ["hi in eu"]
    methods = [s.rpc_method for s in recorder.sent]
    assert methods[-3:] == ["tools/call", "tools/list", "tools/call"]
    first, listing, retry = recorder.sent[-3:]
    assert "mcp-param-region" not in first.headers
    assert isinstance(listing.body["id"], str)
    assert listing.body["params"]["_meta"][
        "io.modelcontextprotocol/protocolVersion"
    ] == (MODERN)
    assert retry.headers["mcp-param-region"] == "eu"
    assert retry.body == first.body


# --------------------------------------------------------------------------
# 2. SSE answers: progress before the result
# --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_progress_notifications_arrive_before_the_result(
    served: Served, version: str
) -> None:
    handlers = [Progress1125(), Progress2026()]
    with anyio.fail_after(LIMIT):
        async with connected(
            served.url, versions=[version], handlers=handlers
        ) as session:
            package = session.package
            result = await session.request(
                "tools/call",
                {
                    "name": "slow",
                    "arguments": {"steps": 3},
                    "_meta": {"progressToken": "p1"},
                },
                package.METHODS["tools/call"].result,
            )
            assert texts(result) == ["done after 3 steps"]
    seen = handlers[0].seen + handlers[1].seen
    assert seen == [(1, "step 1"), (2, "step 2"), (3, "step 3")]


# --------------------------------------------------------------------------
# 3. Cancellation in both eras
# --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_a_timed_out_request_is_cancelled_on_the_server(
    served: Served, version: str
) -> None:
    """Legacy: notifications/cancelled is POSTed. 2026: the response stream is
    closed instead, nothing POSTed."""
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(served.url, recorder, versions=[version]) as session:
            package = session.package
            with pytest.raises(RequestTimeoutError):
                await session.request(
                    "tools/call",
                    {
                        "name": "slow",
                        "arguments": {"steps": 1, "delay": 30},
                        "_meta": {"progressToken": 7},
                    },
                    package.METHODS["tools/call"].result,
                    timeout=1.0,
                )
            for _ in range(200):
                if CANCELLED.is_set():
                    break
                await anyio.sleep(0.02)
            assert CANCELLED.is_set()
            echoed = await package.Client(session).call_tool(
                name="echo", arguments={"message": "still here"}
            )
            assert texts(echoed) == ["still here"]
    cancels = recorder.posts("notifications/cancelled")
    if version == MODERN:
        assert cancels == []
    else:
        (cancel,) = cancels
        (call,) = [
            c
            for c in recorder.posts("tools/call")
            if c.body["params"]["name"] == "slow"
        ]
        assert cancel.body["params"]["requestId"] == call.body["id"]


# --------------------------------------------------------------------------
# 4. Session expiry (404) and DELETE
# --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_deleted_session_raises_session_expired_until_renegotiated(
    served: Served,
) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(served.url, versions=["2025-11-25"]) as session:
            transport = transport_of(session)
            first = transport.session_id
            assert first is not None
            async with httpx.AsyncClient() as other:
                response = await other.delete(
                    served.url, headers={"Mcp-Session-Id": first}
                )
                assert response.status_code == 200
            client = v2025_11_25.Client(session)
            with pytest.raises(SessionExpiredError, match="404"):
                await client.list_tools()
            assert transport.expired
            with pytest.raises(SessionExpiredError):  # no POST until a new session
                await client.call_tool(name="echo", arguments={"message": "x"})
            assert issubclass(SessionExpiredError, TransportError)

            await session.negotiate()  # a new initialize
            assert transport.session_id not in (None, first)
            assert not transport.expired
            echoed = await client.call_tool(name="echo", arguments={"message": "x"})
            assert texts(echoed) == ["x"]


@pytest.mark.anyio
async def test_an_expired_session_is_reinitialized_when_asked() -> None:
    """reinitialize=True: initialize and initialized are replayed, the call
    goes through. Idle expiry needs no GET stream holding the session."""
    app = McpHttpApp(server_session("2025-11-25"), idle_timeout_s=0.3)
    recorder = Recorder()
    with serving(app) as server, anyio.fail_after(LIMIT):
        async with (
            recorder.client(timeout=10) as http,
            HttpClientTransport(
                server.url, http_client=http, reinitialize=True, standalone_stream=False
            ) as transport,
            ClientSession(transport, **CLIENT, versions=["2025-11-25"]) as session,
        ):
            first = transport.session_id
            client = v2025_11_25.Client(session)
            await client.list_tools()
            await anyio.sleep(0.6)
            echoed = await client.call_tool(name="echo", arguments={"message": "x"})
            assert texts(echoed) == ["x"]
            assert transport.session_id not in (None, first)
    posts = [s.rpc_method for s in recorder.sent if s.method == "POST"]
    assert posts == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",  # 404
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert recorder.methods()[-1] == "DELETE"


@pytest.mark.anyio
async def test_aclose_sends_delete_and_the_server_forgets_the_session(
    served: Served,
) -> None:
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with connected(served.url, recorder, versions=["2025-06-18"]) as session:
            session_id = transport_of(session).session_id
            assert session_id in served.app.sessions
        assert session_id not in served.app.sessions
        (delete,) = [s for s in recorder.sent if s.method == "DELETE"]
        assert delete.headers[SESSION_HEADER] == session_id
        assert delete.headers[VERSION_HEADER] == "2025-06-18"
        # The transport is closed for good.
        with pytest.raises(anyio.ClosedResourceError):
            await transport_of(session).send(b"{}")
        with pytest.raises(anyio.ClosedResourceError):
            await transport_of(session).receive()


# --------------------------------------------------------------------------
# 5. HTTP errors mapped to JSON-RPC errors
# --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_http_error_with_a_json_rpc_body_fails_that_request(
    served: Served,
) -> None:
    """An unsupported MCP-Protocol-Version gets 400 with -32022 (id null):
    the request fails with that error, the session goes on."""
    with anyio.fail_after(LIMIT):
        async with connected(served.url, versions=["2025-11-25"]) as session:
            transport = transport_of(session)
            transport.protocol_version = "1999-01-01"
            with pytest.raises(RpcError) as raised:
                await v2025_11_25.Client(session).list_tools()
            assert raised.value.code == -32022
            assert raised.value.data["requested"] == "1999-01-01"
            transport.protocol_version = "2025-11-25"
            assert (await v2025_11_25.Client(session).list_tools()).tools


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "content_type", "body", "code", "message"),
    [
        (500, "text/plain", b"boom", ErrorCode.INTERNAL_ERROR, "HTTP 500"),
        (503, None, b"", ErrorCode.INTERNAL_ERROR, "HTTP 503"),
        (400, "text/html", b"<p>no</p>", ErrorCode.INVALID_REQUEST, "HTTP 400"),
        (
            400,
            "application/json",
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"nope"}}',
            -32000,
            "nope",
        ),
        (
            403,
            "application/json",
            b'{"jsonrpc":"2.0","id":99,"error":{"code":-32001,"message":"no",'
            b'"data":{"x":1}}}',
            -32001,
            "no",
        ),
        (401, "application/json", b'{"error": "nope"}', ErrorCode.INVALID_REQUEST, ""),
    ],
)
async def test_http_error_answers_become_error_responses_for_the_request(
    status: int, content_type: str | None, body: bytes, code: int, message: str
) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": content_type} if content_type else {}
        return httpx.Response(status, headers=headers, content=body)

    async with mocked(handler) as transport:
        reply = await answer_of(transport, request(5))
    assert reply["id"] == 5
    assert reply["error"]["code"] == code
    assert message in reply["error"]["message"]
    if code in (ErrorCode.INTERNAL_ERROR, ErrorCode.INVALID_REQUEST):
        assert reply["error"]["data"] == {"status": status}
    if code == -32001:
        assert reply["error"]["data"] == {"x": 1}


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        (202, {}, b"", "202 Accepted answered a request"),
        (200, {"content-type": "text/plain"}, b"hi", "unexpected Content-Type"),
        (
            200,
            {"content-type": "text/event-stream"},
            b": nothing\n\nevent: message\ndata: \n\n",
            "ended the response stream",
        ),
    ],
)
async def test_a_request_without_a_usable_answer_fails_instead_of_hanging(
    status: int, headers: dict[str, str], body: bytes, expected: str
) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=headers, content=body)

    async with mocked(handler) as transport:
        reply = await answer_of(transport, request(1))
    assert reply["id"] == 1
    assert expected in reply["error"]["message"]


@pytest.mark.anyio
async def test_an_error_with_id_null_in_a_200_answer_goes_to_the_request() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "x"}},
        )

    async with mocked(handler) as transport:
        reply = await answer_of(transport, request(3))
    assert reply == {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "x"}}


@pytest.mark.anyio
async def test_an_unreachable_server_raises_transport_error() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with mocked(handler) as transport:
        with pytest.raises(TransportError, match=r"POST http://mcp\.test/mcp failed"):
            await transport.send(request(1))


# --------------------------------------------------------------------------
# 6. Other eras end to end (the fallback seam: test_fallback.py), failures
# --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_fallback_reaches_our_own_legacy_sse_app() -> None:
    """End to end: `LegacySseApp` answers the POSTs to /sse with 405, the
    fallback GETs /sse and negotiates over the HTTP+SSE transport."""
    app = LegacySseApp(session("2024-11-05", "2025-11-25"))
    recorder = Recorder()
    with serving(app) as server, anyio.fail_after(LIMIT):
        url = server.url.removesuffix("/mcp") + "/sse"
        async with connected(url, recorder) as s:
            assert s.protocol_version == "2025-11-25"
            echoed = await v2025_11_25.Client(s).call_tool(
                name="echo", arguments={"message": "via sse"}
            )
            assert texts(echoed) == ["via sse"]
    assert [(m.method, m.rpc_method) for m in recorder.sent[:3]] == [
        ("POST", "server/discover"),
        ("POST", "initialize"),
        ("GET", None),
    ]


@pytest.mark.anyio
async def test_a_failed_negotiation_leaves_no_task_group_behind() -> None:
    """NegotiationError comes out of connect_http as itself, and the caller's
    cancel scopes are intact afterwards."""
    app = McpHttpApp(server_session("2025-11-25"))
    with serving(app) as server, anyio.fail_after(LIMIT):
        with pytest.raises(NegotiationError):
            async with connected(server.url, versions=[MODERN]):
                pytest.fail("negotiated a version the server does not speak")
        await anyio.lowlevel.checkpoint()


@pytest.mark.anyio
async def test_a_legacy_client_and_a_modern_only_server_fail_clearly() -> None:
    """initialize gets 400 with -32022 naming the server's versions: a modern
    server, so no HTTP+SSE fallback, and the error says what it speaks."""
    with serving(McpHttpApp(server_session(MODERN))) as server, anyio.fail_after(LIMIT):
        with pytest.raises(NegotiationError, match="2026-07-28"):
            async with connected(server.url, versions=["2025-11-25"]):
                pytest.fail("negotiated a version the server does not speak")


@pytest.mark.anyio
async def test_a_404_method_not_found_in_a_session_is_no_expiry() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        if request.method != "POST":
            return httpx.Response(405)
        body = msgspec.json.decode(request.content)
        if body["method"] == "initialize":
            result = {"protocolVersion": "2025-11-25"}
            return httpx.Response(
                200,
                headers={"mcp-session-id": "s1"},
                json={"jsonrpc": "2.0", "id": body["id"], "result": result},
            )
        if request.headers.get("mcp-session-id") != "s1":
            return httpx.Response(400)
        if body["method"] == "nope":
            error = {"code": -32601, "message": "Method not found: nope"}
            return httpx.Response(
                404, json={"jsonrpc": "2.0", "id": body["id"], "error": error}
            )
        return httpx.Response(404, text="session gone")

    async with mocked(handler, standalone_stream=False) as transport:
        await answer_of(transport, request(1, "initialize"))
        reply = await answer_of(transport, request(2, "nope"))
        assert reply["error"]["code"] == -32601
        assert not transport.expired
        with pytest.raises(SessionExpiredError):
            await transport.send(request(3, "tools/list"))
        assert transport.expired

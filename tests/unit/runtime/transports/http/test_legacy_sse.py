"""The HTTP+SSE transport of 2024-11-05: `LegacySseApp` served by uvicorn in
this process (on a socket bound to a free port), spoken to by
`LegacySseClientTransport` / `connect_legacy_sse` and by raw httpx requests;
and the client transport against scripted streams (`httpx.MockTransport`).

The server end is `echo_session.session("2024-11-05")` unless a test needs
more revisions.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from unittest.mock import Mock
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.lowlevel
import httpx
import msgspec
import pytest
import uvicorn

from mcp_specgen_runtime.errors import ErrorCode, RpcError, TransportError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client_requests import log_to_client, request_client
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.http import (
    Event,
    EventTooLongError,
    SecurityPolicy,
    SSEParser,
    encode_event,
)
from mcp_specgen_runtime.transports.http.auth import (
    AuthChallenge,
    HttpAuth,
    HttpRequest,
)
from mcp_specgen_runtime.transports.http.legacy_sse import (
    LegacySseApp,
    LegacySseClientTransport,
    connect_legacy_sse,
)
from mcp_specgen_runtime.transports.http.server import (
    DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
    McpHttpApp,
    http_app,
)
from mcp_specgen_types import v2024_11_05, v2025_11_25
from tests.unit.runtime.session_programs.echo_session import (
    INSTRUCTIONS,
    NAME,
    VERSION,
    session,
)

LIMIT = 10.0
"""Seconds any one test may take (a uvicorn start and stop takes ~0.3 s)."""
CLIENT = {"name": "legacy-sse-tests", "version": "0.0.0"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": CLIENT,
    },
}
JSON_HEADERS = {"content-type": "application/json"}
SSE = "text/event-stream"
SSE_HEADERS = {"accept": SSE}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn and the engine's request tasks need asyncio


@asynccontextmanager
async def serving(app: Any) -> AsyncGenerator[str]:
    """Serve `app` (ASGI) with uvicorn on a free local port; its base URL."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", ws="none", log_config=None
        )
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve, [sock])
            with anyio.fail_after(LIMIT):
                while not server.started:
                    assert not server.should_exit, "uvicorn did not start"
                    await anyio.sleep(0.01)
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                # Open streams would hold uvicorn's shutdown (an app mounted
                # behind an auth layer's routes ends them at lifespan shutdown).
                if hasattr(app, "aclose"):
                    await app.aclose()
                server.should_exit = True


@asynccontextmanager
async def served(**options: Any) -> AsyncGenerator[tuple[LegacySseApp, str]]:
    """A `LegacySseApp` of the 2024-11-05 echo session, and its base URL."""
    app = LegacySseApp(session("2024-11-05"), **options)
    with anyio.fail_after(LIMIT):
        async with serving(app) as base:
            yield app, base


@asynccontextmanager
async def raw_stream(
    client: httpx.AsyncClient, url: str
) -> AsyncGenerator[tuple[httpx.Response, AsyncIterator[Event]]]:
    """A GET stream and its events, parsed as they come."""
    async with client.stream("GET", url, headers=SSE_HEADERS) as response:

        async def events() -> AsyncIterator[Event]:
            parser = SSEParser()
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    yield event

        yield response, events()


def session_id_of(endpoint: str) -> str:
    (found,) = parse_qs(urlsplit(endpoint).query)["session_id"]
    return found


# --- our client against our server ---------------------------------------------


@pytest.mark.anyio
async def test_the_client_negotiates_lists_tools_and_calls_echo() -> None:
    async with (
        served() as (_, base),
        connect_legacy_sse(f"{base}/sse", **CLIENT) as client,
    ):
        assert (client.protocol_version, client.era) == ("2024-11-05", "legacy")
        assert (client.server_info.name, client.server_info.version) == (
            NAME,
            VERSION,
        )
        assert client.instructions == INSTRUCTIONS
        typed = v2024_11_05.Client(client)
        tools = await typed.list_tools()
        assert [tool.name for tool in tools.tools] == ["echo"]
        result = await typed.call_tool(name="echo", arguments={"message": "hé ✓"})
        assert result.content[0].text == "hé ✓"  # type: ignore[union-attr]
        with pytest.raises(RpcError) as caught:
            await typed.call_tool(name="nope", arguments={})
        assert caught.value.code == ErrorCode.INVALID_PARAMS
        assert caught.value.message == "Unknown tool: nope"
        assert isinstance(await typed.ping(), v2024_11_05.EmptyResult)


@pytest.mark.anyio
async def test_the_client_may_offer_later_revisions_over_the_old_transport() -> None:
    app = LegacySseApp(session("2024-11-05", "2025-06-18", "2025-11-25"))
    with anyio.fail_after(LIMIT):
        async with (
            serving(app) as base,
            connect_legacy_sse(
                f"{base}/sse", versions=["2024-11-05", "2025-11-25"], **CLIENT
            ) as client,
        ):
            assert client.protocol_version == "2025-11-25"
            result = await v2025_11_25.Client(client).call_tool(
                name="echo", arguments={"message": "hi"}
            )
            assert result.structured_content == {"result": "hi"}


class AskingServer(v2024_11_05.ServerHandlers):
    """One tool: logs to the client, asks it for its roots, answers them."""

    async def tools_call(
        self, params: v2024_11_05.CallToolRequestParams
    ) -> v2024_11_05.CallToolResult:
        await log_to_client("info", "asking")
        roots = await request_client(
            "roots/list",
            v2024_11_05.ListRootsRequestParams(),
            v2024_11_05.ListRootsResult,
        )
        text = ",".join(root.uri for root in roots.roots)
        return v2024_11_05.CallToolResult(content=[v2024_11_05.TextContent(text=text)])


class AnsweringClient(v2024_11_05.ClientHandlers):
    def __init__(self) -> None:
        self.logged: list[Any] = []

    async def roots_list(
        self, params: v2024_11_05.ListRootsRequestParams
    ) -> v2024_11_05.ListRootsResult:
        return v2024_11_05.ListRootsResult(roots=[v2024_11_05.Root(uri="file:///w")])

    async def notifications_message(
        self, params: v2024_11_05.LoggingMessageNotificationParams
    ) -> None:
        self.logged.append(params.data)


@pytest.mark.anyio
async def test_the_server_notifies_and_asks_the_client_over_the_stream() -> None:
    served_session = ServerSession([AskingServer()], name="asking", version="1")
    answering = AnsweringClient()
    with anyio.fail_after(LIMIT):
        async with (
            serving(LegacySseApp(served_session)) as base,
            connect_legacy_sse(f"{base}/sse", handlers=[answering], **CLIENT) as client,
        ):
            result = await v2024_11_05.Client(client).call_tool(name="ask")
    assert result.content[0].text == "file:///w"  # type: ignore[union-attr]
    assert answering.logged == ["asking"]


@pytest.mark.anyio
async def test_many_requests_in_flight_share_one_stream() -> None:
    async with (
        served() as (_, base),
        connect_legacy_sse(f"{base}/sse", **CLIENT) as client,
    ):
        typed = v2024_11_05.Client(client)
        texts: dict[int, str] = {}

        async def call(n: int) -> None:
            result = await typed.call_tool(name="echo", arguments={"message": f"{n}"})
            texts[n] = result.content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as tasks:
            for n in range(20):
                tasks.start_soon(call, n)
        assert texts == {n: f"{n}" for n in range(20)}


@pytest.mark.anyio
async def test_client_disconnect_ends_the_server_session() -> None:
    async with served() as (app, base):
        async with LegacySseClientTransport(f"{base}/sse") as transport:
            assert transport.endpoint is not None
            session_id = session_id_of(transport.endpoint)
            state = app.sessions.get(session_id)
            assert state is not None
            async with Connection(transport) as connection:
                reply = await connection.request("ping", None, dict)
                assert reply == {}
        await state.connection.wait_closed()
        assert session_id not in app.sessions
        async with httpx.AsyncClient() as http:
            answer = await http.post(
                transport.endpoint, content=b"{}", headers=JSON_HEADERS
            )
        assert answer.status_code == 404


@pytest.mark.anyio
async def test_the_server_ending_the_session_ends_the_clients_stream() -> None:
    async with (
        served() as (app, base),
        LegacySseClientTransport(f"{base}/sse") as transport,
    ):
        await app.aclose()
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()
        with pytest.raises(anyio.BrokenResourceError):
            await transport.send(b'{"jsonrpc": "2.0", "method": "x"}')


@pytest.mark.anyio
async def test_an_idle_session_expires_and_its_stream_ends() -> None:
    async with (
        served(idle_timeout_s=0.05, keepalive_s=0.02) as (app, base),
        LegacySseClientTransport(f"{base}/sse") as transport,
    ):
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()
        assert len(app.sessions) == 0


@pytest.mark.anyio
async def test_a_closed_transport_refuses_to_send_and_receive() -> None:
    async with served() as (_, base):
        async with LegacySseClientTransport(f"{base}/sse") as transport:
            await transport.aclose()
            await transport.aclose()
            with pytest.raises(anyio.ClosedResourceError):
                await transport.send(b"{}")
            with pytest.raises(anyio.ClosedResourceError):
                await transport.receive()


# --- the server, request by request --------------------------------------------


@pytest.mark.anyio
async def test_the_first_event_names_a_relative_endpoint_and_replies_follow() -> None:
    async with (
        served() as (_, base),
        httpx.AsyncClient() as http,
        raw_stream(http, f"{base}/sse") as (response, events),
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        first = await anext(events)
        assert first.event == "endpoint"
        endpoint = first.data.decode()
        assert endpoint.startswith("/messages?session_id=")
        assert len(session_id_of(endpoint)) == 43
        answer = await http.post(
            f"{base}{endpoint}", json=INITIALIZE, headers=JSON_HEADERS
        )
        assert (answer.status_code, answer.text) == (202, "Accepted")
        reply = await anext(events)
        assert reply.event == "message"
        decoded = msgspec.json.decode(reply.data)
        assert decoded["id"] == 1
        assert decoded["result"]["protocolVersion"] == "2024-11-05"
        # Invalid JSON-RPC is classified by the engine's rules, answered 400
        # (as the Python SDK's HTTP+SSE server does), with the id when usable.
        answer = await http.post(
            f"{base}{endpoint}", json={"id": 7}, headers=JSON_HEADERS
        )
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == ErrorCode.INVALID_REQUEST
        assert answer.json()["id"] == 7


@pytest.mark.anyio
async def test_silent_streams_get_keep_alive_comments() -> None:
    async with (
        served(keepalive_s=0.01) as (_, base),
        httpx.AsyncClient() as http,
        http.stream("GET", f"{base}/sse", headers=SSE_HEADERS) as response,
    ):
        seen = b""
        async for chunk in response.aiter_bytes():
            seen += chunk
            if b": keepalive\n\n" in seen:
                break
        assert seen.startswith(b"event: endpoint\n")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("", 400),
        ("?session_id=", 400),
        ("?session_id=a%20b", 400),
        ("?session_id=a&session_id=b", 400),
        ("?sessionId=abc", 400),
        ("?session_id=no-such-session", 404),
    ],
)
async def test_posts_without_a_live_session_are_refused(
    query: str, status: int
) -> None:
    async with served() as (_, base), httpx.AsyncClient() as http:
        answer = await http.post(
            f"{base}/messages{query}", json=INITIALIZE, headers=JSON_HEADERS
        )
        assert answer.status_code == status
        assert answer.headers["content-type"] == "application/json"
        assert msgspec.json.decode(answer.content)["error"]["message"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"{not json", JSON_HEADERS, 400),
        (b"42", JSON_HEADERS, 400),
        (b'"text"', JSON_HEADERS, 400),
        (b"{}", {"content-type": "text/plain"}, 415),
        (b"{}", {}, 415),
        (b'{"padding": "' + b"x" * 600 + b'"}', JSON_HEADERS, 413),
        (b"{}", {**JSON_HEADERS, "origin": "https://evil.example"}, 403),
        (b"{}", {**JSON_HEADERS, "host": "evil.example"}, 421),
    ],
)
async def test_bad_posts_to_a_live_session_are_refused(
    body: bytes, headers: dict[str, str], status: int
) -> None:
    policy = SecurityPolicy.for_bind("127.0.0.1", 0)
    small = SecurityPolicy(
        allowed_hosts=policy.allowed_hosts,
        allowed_origins=policy.allowed_origins,
        max_body_size=512,
    )
    async with (
        served(policy=small) as (_, base),
        httpx.AsyncClient() as http,
        raw_stream(http, f"{base}/sse") as (_, events),
    ):
        endpoint = (await anext(events)).data.decode()
        answer = await http.post(f"{base}{endpoint}", content=body, headers=headers)
        assert answer.status_code == status
        # The session lives on.
        answer = await http.post(
            f"{base}{endpoint}", json=INITIALIZE, headers=JSON_HEADERS
        )
        assert answer.status_code == 202


@pytest.mark.anyio
async def test_a_body_streamed_past_the_limit_is_refused() -> None:
    small = SecurityPolicy(allowed_hosts=None, max_body_size=64)

    async def body() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 16

    async with (
        served(policy=small) as (_, base),
        httpx.AsyncClient() as http,
        raw_stream(http, f"{base}/sse") as (_, events),
    ):
        endpoint = (await anext(events)).data.decode()
        answer = await http.post(
            f"{base}{endpoint}", content=body(), headers=JSON_HEADERS
        )
        assert answer.status_code == 413


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (None, 406),
        ({"accept": "application/json"}, 406),
        ({**SSE_HEADERS, "origin": "https://evil.example"}, 403),
        ({**SSE_HEADERS, "host": "evil.example:80"}, 421),
    ],
)
async def test_bad_gets_are_refused(
    headers: dict[str, str] | None, status: int
) -> None:
    async with served() as (app, base), httpx.AsyncClient() as http:
        request = http.build_request("GET", f"{base}/sse", headers=headers)
        if headers is None:
            del request.headers["accept"]
        answer = await http.send(request)
        assert answer.status_code == status
        assert len(app.sessions) == 0


@pytest.mark.anyio
async def test_a_local_browser_origin_is_allowed() -> None:
    headers = {**SSE_HEADERS, "origin": "http://localhost:5173"}
    async with (
        served() as (_, base),
        httpx.AsyncClient() as http,
        http.stream("GET", f"{base}/sse", headers=headers) as response,
    ):
        assert response.status_code == 200


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "path", "status", "allow"),
    [
        ("POST", "/sse", 405, "GET"),
        ("DELETE", "/sse", 405, "GET"),
        ("GET", "/messages", 405, "POST"),
        ("GET", "/elsewhere", 404, None),
        ("POST", "/mcp", 404, None),
    ],
)
async def test_other_paths_and_methods(
    method: str, path: str, status: int, allow: str | None
) -> None:
    async with served() as (_, base), httpx.AsyncClient() as http:
        answer = await http.request(method, f"{base}{path}", headers=SSE_HEADERS)
        assert answer.status_code == status
        assert answer.headers.get("allow") == allow


@pytest.mark.anyio
async def test_streams_past_max_sessions_get_503() -> None:
    async with (
        served(max_sessions=1) as (_, base),
        LegacySseClientTransport(f"{base}/sse"),
        httpx.AsyncClient() as http,
    ):
        answer = await http.get(f"{base}/sse", headers=SSE_HEADERS)
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "30"


def test_paths_are_checked() -> None:
    served_session = session("2024-11-05")
    with pytest.raises(ValueError, match="sse_path"):
        LegacySseApp(served_session, sse_path="sse")
    with pytest.raises(ValueError, match="message_path"):
        LegacySseApp(served_session, message_path="/m?x=1")
    with pytest.raises(ValueError, match="both"):
        LegacySseApp(served_session, sse_path="/x", message_path="/x")
    with pytest.raises(ValueError, match="keepalive_s"):
        LegacySseApp(served_session, keepalive_s=0)
    app = LegacySseApp(served_session, message_path="/a b/messages")
    assert app.endpoint_url("id") == "/a%20b/messages?session_id=id"


# --- authentication ---------------------------------------------------------------


async def by_header(request: HttpRequest) -> object:
    """The caller named in ``X-User`` (None, i.e. 401, without one)."""
    return request.headers.get("x-user")


async def challenging(request: HttpRequest) -> object:
    raise AuthChallenge(403, 'Bearer error="insufficient_scope"', "Forbidden")


async def refused_answers(app: Any) -> list[httpx.Response]:
    """What GET /sse, POST /messages and POST /mcp answer without credentials."""
    async with serving(app) as base, httpx.AsyncClient() as http:
        return [
            await http.get(f"{base}/sse", headers=SSE_HEADERS),
            await http.post(
                f"{base}/messages?session_id={'a' * 43}",
                json=INITIALIZE,
                headers=JSON_HEADERS,
            ),
            await http.post(
                f"{base}/mcp",
                json=INITIALIZE,
                headers={
                    **JSON_HEADERS,
                    "accept": "application/json, text/event-stream",
                },
            ),
        ]


@pytest.mark.anyio
async def test_http_apps_authenticate_hook_protects_the_legacy_endpoints() -> None:
    app = http_app(session("2024-11-05", "2025-11-25"), authenticate=by_header)
    with anyio.fail_after(LIMIT):
        answers = await refused_answers(app)
    for answer in answers:
        assert answer.status_code == 401, answer.request.url
        assert answer.headers["www-authenticate"] == "Bearer"


@pytest.mark.anyio
async def test_http_apps_hook_challenge_is_answered_on_the_legacy_endpoints() -> None:
    app = http_app(session("2024-11-05", "2025-11-25"), authenticate=challenging)
    with anyio.fail_after(LIMIT):
        answers = await refused_answers(app)
    for answer in answers:
        assert answer.status_code == 403, answer.request.url
        assert answer.headers["www-authenticate"].startswith("Bearer error=")


def test_authenticate_and_auth_are_exclusive() -> None:
    with pytest.raises(ValueError, match="not both"):
        LegacySseApp(
            session("2024-11-05"), authenticate=by_header, auth=Mock(spec=HttpAuth)
        )


@pytest.mark.anyio
async def test_a_principal_at_its_cap_does_not_lock_out_another() -> None:
    assert (
        LegacySseApp(session("2024-11-05")).sessions.max_sessions_per_owner
        == DEFAULT_MAX_SESSIONS_PER_PRINCIPAL
        == 100
    )
    async with (
        served(
            authenticate=by_header, max_sessions=2, max_sessions_per_principal=1
        ) as (app, base),
        httpx.AsyncClient() as http,
    ):
        alice = {**SSE_HEADERS, "x-user": "alice"}
        async with (
            http.stream("GET", f"{base}/sse", headers=alice) as first,
            http.stream("GET", f"{base}/sse", headers=alice) as second,
        ):
            assert (first.status_code, second.status_code) == (200, 200)
            bob = {**SSE_HEADERS, "x-user": "bob"}
            async with http.stream("GET", f"{base}/sse", headers=bob) as third:
                # Not 503: alice's second stream took the place of her first.
                assert third.status_code == 200
                assert len(app.sessions) == 2


# --- together with the Streamable HTTP app --------------------------------------


@pytest.mark.anyio
async def test_a_fallback_app_serves_every_other_request() -> None:
    served_session = session("2024-11-05", "2025-11-25")
    app = LegacySseApp(served_session, fallback=McpHttpApp(served_session))
    headers = {**JSON_HEADERS, "accept": "application/json, text/event-stream"}
    with anyio.fail_after(LIMIT):
        async with serving(app) as base, httpx.AsyncClient() as http:
            initialize = {**INITIALIZE, "params": {**INITIALIZE["params"]}}
            initialize["params"]["protocolVersion"] = "2025-11-25"
            answer = await http.post(f"{base}/mcp", json=initialize, headers=headers)
            assert answer.status_code == 200
            assert "mcp-session-id" in answer.headers
            assert (await http.get(f"{base}/elsewhere")).status_code == 404
            async with connect_legacy_sse(f"{base}/sse", **CLIENT) as client:
                assert client.protocol_version == "2024-11-05"


@pytest.mark.anyio
async def test_both_transports_may_share_one_path() -> None:
    served_session = session("2024-11-05", "2025-11-25")
    app = LegacySseApp(
        served_session, sse_path="/mcp", fallback=McpHttpApp(served_session)
    )
    with anyio.fail_after(LIMIT):
        async with serving(app) as base, httpx.AsyncClient() as http:
            async with connect_legacy_sse(f"{base}/mcp", **CLIENT) as client:
                assert client.protocol_version == "2024-11-05"
                assert len(app.sessions) == 1
            # A Streamable HTTP client's standalone stream is the fallback's.
            answer = await http.get(
                f"{base}/mcp", headers={**SSE_HEADERS, "mcp-session-id": "unknown"}
            )
            assert answer.status_code == 404
            assert len(app.sessions) == 0


# --- the client against scripted streams ----------------------------------------


Script = Callable[[httpx.Request], Awaitable[httpx.Response]]


def stream_response(
    *chunks: bytes, hang: bool = False, **options: Any
) -> httpx.Response:
    """A 200 event stream of `chunks` (then waiting forever, with `hang`)."""

    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk
        if hang:
            await anyio.sleep_forever()

    options.setdefault("headers", {"content-type": "text/event-stream"})
    return httpx.Response(options.pop("status_code", 200), content=body(), **options)


@asynccontextmanager
async def scripted(
    script: Script, **options: Any
) -> AsyncGenerator[LegacySseClientTransport]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(script)) as http:
        with anyio.fail_after(LIMIT):
            async with LegacySseClientTransport(
                "http://server.example/sse", http_client=http, **options
            ) as transport:
                yield transport


ENDPOINT = encode_event(b"/messages?sessionId=1", event="endpoint")


@pytest.mark.anyio
async def test_the_client_reads_messages_and_skips_the_rest() -> None:
    posted: list[httpx.Request] = []

    async def script(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            posted.append(request)
            return httpx.Response(202, text="Accepted")
        return stream_response(
            b": hello\n\n" + encode_event(b"[]", event="message")[:5],
            encode_event(b"[]", event="message")[5:],
            encode_event(b"", event="message"),
            ENDPOINT,
            encode_event(b"/elsewhere", event="endpoint"),
            encode_event(b"1", event="other"),
            encode_event(b"2"),
            headers={"content-type": "text/event-stream; charset=utf-8"},
        )

    async with scripted(script, headers={"authorization": "Bearer t"}) as transport:
        assert transport.endpoint == "http://server.example/messages?sessionId=1"
        assert await transport.receive() == b"[]"
        assert await transport.receive() == b"2"
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()
        with pytest.raises(anyio.BrokenResourceError):
            await transport.send(b"{}")
    assert posted == []


@pytest.mark.anyio
async def test_the_client_posts_each_message_to_the_endpoint() -> None:
    posted: list[httpx.Request] = []

    async def script(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            posted.append(request)
            return httpx.Response(202, text="Accepted")
        assert request.headers["accept"] == "text/event-stream"
        assert request.headers["authorization"] == "Bearer t"
        return stream_response(ENDPOINT, hang=True)

    async with scripted(script, headers={"authorization": "Bearer t"}) as transport:
        await transport.send(b'{"jsonrpc": "2.0", "method": "a"}')
    (request,) = posted
    assert str(request.url) == "http://server.example/messages?sessionId=1"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == "Bearer t"
    assert request.content == b'{"jsonrpc": "2.0", "method": "a"}'


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "error"), [(404, anyio.BrokenResourceError), (500, TransportError)]
)
async def test_a_refused_post_raises(status: int, error: type[Exception]) -> None:
    async def script(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(status, text="no")
        return stream_response(ENDPOINT, hang=True)

    async with scripted(script) as transport:
        with pytest.raises(error):
            await transport.send(b"{}")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("response", "message"),
    [
        (stream_response(status_code=404), "HTTP 404"),
        (
            stream_response(ENDPOINT, headers={"content-type": "application/json"}),
            "not an event stream",
        ),
        (stream_response(encode_event(b"{}")), "ended before its endpoint"),
        (
            stream_response(encode_event(b"http://evil.example/m", event="endpoint")),
            "not on the origin",
        ),
        (
            stream_response(
                encode_event(b"https://server.example/m", event="endpoint")
            ),
            "not on the origin",
        ),
        (stream_response(hang=True), "no endpoint event"),
    ],
)
async def test_entry_fails_without_a_usable_endpoint(
    response: httpx.Response, message: str
) -> None:
    async def script(request: httpx.Request) -> httpx.Response:
        return response

    with pytest.raises(TransportError, match=message):
        async with scripted(script, timeout=0.2):
            pass


@pytest.mark.anyio
async def test_an_unreachable_server_fails_entry() -> None:
    async def script(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(TransportError, match="cannot open"):
        async with scripted(script):
            pass


@pytest.mark.anyio
async def test_an_over_long_event_is_reported_and_reading_goes_on() -> None:
    async def script(request: httpx.Request) -> httpx.Response:
        return stream_response(
            ENDPOINT,
            encode_event(b"x" * 100, event="message") + encode_event(b"{}"),
        )

    async with scripted(script, max_event_size=64) as transport:
        with pytest.raises(EventTooLongError):
            await transport.receive()
        assert await transport.receive() == b"{}"
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()


@pytest.mark.anyio
async def test_a_stream_that_breaks_is_a_transport_error() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield ENDPOINT
        raise httpx.ReadError("reset")

    async def script(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=body()
        )

    async with scripted(script) as transport:
        with pytest.raises(TransportError, match="broke"):
            await transport.receive()


@pytest.mark.anyio
async def test_a_transport_is_entered_once() -> None:
    async def script(request: httpx.Request) -> httpx.Response:
        return stream_response(ENDPOINT, hang=True)

    async with scripted(script) as transport:
        with pytest.raises(RuntimeError):
            await transport.__aenter__()


@pytest.mark.anyio
async def test_closing_the_transport_inside_its_block_cancels_only_the_reader() -> None:
    async def script(request: httpx.Request) -> httpx.Response:
        return stream_response(ENDPOINT, hang=True)

    steps: list[str] = []
    async with scripted(script) as transport:
        async with Connection(transport):
            await anyio.lowlevel.checkpoint()
        # Connection's exit closed the transport; this task goes on.
        await anyio.lowlevel.checkpoint()
        steps.append("inside")
    steps.append("after")
    assert steps == ["inside", "after"]


@pytest.mark.anyio
async def test_a_transport_not_entered_refuses_to_send_and_receive() -> None:
    transport = LegacySseClientTransport("http://server.example/sse")
    with pytest.raises(anyio.ClosedResourceError):
        await transport.send(b"{}")
    with pytest.raises(anyio.ClosedResourceError):
        await transport.receive()
    await transport.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "code", "reply_id"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"', ErrorCode.PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}', ErrorCode.INVALID_REQUEST, 1),
        (b"[" * 1000 + b"]" * 1000, ErrorCode.INVALID_REQUEST, None),
    ],
    ids=["truncated", "utf8", "deep"],
)
async def test_a_body_that_is_no_message_is_400_as_the_engine_classifies_it(
    body: bytes, code: int, reply_id: int | None
) -> None:
    async with (
        served() as (_, base),
        httpx.AsyncClient() as http,
        raw_stream(http, f"{base}/sse") as (_, events),
    ):
        endpoint = (await anext(events)).data.decode()
        answer = await http.post(
            f"{base}{endpoint}", content=body, headers=JSON_HEADERS
        )
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == code
        assert answer.json()["id"] == reply_id


@pytest.mark.anyio
async def test_a_stalled_body_is_408_and_the_connection_closes() -> None:
    local = SecurityPolicy.for_bind("127.0.0.1", 0)
    policy = SecurityPolicy(
        allowed_hosts=local.allowed_hosts,
        allowed_origins=local.allowed_origins,
        body_timeout_s=0.5,
    )
    async with (
        served(policy=policy) as (_, base),
        httpx.AsyncClient() as http,
        raw_stream(http, f"{base}/sse") as (_, events),
    ):
        endpoint = (await anext(events)).data.decode()
        port = httpx.URL(base).port
        assert port is not None
        stream = await anyio.connect_tcp("127.0.0.1", port)
        async with stream:
            head = (
                f"POST {endpoint} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
                "content-type: application/json\r\ncontent-length: 100\r\n\r\n{"
            )
            await stream.send(head.encode())
            answer = b""
            with anyio.fail_after(LIMIT):
                try:
                    while chunk := await stream.receive():
                        answer += chunk
                except anyio.EndOfStream:
                    pass  # closed by the server
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert b"connection: close" in answer.lower()

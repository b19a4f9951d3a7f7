"""`McpHttpApp(stateless=True)`: legacy revisions served without sessions,
each POST standing alone; and the health endpoint."""

from __future__ import annotations

import httpx
import pytest

from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.http.server import McpHttpApp, http_app
from mcp_specgen_types import v2025_11_25
from tests.unit.runtime.session_programs.echo_session import session as echo_session
from tests.unit.runtime.transports.http.test_server import (
    LEGACY,
    Probe,
    Tools1125,
    call,
    error_of,
    in_process,
    initialize,
    make_app,
    modern,
    no_errors_logged,  # noqa: F401 - the autouse fixture, for these tests too
    post,
    result_text,
    rpc,
    sse_messages,
    tool_schema,
    tools_session,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def versioned(version: str = LEGACY) -> dict[str, str]:
    return {"mcp-protocol-version": version}


async def test_initialize_is_answered_without_a_session() -> None:
    async with in_process(make_app(stateless=True)) as client:
        answer = await post(client, initialize())
        assert answer.status_code == 200
        assert answer.json()["result"]["protocolVersion"] == LEGACY
        assert "mcp-session-id" not in answer.headers
        initialized = await post(client, rpc(None, "notifications/initialized"))
        assert initialized.status_code == 202


async def test_requests_are_served_without_a_session() -> None:
    app = make_app(stateless=True)
    async with in_process(app) as client:
        echo = await post(
            client, rpc(1, "tools/call", call("echo", message="hi")), versioned()
        )
        assert echo.status_code == 200
        assert result_text(echo.json()) == "hi"
        assert "mcp-session-id" not in echo.headers
        listed = await post(client, rpc(2, "tools/list"), versioned())
        assert len(listed.json()["result"]["tools"]) == 6
        # A session id sent anyway is ignored: there are none.
        ignored = {**versioned(), "mcp-session-id": "made-up"}
        again = await post(
            client, rpc(3, "tools/call", call("echo", message="x")), ignored
        )
        assert result_text(again.json()) == "x"
        assert len(app.sessions) == 0


async def test_progress_rides_the_posts_own_stream() -> None:
    async with in_process(make_app(stateless=True)) as client:
        params = {**call("progress"), "_meta": {"progressToken": "p"}}
        answer = await post(client, rpc(4, "tools/call", params), versioned())
        messages = sse_messages(answer)
        assert [m.get("method") for m in messages[:2]] == ["notifications/progress"] * 2
        assert result_text(messages[2]) == "done"


@pytest.mark.parametrize(
    ("version", "message"), [("2024-11-05", None), ("2025-03-26", "half way")]
)
async def test_progress_fits_the_revision_of_the_post(
    version: str, message: str | None
) -> None:
    """The handler (2025-11-25) reports a progress `message`, which
    2024-11-05 lacks: it is dropped there."""
    served = ServerSession(
        [Tools1125(Probe())], name="n", version="v", versions=[version, LEGACY]
    )
    app = McpHttpApp(served, stateless=True, tool_input_schema=tool_schema)
    async with in_process(app) as client:
        params = {**call("progress"), "_meta": {"progressToken": "p"}}
        answer = await post(client, rpc(4, "tools/call", params), versioned(version))
        first = sse_messages(answer)[0]
        assert first["method"] == "notifications/progress"
        assert first["params"].get("message") == message
        assert first["params"]["progress"] == 1


async def test_a_request_to_the_client_fails_clearly_in_the_handler() -> None:
    async with in_process(make_app(stateless=True)) as client:
        answer = await post(client, rpc(5, "tools/call", call("roots")), versioned())
        text = result_text(answer.json())
        assert text.startswith("no roots: roots/list: this server is stateless")


async def test_get_and_delete_are_405_and_batches_400() -> None:
    async with in_process(make_app(stateless=True)) as client:
        got = await client.get("/mcp", headers={"accept": "text/event-stream"})
        assert got.status_code == 405
        assert got.headers["allow"] == "POST"
        deleted = await client.delete("/mcp", headers={"mcp-session-id": "x"})
        assert deleted.status_code == 405
        batch = [rpc(1, "tools/list"), rpc(2, "tools/list")]
        refused = await post(client, batch, versioned("2025-03-26"))
        assert refused.status_code == 400
        assert "stateless" in error_of(refused)["message"]


async def test_an_unsupported_protocol_version_is_400() -> None:
    async with in_process(make_app(stateless=True)) as client:
        refused = await post(client, rpc(1, "tools/list"), versioned("1999-01-01"))
        assert refused.status_code == 400
        assert "Unsupported protocol version" in error_of(refused)["message"]


async def test_a_missing_version_header_means_2025_03_26() -> None:
    app = McpHttpApp(echo_session("2025-03-26", "2025-11-25"), stateless=True)
    async with in_process(app) as client:
        listed = await post(client, rpc(1, "tools/list"))
        assert listed.status_code == 200
        assert "tools" in listed.json()["result"]
    # A server without 2025-03-26 cannot assume it: the header is required.
    async with in_process(make_app(stateless=True)) as client:
        refused = await post(client, rpc(1, "tools/list"))
        assert refused.status_code == 400
        assert "header is missing" in error_of(refused)["message"]


async def test_2026_requests_are_served_as_ever() -> None:
    async with in_process(make_app(stateless=True)) as client:
        body, headers = modern(1, "tools/call", call("echo", message="now"))
        answer = await client.post("/mcp", json=body, headers=headers)
        assert result_text(answer.json()) == "now"


async def test_stateless_mode_keeps_no_event_store() -> None:
    app = make_app(stateless=True)
    assert app.event_store is None
    await app.aclose()


async def test_our_client_works_against_a_stateless_server() -> None:
    from mcp_specgen_runtime.protocol.client import ClientSession
    from mcp_specgen_runtime.transports.http.client import HttpClientTransport

    app = make_app(stateless=True)
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000"
    ) as http:
        async with (
            HttpClientTransport("http://127.0.0.1:8000/mcp", http_client=http) as wire,
            ClientSession(wire, name="t", version="1", versions=[LEGACY]) as session,
        ):
            result = await v2025_11_25.Client(session).call_tool(
                name="echo", arguments={"message": "via our client"}
            )
    assert result.content == [v2025_11_25.TextContent(text="via our client")]
    await app.aclose()


# --- health -------------------------------------------------------------------------


async def test_health_answers_200_without_auth_or_guards() -> None:
    async def nobody(_: object) -> object:
        return None  # every MCP request would be 401

    app = McpHttpApp(tools_session(Probe()), authenticate=nobody)
    async with in_process(app) as client:
        health = await client.get("/healthz", headers={"origin": "http://evil.example"})
        assert health.status_code == 200
        assert health.json() == {"status": "ok"}
        assert health.headers["cache-control"] == "no-store"
        head = await client.head("/healthz")
        assert head.status_code == 200 and head.content == b""
        posted = await client.post("/healthz")
        assert posted.status_code == 405
        assert posted.headers["allow"] == "GET, HEAD"
        refused = await post(client, initialize())
        assert refused.status_code == 401


async def test_health_path_is_configurable_or_off() -> None:
    async with in_process(make_app(health_path="/live")) as client:
        assert (await client.get("/live")).status_code == 200
        assert (await client.get("/healthz")).status_code == 404
    async with in_process(make_app(health_path=None)) as client:
        assert (await client.get("/healthz")).status_code == 404


async def test_http_app_serves_health_behind_the_legacy_sse_layer() -> None:
    app = http_app(tools_session(Probe()))
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8000"
    ) as client:
        assert (await client.get("/healthz")).json() == {"status": "ok"}

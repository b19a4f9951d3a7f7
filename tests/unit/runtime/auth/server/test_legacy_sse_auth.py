"""The deprecated HTTP+SSE transport (2024-11-05) behind a `ResourceServer`:
both endpoints need a token, a session belongs to the caller that opened it,
a POST lacking a tool's scopes is 403 before the session sees it, and lists
and handlers see the caller. Served by uvicorn in this process, spoken to by
`connect_legacy_sse` and raw httpx requests."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from mcp_specgen_runtime.errors import TransportError
from mcp_specgen_runtime.transports.http import Event, SSEParser
from mcp_specgen_runtime.transports.http.legacy_sse import (
    LegacySseApp,
    connect_legacy_sse,
)
from mcp_specgen_runtime.transports.http.server import http_app
from mcp_specgen_types import v2024_11_05
from tests.unit.runtime.auth.server.test_resource_server import (
    make_app,
    resource_server,
)
from tests.unit.runtime.transports.http.test_legacy_sse import (
    LIMIT,
    refused_answers,
    serving,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def protected() -> LegacySseApp:
    app = make_app()
    return LegacySseApp(
        app.session(), auth=resource_server(), required_scopes=app.scopes_for
    )


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.mark.anyio
async def test_both_endpoints_need_a_token() -> None:
    with anyio.fail_after(LIMIT):
        async with serving(protected()) as base, httpx.AsyncClient() as http:
            stream = await http.get(
                f"{base}/sse", headers={"accept": "text/event-stream"}
            )
            post = await http.post(
                f"{base}/messages?session_id={'a' * 32}",
                json={},
                headers={"content-type": "application/json"},
            )
    for response in (stream, post):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith(
            'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/'
        )


@pytest.mark.anyio
async def test_http_apps_auth_layer_protects_the_legacy_endpoints() -> None:
    app = make_app()
    served = http_app(app.session(), auth=resource_server())
    with anyio.fail_after(LIMIT):
        answers = await refused_answers(served)
    for response in answers:
        assert response.status_code == 401, response.request.url
        assert response.headers["www-authenticate"].startswith("Bearer ")


@pytest.mark.anyio
async def test_a_session_lists_calls_and_is_refused_what_it_lacks() -> None:
    with anyio.fail_after(LIMIT):
        async with serving(protected()) as base:
            async with connect_legacy_sse(
                f"{base}/sse", name="t", version="0", headers=bearer("reader")
            ) as session:
                client = v2024_11_05.Client(session)
                tools = [tool.name for tool in (await client.list_tools()).tools]
                result = await client.call_tool(name="whoami", arguments={})
                with pytest.raises(TransportError, match="HTTP 403"):
                    await client.call_tool(name="write", arguments={"text": "x"})
    assert tools == ["whoami"]
    content = result.content[0]
    assert isinstance(content, v2024_11_05.TextContent)
    assert content.text == "alice mcp:read"


@pytest.mark.anyio
async def test_another_caller_does_not_find_the_session() -> None:
    with anyio.fail_after(LIMIT):
        async with serving(protected()) as base, httpx.AsyncClient() as http:
            headers = {"accept": "text/event-stream", **bearer("reader")}
            async with http.stream("GET", f"{base}/sse", headers=headers) as stream:
                parser = SSEParser()
                chunks = stream.aiter_bytes()  # kept: leaving it would hang up
                events: list[Event] = []
                while not events:
                    events += parser.feed(await anext(chunks))
                endpoint = events[0].data.decode()
                session_id = parse_qs(urlsplit(endpoint).query)["session_id"][0]
                url = f"{base}/messages?session_id={session_id}"
                ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                posting = {"content-type": "application/json"}
                foreign = await http.post(
                    url, json=ping, headers={**posting, **bearer("bob")}
                )
                own = await http.post(
                    url, json=ping, headers={**posting, **bearer("writer")}
                )
    assert foreign.status_code == 404
    assert own.status_code == 202, own.text  # the same caller, stepped up

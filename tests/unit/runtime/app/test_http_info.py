"""`ctx.http` (`HttpInfo`): the HTTP request that carried each call, in
both eras and over HTTP+SSE, from a real uvicorn server; None off HTTP."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App, Context, Headers, HttpInfo
from mcp_specgen_runtime.transports.http.auth import HttpRequest
from mcp_specgen_runtime.transports.http.headers import HttpHeaders
from tests.unit.runtime.transports.http.test_http_client import serving

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def request(**changes: Any) -> HttpRequest:
    fields: dict[str, Any] = {
        "method": "POST",
        "path": "/mcp",
        "headers": HttpHeaders(
            [("X-Tenant", "acme"), ("Accept", "a"), ("accept", "b")]
        ),
        "client": ("10.0.0.7", 5123),
        "query": b"team=blue&team=red&empty=",
        "scheme": "https",
    }
    return HttpRequest(**{**fields, **changes})


def test_httpinfo_reads_the_request() -> None:
    info = HttpInfo(request())
    assert (info.method, info.scheme, info.path) == ("POST", "https", "/mcp")
    assert info.query == "team=blue&team=red&empty="
    assert info.query_params == {"team": ["blue", "red"], "empty": [""]}
    assert info.client == ("10.0.0.7", 5123) and info.client_host == "10.0.0.7"
    assert HttpInfo(request(client=None)).client_host is None
    with pytest.raises(AttributeError):
        info.path = "/elsewhere"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        info.headers = info.headers  # type: ignore[misc]
    assert repr(info) == "HttpInfo(POST /mcp?team=blue&team=red&empty= https)"


def test_headers_are_a_case_insensitive_mapping() -> None:
    headers = HttpInfo(request()).headers
    assert isinstance(headers, Headers)
    assert headers["x-tenant"] == headers["X-TENANT"] == "acme"
    assert "X-Tenant" in headers and "x-other" not in headers and 3 not in headers
    assert headers.get("x-other") is None
    assert headers["accept"] == "a, b" and headers.get_all("Accept") == ["a", "b"]
    assert list(headers) == ["x-tenant", "accept"] and len(headers) == 2
    assert dict(headers) == {"x-tenant": "acme", "accept": "a, b"}
    with pytest.raises(KeyError):
        headers["x-other"]


def described(http: HttpInfo | None) -> dict[str, Any] | None:
    if http is None:
        return None
    return {
        "method": http.method,
        "scheme": http.scheme,
        "path": http.path,
        "query": http.query_params,
        "client": http.client_host,
        "tenant": http.headers.get("X-Tenant"),
        "has_tenant": "x-tenant" in http.headers,
    }


def http_app() -> App:
    app = App("http-info")

    @app.tool()
    async def whoami(ctx: Context) -> str:
        return json.dumps(described(ctx.http))

    @app.tool()
    def injected(http: HttpInfo | None, ctx: Context) -> str:
        """A plain function in a worker thread: the request injected, and
        read from the context there."""
        assert described(ctx.http) == described(http)
        return json.dumps(described(http))

    return app


def text(result: Any) -> Any:
    return json.loads(result.content[0].text)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("route", "versions", "path"),
    [
        ("/mcp?team=blue", None, "/mcp"),  # 2026: stateless POSTs
        ("/mcp?team=blue", ["2025-11-25"], "/mcp"),  # a session's POSTs
        ("/sse?team=blue", ["2024-11-05"], "/messages"),  # HTTP+SSE
    ],
)
async def test_ctx_http_is_the_post_that_carried_the_call(
    route: str, versions: list[str] | None, path: str
) -> None:
    with serving(http_app().asgi()) as server, anyio.fail_after(LIMIT):
        url = server.url.removesuffix("/mcp") + route
        headers = {"X-Tenant": "acme"}
        async with Client(url, versions=versions, headers=headers) as client:
            assert client.protocol_version == (versions or ["2026-07-28"])[0]
            seen = text(await client.call_tool("whoami", {}))
            assert text(await client.call_tool("injected", {})) == seen
    query = seen.pop("query")
    assert seen == {
        "method": "POST",
        "scheme": "http",
        "path": path,
        "client": "127.0.0.1",
        "tenant": "acme",
        "has_tenant": True,
    }
    # HTTP+SSE POSTs go to the endpoint the server named, with its session.
    assert query == ({"team": ["blue"]} if path == "/mcp" else {"session_id": [ANY]})


class _Any:
    def __eq__(self, other: object) -> bool:
        return True


ANY: Any = _Any()


@pytest.mark.anyio
async def test_ctx_http_is_none_in_memory() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(http_app()) as client:
            assert text(await client.call_tool("whoami", {})) is None
            assert text(await client.call_tool("injected", {})) is None

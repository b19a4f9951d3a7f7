"""CORS over real HTTP (uvicorn, httpx): preflights, the headers on actual
answers, and the one rule tying CORS to the Origin guard (every origin CORS
allows passes it)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.transports.http import Cors, SecurityPolicy
from mcp_specgen_runtime.transports.http.cors import CorsApp, cors_policy
from mcp_specgen_runtime.transports.http.server import McpHttpApp, http_app
from tests.unit.runtime.transports.http.test_server import (
    BASE,
    LIMIT,
    initialize,
    modern,
    served,
)

PAGE = "https://app.example"
OTHER = "https://evil.example"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app() -> App:
    app = App("cors", version="1")
    app.tool("echo")(lambda message: message)
    return app


def preflight(
    origin: str, method: str = "POST", headers: str | None = None
) -> dict[str, str]:
    fields = {"origin": origin, "access-control-request-method": method}
    if headers is not None:
        fields["access-control-request-headers"] = headers
    return fields


@pytest.mark.anyio
async def test_a_preflight_allows_the_mcp_headers_and_a_post_is_readable() -> None:
    server = McpHttpApp(make_app().session(), cors=Cors(allow_origins=[PAGE]))
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        asked = (
            "content-type, mcp-protocol-version, mcp-method, mcp-name, "
            "mcp-param-region, authorization"
        )
        answer = await client.options(url, headers=preflight(PAGE, headers=asked))
        assert answer.status_code == 204
        assert answer.headers["access-control-allow-origin"] == PAGE
        assert answer.headers["access-control-allow-methods"] == "GET, POST, DELETE"
        assert answer.headers["access-control-allow-headers"] == asked
        assert answer.headers["access-control-max-age"] == "600"
        assert "Origin" in answer.headers["vary"]
        assert "access-control-allow-credentials" not in answer.headers

        legacy = await client.post(
            url, json=initialize(), headers={**BASE, "origin": PAGE}
        )
        assert legacy.status_code == 200
        assert legacy.headers["access-control-allow-origin"] == PAGE
        exposed = legacy.headers["access-control-expose-headers"]
        assert exposed == "Mcp-Session-Id, WWW-Authenticate, Retry-After"
        assert legacy.headers["mcp-session-id"]

        body, headers = modern(1, "tools/list", {})
        answer = await client.post(url, json=body, headers={**headers, "origin": PAGE})
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == PAGE


@pytest.mark.anyio
async def test_a_preflight_names_what_is_not_allowed() -> None:
    server = McpHttpApp(make_app().session(), cors=Cors(allow_origins=[PAGE]))
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        cases: list[tuple[dict[str, str], str]] = [
            (preflight(OTHER), f"Origin {OTHER!r} not allowed"),
            (preflight(PAGE, "PUT"), "method 'PUT' not allowed"),
            (preflight(PAGE, headers="x-secret"), "header 'x-secret' not allowed"),
        ]
        for fields, reason in cases:
            answer = await client.options(url, headers=fields)
            assert answer.status_code == 403
            assert reason in answer.json()["error"]["message"]
            assert "access-control-allow-origin" not in answer.headers
        # DNS rebinding: the Host guard runs on preflights too.
        rebound = await client.options(
            url, headers={**preflight(PAGE), "host": "evil.example:80"}
        )
        assert rebound.status_code == 421


@pytest.mark.anyio
async def test_an_origin_cors_does_not_allow_gets_no_cors_headers() -> None:
    # The loopback policy lets local pages through the guard; CORS lists one.
    local = "http://localhost:3000"
    server = McpHttpApp(make_app().session(), cors=Cors(allow_origins=[PAGE]))
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        answer = await client.post(
            url, json=initialize(), headers={**BASE, "origin": local}
        )
        assert answer.status_code == 200  # served: not a browser's business
        assert "access-control-allow-origin" not in answer.headers
        foreign = await client.post(
            url, json=initialize(), headers={**BASE, "origin": OTHER}
        )
        assert foreign.status_code == 403  # the Origin guard, as without CORS
        assert "access-control-allow-origin" not in foreign.headers


@pytest.mark.anyio
async def test_any_origin_with_a_star_and_extra_headers() -> None:
    cors = Cors(
        allow_origins="*", allow_headers=["X-Trace"], expose_headers=["X-Served-By"]
    )
    server = McpHttpApp(make_app().session(), cors=cors)
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        answer = await client.options(url, headers=preflight(OTHER, headers="x-trace"))
        assert answer.status_code == 204
        assert answer.headers["access-control-allow-origin"] == "*"
        posted = await client.post(
            url, json=initialize(), headers={**BASE, "origin": OTHER}
        )
        assert posted.status_code == 200
        assert posted.headers["access-control-allow-origin"] == "*"
        assert posted.headers["access-control-expose-headers"].endswith("X-Served-By")


@pytest.mark.anyio
async def test_credentials_are_allowed_only_for_listed_origins() -> None:
    cors = Cors(allow_origins=[PAGE], allow_credentials=True)
    server = McpHttpApp(make_app().session(), cors=cors)
    async with served(server) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        answer = await client.options(url, headers=preflight(PAGE))
        assert answer.headers["access-control-allow-credentials"] == "true"
    with pytest.raises(ValueError, match="allow_credentials needs the origins"):
        Cors(allow_origins="*", allow_credentials=True)


@pytest.mark.anyio
async def test_http_app_wraps_every_route_and_a_refusal_carries_cors_headers() -> None:
    async def nobody(request: Any) -> object:
        return None

    app = http_app(
        make_app().session(),
        cors=Cors(allow_origins=[PAGE]),
        authenticate=nobody,
        redis=None,
    )
    assert isinstance(app, CorsApp)
    async with served(app) as url, httpx.AsyncClient(timeout=LIMIT) as client:
        refused = await client.post(
            url, json=initialize(), headers={**BASE, "origin": PAGE}
        )
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == PAGE
        assert "WWW-Authenticate" in refused.headers["access-control-expose-headers"]
        sse = url.removesuffix("/mcp") + "/sse"
        answer = await client.options(sse, headers=preflight(PAGE, "GET"))
        assert answer.status_code == 204


def test_cors_origins_pass_the_origin_guard() -> None:
    loopback = SecurityPolicy.for_bind("127.0.0.1", 8000)
    cors = Cors(allow_origins=[PAGE])
    widened = cors_policy(cors, None, loopback)
    assert widened.allowed_origins is not None
    assert PAGE in widened.allowed_origins
    assert loopback.allowed_origins is not None
    assert loopback.allowed_origins < widened.allowed_origins
    assert widened.allowed_hosts == loopback.allowed_hosts
    assert cors_policy(Cors(allow_origins="*"), None, loopback).allowed_origins is None
    # An explicit policy is checked, never changed.
    explicit = SecurityPolicy(allowed_origins=frozenset({PAGE}))
    assert cors_policy(cors, explicit, loopback) is explicit
    with pytest.raises(ValueError, match=r"CORS allows https://evil\.example"):
        cors_policy(Cors(allow_origins=[OTHER]), explicit, loopback)
    with pytest.raises(ValueError, match="allows every origin"):
        cors_policy(Cors(allow_origins="*"), explicit, loopback)
    with pytest.raises(ValueError, match="CORS allows"):
        McpHttpApp(make_app().session(), policy=explicit, cors=Cors([OTHER]))


def test_an_origin_is_scheme_and_authority_only() -> None:
    with pytest.raises(ValueError, match="not an origin"):
        Cors(allow_origins=["https://app.example/path"])
    with pytest.raises(ValueError, match="not an origin"):
        Cors(allow_origins=["app.example"])
    assert Cors(allow_origins=["http://localhost:*"]).allows_origin(
        "http://localhost:5173"
    )

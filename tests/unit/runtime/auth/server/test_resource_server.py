"""`ResourceServer` protecting an `App` over Streamable HTTP, through the real
ASGI app: the metadata document, 400/401/403 answers and their
`WWW-Authenticate` headers, per-item scopes and filtered lists, in both
protocol eras, and the principal as handlers see it."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.auth.server import Principal, ResourceServer, StaticVerifier

BASE_URL = "http://127.0.0.1:8000"
RESOURCE = f"{BASE_URL}/mcp"
PRM = f"{BASE_URL}/.well-known/oauth-protected-resource/mcp"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
JSON_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}


def principal(subject: str, *scopes: str, **extra: Any) -> Principal:
    return Principal(
        subject=subject,
        client_id="client-1",
        scopes=frozenset(scopes),
        claims={"aud": RESOURCE},  # ResourceServer checks it, as of any token
        issuer="https://as.example",
        **extra,
    )


TOKENS = {
    "reader": principal("alice", "mcp:read"),
    "writer": principal("alice", "mcp:read", "mcp:write", "notes:read"),
    "bob": principal("bob", "mcp:read", "mcp:write"),
    "no-scope": principal("carol"),
    "expired": principal("alice", "mcp:read", expires_at=int(time.time()) - 10),
}


def make_app() -> App:
    app = App("protected", subscriptions=True)

    @app.tool()
    def whoami(ctx: Context) -> str:
        """Name the caller."""
        caller = ctx.principal
        assert isinstance(caller, Principal)
        return f"{caller.subject} {' '.join(sorted(caller.scopes))}"

    @app.tool(scopes=["mcp:write"])
    def write(text: str) -> str:
        """Needs mcp:write."""
        return f"wrote {text}"

    @app.resource("note://public")
    def public() -> str:
        return "public"

    @app.resource("note://secret", scopes=["notes:read"])
    def secret() -> str:
        return "secret"

    @app.resource("note://private/{name}", scopes=["notes:read"])
    def private(name: str) -> str:
        return f"private {name}"

    @app.prompt(scopes=["mcp:write"])
    def draft(topic: str) -> str:
        return f"draft on {topic}"

    @app.completion()
    def complete(
        ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> list[str]:
        return ["alpha", "beta"]

    return app


def resource_server() -> ResourceServer:
    return ResourceServer(
        StaticVerifier(TOKENS),
        RESOURCE,
        authorization_servers=["https://as.example"],
        scopes_supported=["mcp:read", "mcp:write", "notes:read"],
        required_scopes=["mcp:read"],
        resource_name="Protected test server",
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def client() -> AsyncGenerator[httpx.AsyncClient, None]:
    asgi = make_app().asgi(auth=resource_server())
    transport = httpx.ASGITransport(asgi)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
        yield http


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def modern(
    http: httpx.AsyncClient,
    token: str | None,
    method: str,
    params: dict[str, Any] | None = None,
    name: str | None = None,
) -> httpx.Response:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**(params or {}), "_meta": meta},
    }
    headers = {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    if token is not None:
        headers.update(bearer(token))
    return await http.post("/mcp", json=body, headers=headers)


# --- metadata ---------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ],
)
async def test_the_metadata_document_is_served_without_a_token(path: str) -> None:
    async with client() as http:
        response = await http.get(path)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": ["https://as.example"],
        "scopes_supported": ["mcp:read", "mcp:write", "notes:read"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Protected test server",
    }


# --- 400, 401, 403 ----------------------------------------------------------------


@pytest.mark.anyio
async def test_no_token_is_401_naming_the_metadata_and_scopes() -> None:
    async with client() as http:
        response = await modern(http, None, "tools/list")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{PRM}", scope="mcp:read"'
    )


@pytest.mark.anyio
@pytest.mark.parametrize("token", ["unknown", "expired"])
async def test_a_bad_token_is_401_invalid_token(token: str) -> None:
    async with client() as http:
        response = await modern(http, token, "tools/list")
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith(f'Bearer resource_metadata="{PRM}", scope="mcp:read"')
    assert 'error="invalid_token"' in challenge


@pytest.mark.anyio
async def test_another_scheme_is_treated_as_no_token() -> None:
    async with client() as http:
        headers = {**JSON_HEADERS, "authorization": "Basic cmVhZGVyOg=="}
        response = await http.post("/mcp", json={}, headers=headers)
    assert response.status_code == 401
    assert "error=" not in response.headers["www-authenticate"]


@pytest.mark.anyio
async def test_a_token_in_the_query_string_is_refused_even_with_a_header() -> None:
    async with client() as http:
        response = await http.post(
            "/mcp?access_token=writer",
            json={},
            headers={**JSON_HEADERS, **bearer("writer")},
        )
    assert response.status_code == 400
    assert 'error="invalid_request"' in response.headers["www-authenticate"]


@pytest.mark.anyio
async def test_a_token_without_the_required_scopes_is_403() -> None:
    async with client() as http:
        response = await modern(http, "no-scope", "tools/list")
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="mcp:read"' in challenge


# --- 2026: per-item scopes and lists ----------------------------------------------


@pytest.mark.anyio
async def test_modern_lists_show_only_what_the_scopes_allow() -> None:
    async with client() as http:
        reader = await modern(http, "reader", "tools/list")
        writer = await modern(http, "writer", "tools/list")
        reader_res = await modern(http, "reader", "resources/list")
        writer_res = await modern(http, "writer", "resources/list")
        reader_tpl = await modern(http, "reader", "resources/templates/list")
        reader_prompts = await modern(http, "reader", "prompts/list")
        writer_prompts = await modern(http, "writer", "prompts/list")
    assert [t["name"] for t in reader.json()["result"]["tools"]] == ["whoami"]
    assert [t["name"] for t in writer.json()["result"]["tools"]] == ["whoami", "write"]
    assert [r["uri"] for r in reader_res.json()["result"]["resources"]] == [
        "note://public"
    ]
    assert [r["uri"] for r in writer_res.json()["result"]["resources"]] == [
        "note://public",
        "note://secret",
    ]
    assert reader_tpl.json()["result"]["resourceTemplates"] == []
    assert reader_prompts.json()["result"]["prompts"] == []
    assert [p["name"] for p in writer_prompts.json()["result"]["prompts"]] == ["draft"]


@pytest.mark.anyio
async def test_a_modern_call_without_the_tools_scope_is_403_step_up() -> None:
    async with client() as http:
        refused = await modern(
            http,
            "reader",
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            "write",
        )
        allowed = await modern(
            http,
            "writer",
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            "write",
        )
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    # What the caller holds and what it lacks: re-authorizing loses nothing.
    assert 'scope="mcp:read mcp:write"' in challenge
    assert f'resource_metadata="{PRM}"' in challenge
    assert allowed.status_code == 200
    assert allowed.json()["result"]["content"][0]["text"] == "wrote x"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("resources/read", {"uri": "note://secret"}, "note://secret"),
        ("resources/read", {"uri": "note://private/x"}, "note://private/x"),
        ("prompts/get", {"name": "draft", "arguments": {"topic": "x"}}, "draft"),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "draft"},
                "argument": {"name": "topic", "value": "a"},
            },
            None,
        ),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "note://private/{name}"},
                "argument": {"name": "name", "value": "a"},
            },
            None,
        ),
    ],
)
async def test_reads_gets_and_completions_without_the_scope_are_403(
    method: str, params: dict[str, Any], name: str | None
) -> None:
    async with client() as http:
        refused = await modern(http, "reader", method, params, name)
        allowed = await modern(http, "writer", method, params, name)
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    assert allowed.status_code == 200, allowed.text


@pytest.mark.anyio
async def test_handlers_see_the_principal() -> None:
    async with client() as http:
        response = await modern(
            http, "writer", "tools/call", {"name": "whoami", "arguments": {}}, "whoami"
        )
    text = response.json()["result"]["content"][0]["text"]
    assert text == "alice mcp:read mcp:write notes:read"


# --- legacy sessions ----------------------------------------------------------------


async def legacy(
    http: httpx.AsyncClient,
    token: str,
    method: str,
    params: dict[str, Any] | None = None,
    session: str | None = None,
    request_id: int = 1,
) -> httpx.Response:
    headers = {**JSON_HEADERS, **bearer(token)}
    if session is not None:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = LEGACY
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return await http.post("/mcp", json=body, headers=headers)


async def open_session(http: httpx.AsyncClient, token: str) -> str:
    response = await legacy(
        http,
        token,
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    )
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    notified = await http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={
            **JSON_HEADERS,
            **bearer(token),
            "mcp-session-id": session,
            "mcp-protocol-version": LEGACY,
        },
    )
    assert notified.status_code == 202
    return session


@pytest.mark.anyio
async def test_legacy_lists_filter_and_calls_are_403_before_the_session() -> None:
    async with client() as http:
        session = await open_session(http, "reader")
        listed = await legacy(http, "reader", "tools/list", {}, session, 2)
        refused = await legacy(
            http,
            "reader",
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            session,
            3,
        )
        # Stepped up (same caller, more scopes): the session goes on.
        allowed = await legacy(
            http,
            "writer",
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            session,
            3,
        )
        listed_after = await legacy(http, "writer", "tools/list", {}, session, 4)
        # Another caller does not find the session.
        foreign = await legacy(http, "bob", "tools/list", {}, session, 5)
    assert [t["name"] for t in listed.json()["result"]["tools"]] == ["whoami"]
    assert refused.status_code == 403
    assert 'scope="mcp:read mcp:write"' in refused.headers["www-authenticate"]
    assert allowed.json()["result"]["content"][0]["text"] == "wrote x"
    names = [t["name"] for t in listed_after.json()["result"]["tools"]]
    assert names == ["whoami", "write"]
    assert foreign.status_code == 404


@pytest.mark.anyio
async def test_a_legacy_subscription_to_a_protected_resource_is_403() -> None:
    async with client() as http:
        session = await open_session(http, "reader")
        params = {"uri": "note://secret"}
        refused = await legacy(
            http, "reader", "resources/subscribe", params, session, 2
        )
        public = await legacy(
            http, "reader", "resources/subscribe", {"uri": "note://public"}, session, 3
        )
    assert refused.status_code == 403
    assert 'scope="mcp:read notes:read"' in refused.headers["www-authenticate"]
    assert public.json()["result"] == {}


@pytest.mark.anyio
async def test_a_refused_request_in_a_legacy_batch_refuses_the_batch() -> None:
    async with client() as http:
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "write", "arguments": {"text": "x"}},
            },
        ]
        response = await http.post(
            "/mcp", json=batch, headers={**JSON_HEADERS, **bearer("reader")}
        )
    assert response.status_code == 403


def test_the_app_without_auth_is_unrestricted() -> None:
    """Over stdio (no principal) nothing is filtered: see the App tests."""
    app = make_app()
    assert [t["name"] for t in app.list_tools(None)["tools"]] == ["whoami", "write"]
    assert app.scopes_for("tools/call", {"name": "write"}) == {"mcp:write"}
    assert app.scopes_for("resources/read", {"uri": "note://private/a"}) == {
        "notes:read"
    }
    assert app.scopes_for("tools/list", {}) == frozenset()
    assert app.scopes_for("resources/subscribe", {"uri": "note://secret"}) == {
        "notes:read"
    }
    ref = {"type": "ref/prompt", "name": "draft"}
    assert app.scopes_for("completion/complete", {"ref": ref}) == {"mcp:write"}
    ref = {"type": "ref/resource", "uri": "note://private/{name}"}
    assert app.scopes_for("completion/complete", {"ref": ref}) == {"notes:read"}


@pytest.mark.anyio
async def test_without_the_http_check_the_app_refuses_the_call_itself() -> None:
    """`http_app` given `auth` but no `required_scopes`: the request reaches
    the app, whose own check refuses it with -32602."""
    from mcp_specgen_runtime.transports.http.server import http_app

    asgi = http_app(make_app().session(), auth=resource_server())
    transport = httpx.ASGITransport(asgi)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
        response = await modern(
            http, "reader", "tools/call", {"name": "write", "arguments": {}}, "write"
        )
        completion = await modern(
            http,
            "reader",
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "draft"},
                "argument": {"name": "topic", "value": "a"},
            },
        )
    error = response.json()["error"]
    assert error["code"] == -32602
    assert "Insufficient scope" in error["message"]
    assert error["data"] == {"requiredScopes": ["mcp:write"]}
    assert completion.json()["error"]["data"] == {"requiredScopes": ["mcp:write"]}


def test_a_protected_http_app_protects_http_sse_too() -> None:
    from mcp_specgen_runtime.auth.server.routes import MetadataRoutes
    from mcp_specgen_runtime.transports.http.legacy_sse import LegacySseApp
    from mcp_specgen_runtime.transports.http.server import McpHttpApp, http_app

    app = make_app()
    auth = resource_server()
    protected = http_app(app.session(), auth=auth, required_scopes=app.scopes_for)
    assert isinstance(protected, MetadataRoutes)
    legacy = protected.app
    assert isinstance(legacy, LegacySseApp)
    assert (legacy.auth, legacy.required_scopes) == (auth, app.scopes_for)
    assert isinstance(legacy.fallback, McpHttpApp)
    assert legacy.fallback.auth is auth


def test_authenticate_and_auth_are_exclusive() -> None:
    from mcp_specgen_runtime.transports.http.server import McpHttpApp

    async def anyone(request: object) -> object:
        return "anyone"

    with pytest.raises(ValueError, match="not both"):
        McpHttpApp(make_app().session(), authenticate=anyone, auth=resource_server())

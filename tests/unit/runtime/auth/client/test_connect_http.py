"""The OAuth flow through `connect_http`: a protected `App` served in-process
(its `authenticate` hook accepts only tokens the fake authorization server
minted), discovery, registration, authorization, and the tool call."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.auth.client import ClientMetadata, OAuthClientAuth
from mcp_specgen_runtime.transports.http.client import connect_http
from mcp_specgen_runtime.transports.http.security import SecurityPolicy
from mcp_specgen_runtime.transports.http.server import HttpRequest
from mcp_specgen_types import v2025_11_25

from .world import MCP, PRM, World

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def protected_app(world: World) -> Any:
    app = App("protected", version="1")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message."""
        return message

    async def bearer(request: HttpRequest) -> object:
        token = (request.headers.get("authorization") or "").removeprefix("Bearer ")
        return token if token in world.access else None

    policy = SecurityPolicy(allowed_hosts=frozenset({"mcp.example.com"}))
    inner = app.asgi(authenticate=bearer, policy=policy)

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        # The resource metadata beside the endpoint (RFC 9728).
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
            status, body = 404, b""
            if scope["path"] == "/.well-known/oauth-protected-resource/mcp":
                body = b'{"resource":"%s","authorization_servers":["%s"]}' % (
                    MCP.encode(),
                    world.issuer.encode(),
                )
                status = 200
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await inner(scope, receive, send)

    return asgi


class Router(httpx.AsyncBaseTransport):
    """mcp.example.com to the app, the rest to the fake authorization server."""

    def __init__(self, world: World) -> None:
        self.app = httpx.ASGITransport(protected_app(world))
        self.rest = httpx.MockTransport(world.handle)
        self.world = world

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "mcp.example.com":
            self.world.log.append(f"{request.method} {request.url}")
            return await self.app.handle_async_request(request)
        return await self.rest.handle_async_request(request)


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_tool_call_through_the_whole_flow(version: str) -> None:
    world = World()
    auth = OAuthClientAuth(
        MCP,
        redirect_handler=world.redirect,
        callback=world.callback,
        client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:1/cb"]),
    )
    async with httpx.AsyncClient(transport=Router(world)) as http:
        with anyio.fail_after(LIMIT):
            async with connect_http(
                MCP,
                name="t",
                version="1",
                http_client=http,
                auth=auth,
                versions=[version],
            ) as session:
                assert session.protocol_version == version
                client = v2025_11_25.Client(session)
                result = await client.call_tool(
                    name="echo", arguments={"message": "hi"}
                )
    assert result.content[0] == v2025_11_25.TextContent(text="hi")
    assert len(world.authorizations) == 1
    assert world.log.index(f"GET {PRM}") < world.log.index(
        "POST https://auth.example.com/token"
    )
    assert auth.tokens is not None and auth.tokens.access_token in world.access

"""Our OAuth client against a real authorization server: npm `oidc-provider`.

The provider (`programs/oidc_provider.mjs`, on the Node.js 22 of
`.cache/peers/`, installed by `benchmarks.node22`) runs on a free loopback
port with open Dynamic Client Registration and resource indicators that make
the access token a JWT for the MCP resource. A protected `App` runs
in-process behind its `authenticate` hook, which accepts only a JWT the
provider signed (its JWKS), for this resource, unexpired, with `mcp:tools`.

`OAuthClientAuth` through `connect_http` finds the provider through the
resource metadata and OpenID Connect discovery, registers, sends the "user"
(a scripted browser logging in on the provider's own pages) to authorize
with PKCE, receives the code on a `LoopbackCallback`, redeems it, and calls
the tool: in the 2025-11-25 era and in the 2026-07-28 one.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import anyio
import httpx
import pytest
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from benchmarks import node22
from mcp_codegen_runtime.app import App
from mcp_codegen_runtime.auth.client import (
    ClientMetadata,
    LoopbackCallback,
    OAuthClientAuth,
)
from mcp_codegen_runtime.transports.http.client import connect_http
from mcp_codegen_runtime.transports.http.security import SecurityPolicy
from mcp_codegen_runtime.transports.http.server import HttpRequest
from mcp_codegen_types import v2025_11_25

PROVIDER = Path(__file__).parent / "programs" / "oidc_provider.mjs"
MCP = "http://mcp.test/mcp"
LIMIT = 60.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    project = node22.ensure_oidc_provider()
    package = project / "node_modules" / node22.OIDC_PROVIDER_PACKAGE
    port = _free_port()
    provider = subprocess.Popen(
        [str(node22.node22_executable()), str(PROVIDER), str(port), MCP, str(package)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert provider.stdout is not None
        line = provider.stdout.readline()
        assert line.startswith("ready "), line
        yield line.split()[1]
    finally:
        provider.terminate()
        provider.wait(timeout=10)
        if provider.stdout is not None:
            provider.stdout.close()


def protected_app(issuer: str, keys: KeySet) -> Any:
    """The App behind a JWT check, with its resource metadata beside it."""
    app = App("protected", version="1")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message."""
        return message

    async def bearer(request: HttpRequest) -> object:
        token = (request.headers.get("authorization") or "").removeprefix("Bearer ")
        try:
            claims = jwt.decode(token, keys).claims
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": issuer},
                aud={"essential": True, "value": MCP},
                exp={"essential": True},
            ).validate(claims)
        except (JoseError, ValueError):
            return None
        return claims["sub"] if "mcp:tools" in claims.get("scope", "").split() else None

    policy = SecurityPolicy(allowed_hosts=frozenset({"mcp.test"}))
    inner = app.asgi(authenticate=bearer, policy=policy)
    metadata = json.dumps(
        {
            "resource": MCP,
            "authorization_servers": [issuer],
            "scopes_supported": ["mcp:tools"],
        }
    ).encode()

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
            found = scope["path"] == "/.well-known/oauth-protected-resource/mcp"
            await send(
                {
                    "type": "http.response.start",
                    "status": 200 if found else 404,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send(
                {"type": "http.response.body", "body": metadata if found else b""}
            )
            return
        await inner(scope, receive, send)

    return asgi


class Router(httpx.AsyncBaseTransport):
    """mcp.test to the in-process app; everything else over the network."""

    def __init__(self, app: Any) -> None:
        self.app = httpx.ASGITransport(app)
        self.network = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "mcp.test":
            return await self.app.handle_async_request(request)
        return await self.network.handle_async_request(request)

    async def aclose(self) -> None:
        await self.network.aclose()


_FORM = re.compile(r'<form[^>]*action="([^"]+)"')
_HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)"')


async def browse(url: str, logins: list[str]) -> None:
    """The user: follows redirects, signs in and consents on the provider's
    pages, and lands on the redirect URI (the loopback callback)."""
    async with httpx.AsyncClient(follow_redirects=False) as browser:
        response = await browser.get(url)
        for _ in range(20):
            if response.is_redirect:
                url = urljoin(url, response.headers["location"])
                response = await browser.get(url)
                continue
            form = _FORM.search(response.text)
            if form is None:
                return  # the callback's page: done
            fields = dict(_HIDDEN.findall(response.text))
            if fields.get("prompt") == "login":
                fields |= {"login": "alice", "password": "any"}
                logins.append(url)
            url = urljoin(url, form.group(1))
            response = await browser.post(url, data=fields)
        raise AssertionError("the authorization never came back")


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_register_authorize_and_call_a_tool(issuer: str, version: str) -> None:
    async with httpx.AsyncClient() as plain:
        discovery = (
            await plain.get(f"{issuer}/.well-known/openid-configuration")
        ).json()
        keys = KeySet.import_key_set((await plain.get(discovery["jwks_uri"])).json())
    logins: list[str] = []
    with anyio.fail_after(LIMIT):
        async with LoopbackCallback() as callback, anyio.create_task_group() as user:

            async def open_browser(url: str) -> None:
                user.start_soon(browse, url, logins)

            auth = OAuthClientAuth(
                MCP,
                redirect_handler=open_browser,
                callback=callback,
                client_metadata=ClientMetadata(
                    client_name="mcp-codegen e2e", redirect_uris=[callback.redirect_uri]
                ),
            )
            async with httpx.AsyncClient(
                transport=Router(protected_app(issuer, keys))
            ) as http:
                async with connect_http(
                    MCP,
                    name="e2e",
                    version="1",
                    http_client=http,
                    auth=auth,
                    versions=[version],
                ) as session:
                    assert session.protocol_version == version
                    result = await v2025_11_25.Client(session).call_tool(
                        name="echo", arguments={"message": "hi"}
                    )
            assert result.content[0] == v2025_11_25.TextContent(text="hi")
            assert len(logins) == 1
            assert auth.client is not None and auth.client.issuer == issuer
            assert auth.tokens is not None
            claims = jwt.decode(auth.tokens.access_token, keys).claims
            assert (claims["iss"], claims["aud"], claims["sub"]) == (
                issuer,
                MCP,
                "alice",
            )

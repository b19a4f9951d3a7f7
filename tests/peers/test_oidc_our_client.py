"""Our OAuth client against a real authorization server (npm `oidc-provider`)
in front of our real resource server (`examples/protected_server.py`: an
`App` behind `ResourceServer` + `JwtVerifier`, which checks every token
against the provider's JWKS); the `deployment` fixture runs both.

`OAuthClientAuth` through `connect_http`, in the 2025-11-25 era and in the
2026-07-28 one, starts with no token: 401, the resource metadata, the
provider's discovery document, registration, the "user" (a scripted browser
following the provider's redirects with its cookies) authorizing with PKCE
S256 and `resource` = the example's URL, the code back on a
`LoopbackCallback`, a JWT; `whoami` succeeds. Then `write` (it needs
`mcp:write`) gets 403 `insufficient_scope`: the client authorizes again with
the union of the scopes, and the retry succeeds.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from mcp_specgen_runtime.auth.client import (
    ClientMetadata,
    LoopbackCallback,
    OAuthClientAuth,
)
from mcp_specgen_runtime.auth.server import JwtVerifier
from mcp_specgen_runtime.transports.http.client import connect_http
from mcp_specgen_types import v2025_11_25
from tests.peers.oidc_support import Deployment

LIMIT = 60.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def browse(url: str) -> None:
    """The user: follows the provider's redirects (its scripted login and
    consent) with its cookies, to the redirect URI (the loopback callback)."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=20) as browser:
        response = await browser.get(url)
        assert response.status_code == 200, response.text


def text(result: v2025_11_25.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, v2025_11_25.TextContent)
    return content.text


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_our_client_signs_in_and_steps_up(
    deployment: Deployment, version: str
) -> None:
    deployment.grants()
    asked: list[dict[str, list[str]]] = []
    with anyio.fail_after(LIMIT):
        async with LoopbackCallback() as callback, anyio.create_task_group() as user:

            async def open_browser(url: str) -> None:
                asked.append(parse_qs(urlsplit(url).query))
                user.start_soon(browse, url)

            auth = OAuthClientAuth(
                deployment.url,
                redirect_handler=open_browser,
                callback=callback,
                client_metadata=ClientMetadata(
                    client_name="mcp-codegen e2e", redirect_uris=[callback.redirect_uri]
                ),
            )
            async with connect_http(
                deployment.url, name="e2e", version="1", auth=auth, versions=[version]
            ) as session:
                assert session.protocol_version == version
                client = v2025_11_25.Client(session)
                before = await client.call_tool(name="whoami", arguments={})
                wrote = await client.call_tool(name="write", arguments={"text": "x"})
                after = await client.call_tool(name="whoami", arguments={})
            assert text(before) == "interop-user mcp:read"
            assert text(wrote) == "wrote x"
            assert text(after) == "interop-user mcp:read mcp:write"
            assert [set(a["scope"][0].split()) for a in asked] == [
                {"mcp:read", "offline_access"},
                {"mcp:read", "mcp:write", "offline_access"},
            ]
            assert {a["resource"][0] for a in asked} == {deployment.url}
            assert {a["code_challenge_method"][0] for a in asked} == {"S256"}
            grants = deployment.grants()
            codes = [g for g in grants if g["grant"] == "authorization_code"]
            assert [g["scope"] for g in codes] == ["mcp:read", "mcp:read mcp:write"]
            assert {g["aud"] for g in grants} == {deployment.url}
            assert auth.client is not None and auth.client.issuer == deployment.issuer
            # The token held last: what our verifier makes of it.
            assert auth.tokens is not None
            verifier = JwtVerifier(deployment.issuer, deployment.url)
            principal = await verifier.verify(auth.tokens.access_token)
            assert principal is not None
            assert principal.subject == "interop-user"
            assert principal.scopes == frozenset({"mcp:read", "mcp:write"})

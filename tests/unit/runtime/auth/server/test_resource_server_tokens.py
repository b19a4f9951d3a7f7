"""`ResourceServer.authenticate` on the tokens its verifiers accept: the
audience it checks itself, whatever the verifier (RFC 8707), and the expiry
it leaves to the verifier (whose leeway then holds)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from mcp_specgen_runtime.auth.server import (
    IntrospectionVerifier,
    JwtVerifier,
    Principal,
    ResourceServer,
    StaticVerifier,
)
from mcp_specgen_runtime.auth.server.base import TokenVerifier
from mcp_specgen_runtime.transports.http.auth import AuthChallenge, HttpRequest
from mcp_specgen_runtime.transports.http.headers import HttpHeaders
from tests.unit.runtime.auth.server.keys import ISSUER, JWKS_URI, RESOURCE, Issuer

OTHER = "https://other.example/mcp"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def protecting(verifier: TokenVerifier) -> ResourceServer:
    return ResourceServer(verifier, RESOURCE, authorization_servers=[ISSUER])


async def caller(server: ResourceServer, token: str = "t") -> Principal:
    headers = HttpHeaders.from_asgi([(b"authorization", f"Bearer {token}".encode())])
    return await server.authenticate(HttpRequest("POST", "/mcp", headers, None))


async def refused(server: ResourceServer, token: str = "t") -> AuthChallenge:
    with pytest.raises(AuthChallenge) as raised:
        await caller(server, token)
    return raised.value


def introspecting(**answer: Any) -> IntrospectionVerifier:
    """A verifier without an audience of its own (the default), whose
    endpoint calls every token active with `answer`'s members."""
    body = {"active": True, "sub": "alice", "iss": ISSUER, **answer}
    body = {name: value for name, value in body.items() if value is not None}
    transport = httpx.MockTransport(lambda _: httpx.Response(200, json=body))
    return IntrospectionVerifier(
        "https://as.example/introspect", http=httpx.AsyncClient(transport=transport)
    )


@pytest.mark.anyio
async def test_an_introspected_token_for_another_resource_is_401() -> None:
    challenge = await refused(protecting(introspecting(aud=OTHER)))
    assert challenge.status == 401
    assert 'error="invalid_token"' in challenge.www_authenticate


@pytest.mark.anyio
async def test_an_introspected_token_naming_no_audience_is_401() -> None:
    assert (await refused(protecting(introspecting(aud=None)))).status == 401


@pytest.mark.anyio
async def test_an_introspected_token_for_this_resource_is_accepted() -> None:
    server = protecting(introspecting(aud=[OTHER, "HTTPS://MCP.example/mcp/"]))
    assert (await caller(server)).subject == "alice"


@pytest.mark.anyio
async def test_a_static_principal_names_its_audience_in_its_claims() -> None:
    mine = Principal(subject="alice", claims={"aud": RESOURCE})
    theirs = Principal(subject="bob", claims={"aud": OTHER})
    bare = Principal(subject="carol")
    server = protecting(StaticVerifier({"mine": mine, "theirs": theirs, "bare": bare}))
    assert await caller(server, "mine") is mine
    assert (await refused(server, "theirs")).status == 401
    assert (await refused(server, "bare")).status == 401


def jwt_server(issuer: Issuer) -> ResourceServer:
    verifier = JwtVerifier(ISSUER, RESOURCE, jwks_uri=JWKS_URI, http=issuer.client())
    assert verifier.leeway_s == 30
    return protecting(verifier)


@pytest.mark.anyio
async def test_a_token_expired_within_the_verifiers_leeway_is_accepted() -> None:
    issuer = Issuer()
    token = issuer.token(exp=int(time.time()) - 10)
    assert (await caller(jwt_server(issuer), token)).subject == "alice"


@pytest.mark.anyio
async def test_a_token_expired_past_the_verifiers_leeway_is_401() -> None:
    issuer = Issuer()
    token = issuer.token(exp=int(time.time()) - 60)
    assert (await refused(jwt_server(issuer), token)).status == 401

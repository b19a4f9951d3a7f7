"""DPoP (RFC 9449): the proofs, and a flow binding its tokens to the key,
with the nonces the authorization server and the MCP server ask for."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_specgen_runtime.auth.client import (
    ClientCredentialsAuth,
    DPoPKey,
    TokenError,
)

MCP = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def check(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of a proof, its signature checked with the key
    it carries."""
    head = proof.split(".")[0]
    header: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    )
    key = ECKey.import_key(header["jwk"])
    token = jwt.decode(proof, key, algorithms=["ES256"])
    return dict(token.header), dict(token.claims)


def test_a_proof_carries_the_public_key_method_uri_and_token_hash() -> None:
    key = DPoPKey()
    header, claims = check(
        key.proof("POST", "https://mcp.example.com/mcp?x=1#f", access_token="tok")
    )
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert "d" not in header["jwk"]
    assert (claims["htm"], claims["htu"]) == ("POST", "https://mcp.example.com/mcp")
    digest = hashlib.sha256(b"tok").digest()
    assert claims["ath"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert "nonce" not in claims
    _, again = check(key.proof("POST", "https://mcp.example.com/mcp"))
    assert again["jti"] != claims["jti"] and "ath" not in again


def test_nonces_are_kept_per_origin() -> None:
    key = DPoPKey()
    assert key.remember_nonce("https://a.example/x", "n1")
    assert not key.remember_nonce("https://a.example/y", "n1")
    assert not key.remember_nonce("https://a.example/y", None)
    _, claims = check(key.proof("GET", "https://a.example/z"))
    assert claims["nonce"] == "n1"
    _, other = check(key.proof("GET", "https://b.example/z"))
    assert "nonce" not in other


class Servers:
    """A token endpoint and an MCP endpoint that both want DPoP nonces."""

    def __init__(self, *, advertise: bool = True) -> None:
        self.advertise = advertise
        self.token_proofs: list[dict[str, Any]] = []
        self.mcp_calls: list[tuple[str, dict[str, Any] | None]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == MCP:
            return self._mcp(request)
        if url.endswith("/oauth-protected-resource/mcp"):
            return httpx.Response(
                200, json={"resource": MCP, "authorization_servers": [ISSUER]}
            )
        if url == f"{ISSUER}/.well-known/oauth-authorization-server":
            metadata: dict[str, Any] = {
                "issuer": ISSUER,
                "token_endpoint": f"{ISSUER}/token",
            }
            if self.advertise:
                metadata["dpop_signing_alg_values_supported"] = ["ES256"]
            return httpx.Response(200, json=metadata)
        assert url == f"{ISSUER}/token"
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        assert form["grant_type"] == "client_credentials"
        proof = request.headers.get("DPoP")
        if proof is None:
            return httpx.Response(
                200, json={"access_token": "plain", "token_type": "Bearer"}
            )
        _, claims = check(proof)
        self.token_proofs.append(claims)
        if claims.get("nonce") != "as-nonce":
            return httpx.Response(
                400,
                json={"error": "use_dpop_nonce"},
                headers={"DPoP-Nonce": "as-nonce"},
            )
        return httpx.Response(200, json={"access_token": "bound", "token_type": "DPoP"})

    def _mcp(self, request: httpx.Request) -> httpx.Response:
        authorization = request.headers.get("Authorization", "")
        proof = request.headers.get("DPoP")
        claims = check(proof)[1] if proof else None
        self.mcp_calls.append((authorization, claims))
        if authorization == "Bearer plain":
            return httpx.Response(200)
        if authorization != "DPoP bound":
            return httpx.Response(401, headers={"WWW-Authenticate": "Bearer"})
        if claims is None or claims.get("nonce") != "rs-nonce":
            return httpx.Response(
                401,
                headers={
                    "WWW-Authenticate": 'DPoP error="use_dpop_nonce"',
                    "DPoP-Nonce": "rs-nonce",
                },
            )
        return httpx.Response(200)


async def call(servers: Servers, auth: httpx.Auth) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(servers.handle), auth=auth
    ) as http:
        with anyio.fail_after(LIMIT):
            return await http.post(MCP, json={})


@pytest.mark.anyio
async def test_tokens_bound_to_the_key_with_both_nonces() -> None:
    servers = Servers()
    key = DPoPKey()
    auth = ClientCredentialsAuth(MCP, client_id="bot", client_secret="s", dpop=key)
    response = await call(servers, auth)
    assert response.status_code == 200
    # The token endpoint asked for its nonce once; the second proof had it.
    assert [c.get("nonce") for c in servers.token_proofs] == [None, "as-nonce"]
    assert all(c["htu"] == f"{ISSUER}/token" for c in servers.token_proofs)
    schemes = [authorization for authorization, _ in servers.mcp_calls]
    assert schemes == ["", "DPoP bound", "DPoP bound"]
    last = servers.mcp_calls[-1][1]
    assert last is not None and last["nonce"] == "rs-nonce" and "ath" in last


@pytest.mark.anyio
async def test_no_proofs_where_the_server_takes_none() -> None:
    servers = Servers(advertise=False)
    auth = ClientCredentialsAuth(
        MCP, client_id="bot", client_secret="s", dpop=DPoPKey()
    )
    response = await call(servers, auth)
    assert response.status_code == 200
    assert servers.token_proofs == []
    assert servers.mcp_calls[-1] == ("Bearer plain", None)


@pytest.mark.anyio
async def test_a_dpop_token_without_a_proof_is_refused() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if str(request.url) == f"{ISSUER}/token":
            return httpx.Response(200, json={"access_token": "x", "token_type": "DPoP"})
        return Servers(advertise=False).handle(request)

    auth = ClientCredentialsAuth(MCP, client_id="bot", client_secret="s")
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(handle), auth=auth
    ) as http:
        with anyio.fail_after(LIMIT), pytest.raises(TokenError, match="DPoP"):
            await http.post(MCP, json={})

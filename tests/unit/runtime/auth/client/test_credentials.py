"""`ClientCredentialsAuth`, `JwtBearerAuth` and `EnterpriseAuth`: tokens
without a user, against a fake server accepting one grant."""

from __future__ import annotations

import base64
from collections.abc import Callable
from urllib.parse import parse_qs

import anyio
import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_specgen_runtime.auth.client import (
    AuthorizationError,
    ClientCredentialsAuth,
    EnterpriseAuth,
    JwtBearerAuth,
    PrivateKeyJwt,
    TokenError,
)

MCP = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
IDP = "https://idp.example.com/token"
LIMIT = 10.0

Grant = Callable[[dict[str, str], httpx.Request], httpx.Response]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def handler(
    grant: Grant, log: list[dict[str, str]]
) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == MCP:
            if request.headers.get("Authorization") == "Bearer minted":
                return httpx.Response(200, json={"ok": True})
            return httpx.Response(
                401, headers={"WWW-Authenticate": 'Bearer scope="jobs"'}
            )
        if url.endswith("/.well-known/oauth-protected-resource/mcp"):
            return httpx.Response(
                200, json={"resource": MCP, "authorization_servers": [ISSUER]}
            )
        if url == f"{ISSUER}/.well-known/oauth-authorization-server":
            return httpx.Response(
                200,
                json={
                    "issuer": ISSUER,
                    "token_endpoint": f"{ISSUER}/token",
                    "token_endpoint_auth_methods_supported": [
                        "client_secret_basic",
                        "private_key_jwt",
                    ],
                },
            )
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        log.append({"url": url, **form})
        return grant(form, request)

    return handle


def minted(form: dict[str, str], request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"access_token": "minted", "token_type": "Bearer"})


async def call(
    auth: httpx.Auth, grant: Grant
) -> tuple[httpx.Response, list[dict[str, str]]]:
    log: list[dict[str, str]] = []
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(handler(grant, log)), auth=auth
    ) as http:
        with anyio.fail_after(LIMIT):
            return await http.post(MCP, json={}), log


@pytest.mark.anyio
async def test_client_secret_basic() -> None:
    seen: list[str] = []

    def grant(form: dict[str, str], request: httpx.Request) -> httpx.Response:
        seen.append(base64.b64decode(request.headers["Authorization"][6:]).decode())
        return minted(form, request)

    auth = ClientCredentialsAuth(MCP, client_id="bot", client_secret="s3")
    response, log = await call(auth, grant)
    assert response.status_code == 200
    assert log == [
        {
            "url": f"{ISSUER}/token",
            "grant_type": "client_credentials",
            "resource": MCP,
            "scope": "jobs",
        }
    ]
    assert seen == ["bot:s3"]


@pytest.mark.anyio
async def test_private_key_jwt() -> None:
    key = ECKey.generate_key("P-256")
    auth = ClientCredentialsAuth(
        MCP,
        client_id="bot",
        private_key=PrivateKeyJwt(key=key.as_pem(private=True).decode()),
    )
    response, log = await call(auth, minted)
    assert response.status_code == 200
    claims = jwt.decode(log[0]["client_assertion"], key).claims
    assert (claims["iss"], claims["aud"]) == ("bot", ISSUER)


def test_exactly_one_credential() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentialsAuth(MCP, client_id="bot")


@pytest.mark.anyio
async def test_a_refused_grant_is_an_error_not_a_retry() -> None:
    def refuse(form: dict[str, str], request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": "unauthorized_client"})

    auth = JwtBearerAuth(MCP, client_id="workload", assertion="jwt")
    with pytest.raises(TokenError, match="unauthorized_client"):
        await call(auth, refuse)


@pytest.mark.anyio
async def test_workload_jwt_bearer() -> None:
    auth = JwtBearerAuth(MCP, client_id="workload", assertion=lambda: "the-jwt")
    response, log = await call(auth, minted)
    assert response.status_code == 200
    assert log == [
        {
            "url": f"{ISSUER}/token",
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "assertion": "the-jwt",
            "resource": MCP,
            "scope": "jobs",
            "client_id": "workload",
        }
    ]


@pytest.mark.anyio
async def test_enterprise_exchange_then_jwt_bearer() -> None:
    def grant(form: dict[str, str], request: httpx.Request) -> httpx.Response:
        if str(request.url) == IDP:
            return httpx.Response(
                200,
                json={
                    "access_token": "id-jag",
                    "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "token_type": "N_A",
                },
            )
        return minted(form, request)

    auth = EnterpriseAuth(
        MCP,
        client_id="app",
        client_secret="s",
        id_token="id-token",
        idp_token_endpoint=IDP,
        idp_client_id="idp-app",
    )
    response, log = await call(auth, grant)
    assert response.status_code == 200
    exchange, bearer = log
    assert exchange == {
        "url": IDP,
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "subject_token": "id-token",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "audience": ISSUER,
        "resource": MCP,
        "client_id": "idp-app",
        "scope": "jobs",
    }
    assert bearer["assertion"] == "id-jag"
    assert bearer["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.mark.anyio
async def test_a_refused_exchange_is_an_error() -> None:
    def grant(form: dict[str, str], request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": "invalid_grant"})

    auth = EnterpriseAuth(
        MCP,
        client_id="app",
        client_secret="s",
        id_token="id-token",
        idp_token_endpoint=IDP,
        idp_client_id="idp-app",
    )
    with pytest.raises(AuthorizationError, match="identity provider"):
        await call(auth, grant)

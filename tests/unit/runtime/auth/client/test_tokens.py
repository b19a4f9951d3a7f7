"""Token requests with each client authentication, and token responses."""

from __future__ import annotations

import base64
import time
from urllib.parse import parse_qs

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcp_specgen_runtime.auth import AuthorizationServerMetadata
from mcp_specgen_runtime.auth.client.assertion import ASSERTION_TYPE, PrivateKeyJwt
from mcp_specgen_runtime.auth.client.documents import (
    ClientInformation,
    TokenSet,
)
from mcp_specgen_runtime.auth.client.errors import TokenError
from mcp_specgen_runtime.auth.client.tokens import (
    auth_method,
    authorization_code_request,
    client_credentials_request,
    read_token_response,
    refresh_request,
)

from .support import json_response

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"


def server(methods: list[str] | None = None) -> AuthorizationServerMetadata:
    return AuthorizationServerMetadata(
        issuer=ISSUER,
        token_endpoint=f"{ISSUER}/token",
        token_endpoint_auth_methods_supported=methods,
    )


def form(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def code_request(client: ClientInformation, **kw: object) -> httpx.Request:
    return authorization_code_request(
        server(["client_secret_basic", "client_secret_post", "none"]),
        client,
        code="the-code",
        code_verifier="v" * 50,
        redirect_uri="http://127.0.0.1/cb",
        resource=RESOURCE,
        **kw,  # type: ignore[arg-type]
    )


def test_client_secret_basic_form_encodes_both_halves() -> None:
    client = ClientInformation(
        client_id="id:1",
        client_secret="s e/cret",
        token_endpoint_auth_method="client_secret_basic",
    )
    request = code_request(client)
    scheme, _, value = request.headers["Authorization"].partition(" ")
    assert scheme == "Basic"
    assert base64.b64decode(value).decode() == "id%3A1:s%20e%2Fcret"
    assert form(request) == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "code_verifier": "v" * 50,
        "redirect_uri": "http://127.0.0.1/cb",
        "resource": RESOURCE,
    }


def test_client_secret_post_puts_the_secret_in_the_body() -> None:
    client = ClientInformation(
        client_id="id",
        client_secret="s",
        token_endpoint_auth_method="client_secret_post",
    )
    request = code_request(client)
    assert "Authorization" not in request.headers
    assert form(request)["client_secret"] == "s"
    assert form(request)["client_id"] == "id"


def test_none_sends_only_the_client_id() -> None:
    request = code_request(
        ClientInformation(client_id="id", token_endpoint_auth_method="none")
    )
    assert "Authorization" not in request.headers
    assert form(request)["client_id"] == "id"
    assert "client_secret" not in form(request)


def test_private_key_jwt_assertion_verifies() -> None:
    key = ECKey.generate_key("P-256")
    signer = PrivateKeyJwt(key=key.as_pem(private=True).decode(), key_id="k1")
    request = client_credentials_request(
        server(["private_key_jwt"]),
        ClientInformation(client_id="bot"),
        resource=RESOURCE,
        scope="read",
        key=signer,
    )
    body = form(request)
    assert body["grant_type"] == "client_credentials"
    assert body["scope"] == "read"
    assert body["client_assertion_type"] == ASSERTION_TYPE
    token = jwt.decode(body["client_assertion"], key, algorithms=["ES256"])
    assert token.header["kid"] == "k1"
    claims = token.claims
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("bot", "bot", ISSUER)
    assert claims["exp"] - claims["iat"] == 300
    second = client_credentials_request(
        server(["private_key_jwt"]),
        ClientInformation(client_id="bot"),
        resource=RESOURCE,
        scope=None,
        key=signer,
    )
    assert "scope" not in form(second)
    again = jwt.decode(form(second)["client_assertion"], key, algorithms=["ES256"])
    assert again.claims["jti"] != claims["jti"]


@pytest.mark.parametrize(
    ("client", "offered", "key", "expected"),
    [
        (
            ClientInformation(client_id="a", client_secret="s"),
            None,
            False,
            "client_secret_basic",
        ),
        (
            ClientInformation(client_id="a", client_secret="s"),
            ["client_secret_post"],
            False,
            "client_secret_post",
        ),
        (
            ClientInformation(client_id="a"),
            ["client_secret_basic", "none"],
            False,
            "none",
        ),
        (
            ClientInformation(client_id="a"),
            ["private_key_jwt"],
            True,
            "private_key_jwt",
        ),
        (ClientInformation(client_id="a"), None, False, "none"),
        (
            ClientInformation(
                client_id="a",
                client_secret="s",
                token_endpoint_auth_method="client_secret_post",
            ),
            ["client_secret_basic"],
            False,
            "client_secret_post",
        ),
    ],
)
def test_auth_method_choice(
    client: ClientInformation, offered: list[str] | None, key: bool, expected: str
) -> None:
    signer = PrivateKeyJwt(key="unused") if key else None
    assert auth_method(client, server(offered), signer) == expected


def test_refresh_request() -> None:
    request = refresh_request(
        server(),
        ClientInformation(client_id="id", token_endpoint_auth_method="none"),
        refresh_token="r1",
        resource=RESOURCE,
    )
    assert form(request) == {
        "grant_type": "refresh_token",
        "refresh_token": "r1",
        "resource": RESOURCE,
        "client_id": "id",
    }


def test_a_token_response_is_stamped() -> None:
    before = time.time()
    tokens = read_token_response(
        json_response(
            200,
            {
                "access_token": "at",
                "token_type": "bearer",
                "expires_in": 60,
                "refresh_token": "rt",
            },
        ),
        issuer=ISSUER,
        resource=RESOURCE,
    )
    assert (
        tokens.access_token,
        tokens.refresh_token,
        tokens.issuer,
        tokens.resource,
    ) == (
        "at",
        "rt",
        ISSUER,
        RESOURCE,
    )
    assert (
        tokens.expires_at is not None
        and before + 60 <= tokens.expires_at <= time.time() + 60
    )
    assert not tokens.expired()
    assert tokens.expired(now=tokens.expires_at - 10)


def test_a_refresh_answer_without_refresh_token_keeps_the_old_one() -> None:
    tokens = read_token_response(
        json_response(200, {"access_token": "new", "token_type": "Bearer"}),
        issuer=ISSUER,
        resource=RESOURCE,
        previous=TokenSet(access_token="old", refresh_token="keep"),
    )
    assert (tokens.access_token, tokens.refresh_token, tokens.expires_at) == (
        "new",
        "keep",
        None,
    )


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (
            json_response(400, {"error": "invalid_grant", "error_description": "used"}),
            "invalid_grant",
        ),
        (httpx.Response(500, text="oops"), "invalid_response"),
        (json_response(200, {"token_type": "Bearer"}), "invalid_response"),
        (
            json_response(200, {"access_token": "a", "token_type": "DPoP"}),
            "invalid_response",
        ),
    ],
)
def test_errors(response: httpx.Response, error: str) -> None:
    with pytest.raises(TokenError) as caught:
        read_token_response(response, issuer=ISSUER, resource=RESOURCE)
    assert caught.value.error == error

"""The authorization request (PKCE S256, state, resource, scope) and the
checks of its response (state, RFC 9207 `iss`)."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_specgen_runtime.auth import AuthorizationServerMetadata
from mcp_specgen_runtime.auth.client.authorization import (
    AuthorizationRequest,
    check_response,
    start_authorization,
)
from mcp_specgen_runtime.auth.client.errors import AuthorizationError
from mcp_specgen_runtime.auth.client.interaction import AuthorizationResponse

ISSUER = "https://auth.example.com"


def server(**extra: object) -> AuthorizationServerMetadata:
    fields: dict[str, object] = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize?tenant=1",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }
    return AuthorizationServerMetadata(**fields)  # type: ignore[arg-type]


def start(
    metadata: AuthorizationServerMetadata | None = None, scope: str | None = "a b"
) -> AuthorizationRequest:
    return start_authorization(
        metadata or server(),
        client_id="client-1",
        redirect_uri="http://127.0.0.1:5000/callback",
        resource="https://mcp.example.com/mcp",
        scope=scope,
    )


def test_the_url_carries_pkce_s256_state_and_resource() -> None:
    request = start()
    parts = urlsplit(request.url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    digest = hashlib.sha256(request.code_verifier.encode()).digest()
    assert query == {
        "tenant": "1",
        "response_type": "code",
        "client_id": "client-1",
        "redirect_uri": "http://127.0.0.1:5000/callback",
        "code_challenge": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
        "code_challenge_method": "S256",
        "state": request.state,
        "resource": "https://mcp.example.com/mcp",
        "scope": "a b",
    }
    assert 43 <= len(request.code_verifier) <= 128


def test_no_scope_parameter_without_a_scope() -> None:
    assert "scope=" not in start(scope=None).url


def test_each_request_has_its_own_verifier_and_state() -> None:
    one, two = start(), start()
    assert one.code_verifier != two.code_verifier and one.state != two.state


@pytest.mark.parametrize("methods", [None, ["plain"]])
def test_refuses_a_server_without_s256(methods: list[str] | None) -> None:
    with pytest.raises(AuthorizationError, match="S256"):
        start(server(code_challenge_methods_supported=methods))


def test_undocumented_legacy_endpoints_are_assumed_to_do_pkce() -> None:
    request = start_authorization(
        server(code_challenge_methods_supported=None),
        client_id="c",
        redirect_uri="http://127.0.0.1/cb",
        resource="r",
        scope=None,
        documented=False,
    )
    assert "code_challenge_method=S256" in request.url


def answer(**fields: str | None) -> AuthorizationResponse:
    return AuthorizationResponse(**fields)  # type: ignore[arg-type]


def test_a_matching_response_gives_the_code() -> None:
    request = start()
    got = check_response(
        request, answer(code="c0de", state=request.state, iss=ISSUER), server()
    )
    assert got == "c0de"


def test_iss_absent_and_not_advertised_is_accepted() -> None:
    request = start()
    assert check_response(request, answer(code="c", state=request.state), server())


@pytest.mark.parametrize(
    ("fields", "advertised", "reason"),
    [
        ({"state": "other"}, False, "state"),
        ({"state": "ét\u00e9"}, False, "state"),  # not ASCII: no TypeError
        ({"iss": "https://evil.example.com"}, False, "comes from"),
        ({"iss": "https://evil.example.com"}, True, "comes from"),
        ({"iss": ISSUER + "/"}, True, "comes from"),
        ({"iss": "HTTPS://auth.example.com"}, True, "comes from"),
        ({"iss": None}, True, "lacks"),
        ({"error": "access_denied", "code": None}, False, "access_denied"),
    ],
)
def test_bad_responses_are_refused(
    fields: dict[str, str | None], advertised: bool, reason: str
) -> None:
    request = start()
    base: dict[str, str | None] = {"code": "c", "state": request.state, "iss": ISSUER}
    metadata = server(authorization_response_iss_parameter_supported=advertised)
    with pytest.raises(AuthorizationError, match=reason):
        check_response(request, answer(**{**base, **fields}), metadata)


def test_response_from_a_redirect_url() -> None:
    got = AuthorizationResponse.from_url(
        "http://127.0.0.1/cb?code=x&state=y&iss=https%3A%2F%2Fa.example"
    )
    assert got == AuthorizationResponse(code="x", state="y", iss="https://a.example")

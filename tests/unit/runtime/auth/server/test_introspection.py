"""`IntrospectionVerifier`: RFC 7662 answers turned into principals or refusals,
and how the resource server authenticates to the endpoint."""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from mcp_specgen_runtime.auth.server import IntrospectionVerifier

ENDPOINT = "https://as.example/introspect"
RESOURCE = "https://mcp.example/mcp"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Endpoint:
    def __init__(self, answer: dict[str, Any], status: int = 200) -> None:
        self.answer = answer
        self.status = status
        self.seen: list[httpx.Request] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return httpx.Response(self.status, json=self.answer)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))


def active(**members: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "active": True,
        "sub": "alice",
        "client_id": "client-1",
        "scope": "mcp:read mcp:write",
        "aud": RESOURCE,
        "iss": "https://as.example",
        "exp": int(time.time()) + 300,
    }
    answer.update(members)
    return {k: v for k, v in answer.items() if v is not None}


@pytest.mark.anyio
async def test_an_active_token_for_this_resource_is_accepted() -> None:
    endpoint = Endpoint(active())
    verifier = IntrospectionVerifier(
        ENDPOINT,
        client_id="rs",
        client_secret="s3cret",
        audience=RESOURCE,
        issuer="https://as.example",
        http=endpoint.client(),
    )
    principal = await verifier.verify("opaque-token")
    assert principal is not None
    assert (principal.subject, principal.client_id) == ("alice", "client-1")
    assert principal.scopes == {"mcp:read", "mcp:write"}
    request = endpoint.seen[0]
    assert parse_qs(request.content.decode()) == {
        "token": ["opaque-token"],
        "token_type_hint": ["access_token"],
    }
    expected = base64.b64encode(b"rs:s3cret").decode()
    assert request.headers["authorization"] == f"Basic {expected}"


@pytest.mark.anyio
async def test_client_secret_post_sends_the_credentials_in_the_form() -> None:
    endpoint = Endpoint(active())
    verifier = IntrospectionVerifier(
        ENDPOINT,
        client_id="rs",
        client_secret="s3cret",
        auth_method="client_secret_post",
        http=endpoint.client(),
    )
    assert await verifier.verify("t") is not None
    form = parse_qs(endpoint.seen[0].content.decode())
    assert form["client_id"] == ["rs"] and form["client_secret"] == ["s3cret"]
    assert "authorization" not in endpoint.seen[0].headers


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answer",
    [
        {"active": False},
        active(active="true"),
        active(exp=int(time.time()) - 1),
        active(aud="https://other.example/mcp"),
        active(aud=None),
        active(iss="https://evil.example"),
    ],
    ids=["inactive", "active-not-bool", "expired", "other-aud", "no-aud", "other-iss"],
)
async def test_answers_that_do_not_fit_are_refused(answer: dict[str, Any]) -> None:
    verifier = IntrospectionVerifier(
        ENDPOINT,
        audience=RESOURCE,
        issuer="https://as.example",
        http=Endpoint(answer).client(),
    )
    assert await verifier.verify("t") is None


@pytest.mark.anyio
async def test_an_endpoint_refusing_the_server_is_an_error_not_a_bad_token() -> None:
    verifier = IntrospectionVerifier(
        ENDPOINT, client_id="rs", http=Endpoint({}, status=401).client()
    )
    with pytest.raises(httpx.HTTPStatusError):
        await verifier.verify("t")


@pytest.mark.anyio
@pytest.mark.parametrize("error", ["unsupported_token_type", "invalid_token"])
async def test_an_endpoint_refusing_to_read_the_token_refuses_the_token(
    error: str,
) -> None:
    """oidc-provider answers 400 `unsupported_token_type` for a JWT access
    token (it introspects only its opaque ones): that token is not valid
    here, and the client gets 401, not the server's error."""
    endpoint = Endpoint({"error": error}, status=400)
    verifier = IntrospectionVerifier(ENDPOINT, client_id="rs", http=endpoint.client())
    assert await verifier.verify("eyJ.a.b") is None


@pytest.mark.anyio
@pytest.mark.parametrize("answer", [{"error": "invalid_client"}, {}])
async def test_other_bad_requests_stay_errors(answer: dict[str, Any]) -> None:
    verifier = IntrospectionVerifier(
        ENDPOINT, client_id="rs", http=Endpoint(answer, status=400).client()
    )
    with pytest.raises(httpx.HTTPStatusError):
        await verifier.verify("t")

"""End to end against a real authorization server nobody here wrote:
`oidc-provider` (npm, OpenID Certified; `programs/oidc_provider.mjs` sets it
up for MCP: open dynamic registration, PKCE required, RFC 8707 resource
indicators issuing RS256 JWT access tokens with `aud` = the resource, a
scripted login), in front of `examples/protected_server.py` (an `App` behind
`ResourceServer` + `JwtVerifier`, which finds the provider's JWKS through its
OpenID Connect discovery document and checks every token against it).

The clients are the official SDKs' own OAuth flows: the Python SDK
(`mcp==2.3.0`, `OAuthClientProvider`, legacy and 2026-07-28 modes) and the
TypeScript SDK (`@modelcontextprotocol/sdk@1.32.2`). Each starts with no
token: 401, our protected resource metadata, the provider's discovery
document, registration, authorization with PKCE S256 and `resource` = our
URL, a JWT; `whoami` succeeds; `write` (it needs `mcp:write`) gets 403
`insufficient_scope`, the client steps up with the scopes our challenge
names, and the retry succeeds.

Then tokens the provider issued, presented by hand: one for another resource
and an expired one get 401 `invalid_token`; one without `mcp:write` gets 403
`insufficient_scope` naming it (the same token's `whoami` call succeeding,
so each refusal is about the one thing wrong).

The example also runs with opaque tokens, which it introspects (RFC 7662) at
the provider: the Python SDK's flow works the same; an opaque token for
another resource, and a JWT (which the provider will not introspect), get
401 `invalid_token`.

The provider and the two examples (`oidc_support.Deployment`, the
`deployment` fixture) run once for the session, each in its process on a
free loopback port, and must write nothing on stderr. Wall time: about 8 s
for the module, most of it the clients' interpreters starting.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from benchmarks import peers
from benchmarks._common import REPO
from tests.peers.oidc_support import Deployment, free_port

PROGRAMS = Path(__file__).parent / "programs"
PYTHON_CLIENT = PROGRAMS / "python_sdk_oauth_client.py"
TS_CLIENT = PROGRAMS / "ts_sdk_oauth_client.mjs"
REDIRECT_URI = "http://127.0.0.1:9/callback"
CLIENT_TIMEOUT = 90.0
PROTOCOL_VERSION = "2025-11-25"


# --------------------------------------------------------------------------
# The official SDK clients' OAuth flows
# --------------------------------------------------------------------------


def peer_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return report


def check_flow(
    report: dict[str, Any],
    grants: list[dict[str, Any]],
    url: str,
    also_asked: frozenset[str] = frozenset(),
) -> None:
    """Signed in, called, stepped up, called again: see the module docstring.
    `also_asked`: the scopes the client adds of its own to those our
    challenges name."""
    assert report["tools_before"] == ["whoami"]  # `write` hidden without its scope
    assert report["whoami_before"] == "interop-user mcp:read"
    assert report["write"] == "wrote x"
    assert report["whoami_after"] == "interop-user mcp:read mcp:write"
    asked = report["authorizations"]
    assert [set(a["scope"].split()) for a in asked] == [
        {"mcp:read", *also_asked},
        {"mcp:read", "mcp:write", *also_asked},
    ]
    assert {a["resource"] for a in asked} == {url}
    assert {a["code_challenge_method"] for a in asked} == {"S256"}
    codes = [g for g in grants if g["grant"] == "authorization_code"]
    assert [g["scope"] for g in codes] == ["mcp:read", "mcp:read mcp:write"]
    assert {g["aud"] for g in grants} == {url}


@pytest.fixture(scope="module")
def peer_python() -> Path:
    return peers.ensure_python_peers(print)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_python_sdk_client_signs_in_and_steps_up(
    deployment: Deployment, peer_python: Path, mode: str
) -> None:
    """It asks for `offline_access` too, which the provider offers (and
    which stays out of the access token: it is the provider's own scope)."""
    deployment.grants()
    report = run(
        [str(peer_python), str(PYTHON_CLIENT), mode, deployment.url], peer_env()
    )
    check_flow(
        report, deployment.grants(), deployment.url, frozenset({"offline_access"})
    )


@pytest.fixture(scope="module")
def node() -> Path:
    peers.ensure_node_peers(print)
    return peers.node_executable()


def test_the_typescript_sdk_client_signs_in_and_steps_up(
    deployment: Deployment, node: Path
) -> None:
    """Over a 2025-11-25 session (the SDK's newest revision); its provider
    keeps no refresh token (see the program) so that its step-up re-authorizes."""
    deployment.grants()
    report = run([str(node), str(TS_CLIENT), deployment.url], dict(os.environ))
    check_flow(report, deployment.grants(), deployment.url)


# --------------------------------------------------------------------------
# Tokens the provider issued, presented by hand
# --------------------------------------------------------------------------


def provider_token(
    issuer: str, resource: str, scope: str, client_name: str = "e2e-tests"
) -> str:
    """An access token from the provider: registration, then the
    authorization code flow with PKCE, following its scripted login."""
    with httpx.Client(timeout=20) as http:
        discovery = http.get(f"{issuer}/.well-known/openid-configuration").json()
        registered = http.post(
            discovery["registration_endpoint"],
            json={
                "client_name": client_name,
                "redirect_uris": [REDIRECT_URI],
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
        )
        assert registered.status_code == 201, registered.text
        client_id = registered.json()["client_id"]
        verifier = secrets.token_urlsafe(48)
        challenge = hashlib.sha256(verifier.encode()).digest()
        response = http.get(
            discovery["authorization_endpoint"],
            params={
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": REDIRECT_URI,
                "scope": scope,
                "resource": resource,
                "code_challenge": base64.urlsafe_b64encode(challenge)
                .rstrip(b"=")
                .decode(),
                "code_challenge_method": "S256",
                "state": "e2e",
            },
        )
        while not response.headers["location"].startswith(REDIRECT_URI):
            response = http.get(response.url.join(response.headers["location"]))
        answer = parse_qs(urlsplit(response.headers["location"]).query)
        assert answer["iss"] == [issuer]
        token = http.post(
            discovery["token_endpoint"],
            data={
                "grant_type": "authorization_code",
                "code": answer["code"][0],
                "redirect_uri": REDIRECT_URI,
                "client_id": client_id,
                "code_verifier": verifier,
                "resource": resource,
            },
        )
        assert token.status_code == 200, token.text
        access_token: str = token.json()["access_token"]
        return access_token


def rpc(
    http: httpx.Client,
    url: str,
    token: str,
    method: str,
    params: dict[str, Any],
    session: str | None = None,
) -> httpx.Response:
    """One JSON-RPC request over Streamable HTTP, with the bearer token."""
    headers = {
        "authorization": f"Bearer {token}",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
    }
    if session is not None:
        headers["mcp-session-id"] = session
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return http.post(url, json=body, headers=headers)


def initialize(http: httpx.Client, url: str, token: str) -> httpx.Response:
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "e2e-tests", "version": "1.0.0"},
    }
    return rpc(http, url, token, "initialize", params)


def challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of the response's `WWW-Authenticate: Bearer` challenge."""
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer ")
    found: dict[str, str] = {}
    for part in header.removeprefix("Bearer ").split(", "):
        name, _, value = part.partition("=")
        found[name] = value.strip('"')
    return found


def metadata_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource/mcp"


def test_a_token_for_another_resource_is_invalid_here(
    deployment: Deployment,
) -> None:
    other = f"http://127.0.0.1:{free_port()}/mcp"
    deployment.grants()
    token = provider_token(deployment.issuer, other, "mcp:read mcp:write")
    assert [g["aud"] for g in deployment.grants()] == [other]
    with httpx.Client(timeout=20) as http:
        response = initialize(http, deployment.url, token)
    assert response.status_code == 401
    found = challenge(response)
    assert found["error"] == "invalid_token"
    assert found["resource_metadata"] == metadata_url(deployment.url)


def test_an_expired_token_is_invalid(deployment: Deployment) -> None:
    deployment.grants()
    token = provider_token(
        deployment.issuer, deployment.url, "mcp:read", client_name="expired-tokens"
    )
    [grant] = deployment.grants()
    assert grant["aud"] == deployment.url and grant["exp"] < time.time() - 60
    with httpx.Client(timeout=20) as http:
        response = initialize(http, deployment.url, token)
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"


def test_a_token_without_a_tools_scope_is_refused_that_tool(
    deployment: Deployment,
) -> None:
    token = provider_token(deployment.issuer, deployment.url, "mcp:read")
    with httpx.Client(timeout=20) as http:
        opened = initialize(http, deployment.url, token)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        whoami = rpc(
            http,
            deployment.url,
            token,
            "tools/call",
            {"name": "whoami", "arguments": {}},
            session,
        )
        assert whoami.status_code == 200
        assert "interop-user mcp:read" in whoami.text
        write = rpc(
            http,
            deployment.url,
            token,
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            session,
        )
    assert write.status_code == 403
    found = challenge(write)
    assert found["error"] == "insufficient_scope"
    assert "mcp:write" in found["scope"].split()


# --------------------------------------------------------------------------
# Opaque tokens, introspected
# --------------------------------------------------------------------------


def test_the_python_sdk_client_signs_in_with_opaque_tokens(
    deployment: Deployment, peer_python: Path
) -> None:
    deployment.grants()
    report = run(
        [str(peer_python), str(PYTHON_CLIENT), "legacy", deployment.opaque_url],
        peer_env(),
    )
    grants = deployment.grants()
    assert {g["format"] for g in grants} == {"opaque"}
    check_flow(report, grants, deployment.opaque_url, frozenset({"offline_access"}))


def test_an_opaque_token_for_another_resource_is_invalid_here(
    deployment: Deployment,
) -> None:
    """The provider says it is active, and meant for `opaque_elsewhere`."""
    deployment.grants()
    token = provider_token(deployment.issuer, deployment.opaque_elsewhere, "mcp:read")
    [grant] = deployment.grants()
    assert grant["format"] == "opaque" and grant["aud"] == deployment.opaque_elsewhere
    with httpx.Client(timeout=20) as http:
        response = initialize(http, deployment.opaque_url, token)
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"


def test_a_jwt_is_invalid_where_tokens_are_introspected(
    deployment: Deployment,
) -> None:
    """The provider will not introspect its JWTs (400 `unsupported_token_type`):
    the token is refused, and the server logs no error (see the fixture)."""
    token = provider_token(deployment.issuer, deployment.url, "mcp:read")
    with httpx.Client(timeout=20) as http:
        assert initialize(http, deployment.url, token).status_code == 200
        response = initialize(http, deployment.opaque_url, token)
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"

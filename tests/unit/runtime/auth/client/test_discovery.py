"""Discovery: the well-known URLs in the specification's order, the resource
and issuer checks, and the 2025-03-26 fallbacks."""

from __future__ import annotations

import httpx
import pytest

from mcp_specgen_runtime.auth import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
)
from mcp_specgen_runtime.auth.client.challenge import BearerChallenge
from mcp_specgen_runtime.auth.client.discovery import (
    discover,
    resource_allowed,
    resource_metadata_urls,
    secure_endpoint,
    server_metadata_urls,
)
from mcp_specgen_runtime.auth.client.errors import AuthorizationError

from .support import drive, json_response

MCP = "https://mcp.example.com/public/mcp"
AS = "https://auth.example.com/tenant1"


def as_metadata(issuer: str = AS) -> dict[str, object]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "code_challenge_methods_supported": ["S256"],
    }


def test_resource_metadata_urls_path_suffixed_first() -> None:
    assert resource_metadata_urls(MCP) == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://MCP.example.com/") == [
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    ]


def test_server_metadata_urls_with_a_path() -> None:
    assert server_metadata_urls(AS) == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]


def test_server_metadata_urls_without_a_path() -> None:
    assert server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "allowed"),
    [
        ("https://mcp.example.com/public/mcp", True),
        ("https://mcp.example.com/public", True),
        ("https://mcp.example.com", True),
        ("https://MCP.example.com/public/mcp", True),
        ("https://mcp.example.com/pub", False),
        ("https://mcp.example.com/public/mcp/more", False),
        ("https://evil.example.com/public/mcp", False),
        ("http://mcp.example.com/public/mcp", False),
        ("https://mcp.example.com:8443/public/mcp", False),
    ],
)
def test_resource_allowed(resource: str, allowed: bool) -> None:
    assert resource_allowed(MCP, resource) is allowed


def test_without_resource_metadata_the_resource_is_the_canonical_url() -> None:
    """The same canonical form the resource server compares `aud` in
    (`auth.metadata.canonical_resource_url`): lower-case scheme and host, the
    path's case kept, no trailing slash."""
    found = drive(
        discover("HTTPS://Mcp.Example.com/Path/", None), lambda _: json_response(404)
    )
    assert found.resource == "https://mcp.example.com/Path"
    assert not found.documented


def test_the_challenge_hint_is_tried_first() -> None:
    hint = "https://mcp.example.com/meta"
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        if str(request.url) == hint:
            return json_response(200, {"resource": MCP, "authorization_servers": [AS]})
        return json_response(200, as_metadata())

    found = drive(discover(MCP, BearerChallenge(resource_metadata=hint)), respond, seen)
    assert seen == [f"GET {hint}", f"GET {server_metadata_urls(AS)[0]}"]
    assert found.resource == MCP
    assert found.server.issuer == AS
    assert found.documented


def test_falls_back_to_root_metadata_and_openid_discovery() -> None:
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == "https://mcp.example.com/.well-known/oauth-protected-resource":
            return json_response(
                200,
                {
                    "resource": "https://mcp.example.com",
                    "authorization_servers": [AS],
                    "scopes_supported": ["a"],
                },
            )
        if url == server_metadata_urls(AS)[2]:
            return json_response(200, as_metadata())
        return json_response(404)

    found = drive(discover(MCP, None), respond, seen)
    assert seen == [
        "GET " + url
        for url in [*resource_metadata_urls(MCP), *server_metadata_urls(AS)]
    ]
    # The resource is sent exactly as the metadata publishes it.
    assert found.resource == "https://mcp.example.com"
    assert found.resource_metadata is not None
    assert found.resource_metadata.scopes_supported == ["a"]


def test_server_metadata_without_a_token_endpoint_is_passed_over() -> None:
    """The documents are read leniently (unknown members ignored), but one
    the client cannot use is as good as absent: the next URL is tried."""

    def respond(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if "protected-resource" in url:
            return json_response(200, {"resource": MCP, "authorization_servers": [AS]})
        if url == server_metadata_urls(AS)[0]:
            return json_response(200, {"issuer": AS, "x-extension": 1})
        document = as_metadata() | {"dpop_signing_alg_values_supported": ["ES256"]}
        return json_response(200, document | {"x-extension": {"any": "thing"}})

    found = drive(discover(MCP, None), respond)
    assert isinstance(found.server, AuthorizationServerMetadata)
    assert isinstance(found.resource_metadata, ProtectedResourceMetadata)
    assert found.server.token_endpoint == f"{AS}/token"
    assert found.server.dpop_signing_alg_values_supported == ["ES256"]


def test_refuses_metadata_for_another_resource() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        return json_response(
            200,
            {"resource": "https://evil.example.com/mcp", "authorization_servers": [AS]},
        )

    with pytest.raises(AuthorizationError, match="evil"):
        drive(discover(MCP, None), respond)


def test_refuses_server_metadata_naming_another_issuer() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if "protected-resource" in str(request.url):
            return json_response(200, {"resource": MCP, "authorization_servers": [AS]})
        # A trailing slash is a different issuer: no normalization.
        return json_response(200, as_metadata(AS + "/"))

    with pytest.raises(AuthorizationError, match="issuer"):
        drive(discover(MCP, None), respond)


def test_no_server_metadata_at_all() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if "protected-resource" in str(request.url):
            return json_response(200, {"resource": MCP, "authorization_servers": [AS]})
        return json_response(404)

    with pytest.raises(AuthorizationError, match="no authorization server metadata"):
        drive(discover(MCP, None), respond)


def test_legacy_origin_metadata_when_no_resource_metadata() -> None:
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        if str(request.url).endswith("/oauth-authorization-server"):
            return json_response(200, as_metadata("https://mcp.example.com/oauth"))
        return json_response(404)

    found = drive(discover(MCP, None), respond, seen)
    assert seen[-1] == (
        "GET https://mcp.example.com/.well-known/oauth-authorization-server"
    )
    assert found.server.issuer == "https://mcp.example.com/oauth"
    assert found.resource == MCP
    assert found.documented


def test_legacy_default_endpoints() -> None:
    found = drive(discover(MCP, None), lambda request: json_response(404))
    assert not found.documented
    assert (
        found.server.authorization_endpoint,
        found.server.token_endpoint,
        found.server.registration_endpoint,
    ) == (
        "https://mcp.example.com/authorize",
        "https://mcp.example.com/token",
        "https://mcp.example.com/register",
    )


def test_legacy_metadata_from_another_origin_is_refused() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if str(request.url).endswith("/oauth-authorization-server"):
            return json_response(200, as_metadata("https://evil.example.com"))
        return json_response(404)

    with pytest.raises(AuthorizationError):
        drive(discover(MCP, None), respond)


@pytest.mark.parametrize(
    ("url", "secure"),
    [
        ("https://auth.example.com/token", True),
        ("http://127.0.0.1:9000/token", True),
        ("http://localhost/token", True),
        ("http://[::1]:80/token", True),
        ("http://auth.example.com/token", False),
        ("ftp://auth.example.com/token", False),
    ],
)
def test_secure_endpoint(url: str, secure: bool) -> None:
    assert secure_endpoint(url) is secure


def test_refuses_plain_http_endpoints_off_loopback() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if "protected-resource" in str(request.url):
            return json_response(200, {"resource": MCP, "authorization_servers": [AS]})
        return json_response(
            200, {**as_metadata(), "token_endpoint": "http://auth.example.com/token"}
        )

    with pytest.raises(AuthorizationError, match="HTTPS"):
        drive(discover(MCP, None), respond)

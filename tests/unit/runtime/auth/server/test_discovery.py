"""Finding an issuer's metadata: the URLs tried, in order, and a document
naming another issuer refused."""

from __future__ import annotations

import httpx
import pytest

from mcp_specgen_runtime.auth.server import (
    IssuerDiscoveryError,
    discover_issuer,
    issuer_metadata_urls,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_urls_insert_then_append_the_well_known_segment() -> None:
    assert issuer_metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]
    assert issuer_metadata_urls("https://kc.example/realms/mcp/") == [
        "https://kc.example/.well-known/oauth-authorization-server/realms/mcp",
        "https://kc.example/.well-known/openid-configuration/realms/mcp",
        "https://kc.example/realms/mcp/.well-known/openid-configuration",
    ]


def serving(documents: dict[str, object]) -> httpx.AsyncClient:
    def handle(request: httpx.Request) -> httpx.Response:
        found = documents.get(request.url.path)
        return httpx.Response(404) if found is None else httpx.Response(200, json=found)

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))


@pytest.mark.anyio
async def test_an_openid_configuration_after_the_path_is_found() -> None:
    issuer = "https://kc.example/realms/mcp"
    path = "/realms/mcp/.well-known/openid-configuration"
    document = {"issuer": issuer, "jwks_uri": f"{issuer}/certs"}
    async with serving({path: document}) as client:
        metadata = await discover_issuer(client, issuer)
    assert metadata.jwks_uri == f"{issuer}/certs"


@pytest.mark.anyio
async def test_a_document_naming_another_issuer_is_refused() -> None:
    path = "/.well-known/oauth-authorization-server"
    document = {"issuer": "https://evil.example", "jwks_uri": "https://evil/keys"}
    async with serving({path: document, "/.well-known/openid-configuration": "x"}) as c:
        with pytest.raises(IssuerDiscoveryError):
            await discover_issuer(c, "https://as.example")

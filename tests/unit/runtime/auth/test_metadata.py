"""The shared discovery documents and canonical resource URLs."""

from __future__ import annotations

import msgspec
import pytest

from mcp_specgen_runtime.auth import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    canonical_resource_url,
    protected_resource_metadata_path,
    protected_resource_metadata_url,
)


def test_canonical_resource_urls() -> None:
    assert canonical_resource_url("HTTPS://MCP.Example.com/mcp/") == (
        "https://mcp.example.com/mcp"
    )
    assert canonical_resource_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000"
    for bad in ("mcp.example.com/mcp", "ftp://x/y", "https://x/y#frag"):
        with pytest.raises(ValueError):
            canonical_resource_url(bad)


def test_the_metadata_url_inserts_the_well_known_segment() -> None:
    url = "https://mcp.example.com/tenant/mcp"
    assert protected_resource_metadata_path(url) == (
        "/.well-known/oauth-protected-resource/tenant/mcp"
    )
    assert protected_resource_metadata_url(url) == (
        "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp"
    )
    assert protected_resource_metadata_url("https://h") == (
        "https://h/.well-known/oauth-protected-resource"
    )


def test_documents_leave_out_absent_members_and_keep_unknown_ones_readable() -> None:
    document = ProtectedResourceMetadata(
        resource="https://h/mcp", authorization_servers=["https://as"]
    )
    assert msgspec.json.decode(msgspec.json.encode(document)) == {
        "resource": "https://h/mcp",
        "authorization_servers": ["https://as"],
    }
    raw = (
        b'{"issuer": "https://as", "x-extension": 1,'
        b' "code_challenge_methods_supported": ["S256"]}'
    )
    server = msgspec.json.decode(raw, type=AuthorizationServerMetadata)
    assert server.code_challenge_methods_supported == ["S256"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b"{}", type=ProtectedResourceMetadata)

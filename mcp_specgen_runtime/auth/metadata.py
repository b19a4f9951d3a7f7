"""The discovery documents of OAuth, as msgspec Structs, and where they live.

- `ProtectedResourceMetadata` (RFC 9728): what an MCP server publishes at
  `/.well-known/oauth-protected-resource[/<path>]`: which authorization
  servers issue its tokens, the scopes it knows, how tokens are sent.
- `AuthorizationServerMetadata` (RFC 8414, and the OpenID Connect discovery
  fields MCP clients read): an authorization server's endpoints and what it
  supports (PKCE methods, `iss` in responses, client ID metadata documents).

Both sides use them: the resource server publishes the first and reads the
second (to find the issuer's keys), the OAuth client reads both. Unknown
members are kept out of the Structs but never refused: a document may carry
any extension. Absent members are None and are left out when encoded.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import msgspec

__all__ = [
    "PROTECTED_RESOURCE_WELL_KNOWN",
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "canonical_resource_url",
    "protected_resource_metadata_path",
    "protected_resource_metadata_url",
]

PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"


class ProtectedResourceMetadata(
    msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True
):
    """RFC 9728 protected resource metadata (section 2)."""

    resource: str
    authorization_servers: list[str] | None = None
    jwks_uri: str | None = None
    scopes_supported: list[str] | None = None
    bearer_methods_supported: list[str] | None = None
    resource_signing_alg_values_supported: list[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    resource_policy_uri: str | None = None
    resource_tos_uri: str | None = None
    tls_client_certificate_bound_access_tokens: bool | None = None
    authorization_details_types_supported: list[str] | None = None
    dpop_signing_alg_values_supported: list[str] | None = None
    dpop_bound_access_tokens_required: bool | None = None


class AuthorizationServerMetadata(
    msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True
):
    """RFC 8414 authorization server metadata, with the OpenID Connect
    discovery members and the extensions MCP clients use."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    jwks_uri: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    response_modes_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    service_documentation: str | None = None
    ui_locales_supported: list[str] | None = None
    op_policy_uri: str | None = None
    op_tos_uri: str | None = None
    revocation_endpoint: str | None = None
    revocation_endpoint_auth_methods_supported: list[str] | None = None
    introspection_endpoint: str | None = None
    introspection_endpoint_auth_methods_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    # RFC 9207: the server puts `iss` in its authorization responses.
    authorization_response_iss_parameter_supported: bool | None = None
    # MCP 2025-11-25: the server accepts URLs as client ids (metadata documents).
    client_id_metadata_document_supported: bool | None = None
    # RFC 9449: the server takes DPoP proofs signed with these algorithms.
    dpop_signing_alg_values_supported: list[str] | None = None
    # OpenID Connect discovery.
    userinfo_endpoint: str | None = None
    subject_types_supported: list[str] | None = None
    id_token_signing_alg_values_supported: list[str] | None = None


def canonical_resource_url(url: str) -> str:
    """`url` as the canonical URI of a resource (RFC 8707, as MCP uses it):
    scheme and host in lower case, no fragment, no trailing slash on a path.

    Raises:
        ValueError: `url` is not an absolute http(s) URL, or has a fragment
            that is not empty (a resource URI must not have one).
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"a resource URL must be absolute http(s): {url!r}")
    if parts.fragment:
        raise ValueError(f"a resource URL must not have a fragment: {url!r}")
    path = parts.path.rstrip("/")
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), path, parts.query, "")
    )


def protected_resource_metadata_path(resource_url: str) -> str:
    """The path of `resource_url`'s metadata (RFC 9728 section 3.1): the
    well-known prefix, then the resource's own path, e.g.
    `/.well-known/oauth-protected-resource/mcp` for `https://host/mcp`."""
    path = urlsplit(canonical_resource_url(resource_url)).path
    return PROTECTED_RESOURCE_WELL_KNOWN + path


def protected_resource_metadata_url(resource_url: str) -> str:
    """The absolute URL of `resource_url`'s metadata document."""
    parts = urlsplit(canonical_resource_url(resource_url))
    path = protected_resource_metadata_path(resource_url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))

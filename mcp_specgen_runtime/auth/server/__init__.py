"""The resource server: access tokens checked, callers named, scopes enforced.

`ResourceServer` is the HTTP server's `auth=` layer; its verifier is a
`JwtVerifier` (JWTs, the issuer's JWKS), an `IntrospectionVerifier` (RFC 7662)
or a `StaticVerifier` (tests); callers become `Principal`s.
"""

from __future__ import annotations

from ...transports.http.auth import AuthChallenge
from .base import TokenVerifier
from .challenge import bearer_challenge
from .discovery import IssuerDiscoveryError, discover_issuer, issuer_metadata_urls
from .introspection import IntrospectionVerifier
from .jwks import JwksCache, parse_jwks
from .jwt import DEFAULT_ALGORITHMS, JwtVerifier
from .principal import Principal
from .resource_server import ResourceServer
from .static import StaticVerifier

__all__ = [
    "DEFAULT_ALGORITHMS",
    "AuthChallenge",
    "IntrospectionVerifier",
    "IssuerDiscoveryError",
    "JwksCache",
    "JwtVerifier",
    "Principal",
    "ResourceServer",
    "StaticVerifier",
    "TokenVerifier",
    "bearer_challenge",
    "discover_issuer",
    "issuer_metadata_urls",
    "parse_jwks",
]

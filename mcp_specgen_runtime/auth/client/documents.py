"""The JSON documents only the OAuth client reads and writes, as msgspec
Structs: registration (RFC 7591) and tokens (RFC 6749). Unknown members are
ignored when decoding. The discovery documents both sides read are in
`auth.metadata`.
"""

from __future__ import annotations

import time

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "ClientInformation",
    "ClientMetadata",
    "TokenSet",
]


class ClientMetadata(msgspec.Struct, kw_only=True, frozen=True):
    """What the client says about itself: the body of a registration request
    (RFC 7591) and of a Client ID Metadata Document. Unset members are left
    out; `application_type` is always sent (`native` for loopback and custom
    scheme redirects, `web` for HTTPS ones)."""

    redirect_uris: list[str]
    client_name: str | UnsetType = UNSET
    client_uri: str | UnsetType = UNSET
    logo_uri: str | UnsetType = UNSET
    grant_types: list[str] = msgspec.field(
        default_factory=lambda: ["authorization_code", "refresh_token"]
    )
    response_types: list[str] = msgspec.field(default_factory=lambda: ["code"])
    token_endpoint_auth_method: str = "none"
    application_type: str = "native"
    scope: str | UnsetType = UNSET
    software_id: str | UnsetType = UNSET
    software_version: str | UnsetType = UNSET


class ClientInformation(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A client identity at one authorization server: registered, pre-registered
    or a metadata document URL. `issuer` binds it to the server that issued it."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    client_secret_expires_at: int | None = None
    issuer: str | None = None


class TokenSet(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A token response (RFC 6749 §5.1), with when it expires and for whom.

    `expires_at` (epoch seconds) is computed on receipt; `issuer` and
    `resource` record where the token came from and what it is for, so a
    stored token is never sent to another server.
    """

    access_token: str
    token_type: str = "Bearer"
    expires_in: int | None = None
    refresh_token: str | None = None
    scope: str | None = None
    expires_at: float | None = None
    issuer: str | None = None
    resource: str | None = None

    def expired(self, *, leeway: float = 30.0, now: float | None = None) -> bool:
        """True when the token expires within `leeway` seconds."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) + leeway >= self.expires_at

"""`Principal`: who an access token speaks for, as a verifier found it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["Principal"]


class Principal(msgspec.Struct, frozen=True, kw_only=True):
    """The caller of a request, from its verified access token.

    Handlers read it as `ctx.principal` (`Context`) or `http_principal()`.
    Sessions and 2026 request state are bound to its `binding` (issuer,
    subject, client), not to the token: a refreshed or stepped-up token of
    the same caller keeps them.

    Attributes:
        subject: the resource owner (`sub`), None for a client acting alone.
        client_id: the OAuth client the token was issued to.
        scopes: the scopes granted.
        claims: every claim of the token (or introspection answer).
        expires_at: when the token expires (Unix seconds), None if unknown.
        issuer: the authorization server that issued it (`iss`).
    """

    subject: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])
    expires_at: int | None = None
    issuer: str | None = None

    @property
    def binding(self) -> tuple[str | None, str | None, str | None]:
        """Who the caller is, apart from any one token."""
        return (self.issuer, self.subject, self.client_id)

    def has_scopes(self, scopes: Iterable[str]) -> bool:
        """Whether every scope of `scopes` was granted."""
        return self.scopes.issuperset(scopes)

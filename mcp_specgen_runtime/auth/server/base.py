"""`TokenVerifier`: the one thing a resource server asks of token checking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .principal import Principal

__all__ = ["TokenVerifier"]


class TokenVerifier(Protocol):
    """Turns an access token into the caller it speaks for."""

    async def verify(self, token: str) -> Principal | None:
        """The token's principal, or None when the token is not valid here
        (bad signature, expired, another audience or issuer, revoked).

        The verifier alone decides expiry (with any leeway it allows): the
        `ResourceServer` does not check `expires_at` again. It does check
        that the principal's `claims` carry an `aud` naming its resource.

        Raises:
            Exception: the token could not be judged (an issuer or
                introspection endpoint unreachable); never for a bad token.
        """
        ...

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

        Raises:
            Exception: the token could not be judged (an issuer or
                introspection endpoint unreachable); never for a bad token.
        """
        ...

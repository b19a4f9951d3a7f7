"""`StaticVerifier`: tokens known in advance, for tests and local tools."""

from __future__ import annotations

import hmac
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .principal import Principal

__all__ = ["StaticVerifier"]


class StaticVerifier:
    """Verifies tokens against a fixed table of token → principal.

    A principal whose `expires_at` has passed is refused. Tokens are compared
    in constant time, so the table's tokens cannot be guessed by timing.
    """

    def __init__(
        self,
        tokens: Mapping[str, Principal],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tokens = dict(tokens)
        self.clock = clock

    async def verify(self, token: str) -> Principal | None:
        """The principal of `token`, or None (unknown or expired)."""
        found: Principal | None = None
        given = token.encode()
        for known, principal in self.tokens.items():
            if hmac.compare_digest(known.encode(), given):
                found = principal
        if found is None:
            return None
        if found.expires_at is not None and found.expires_at <= self.clock():
            return None
        return found

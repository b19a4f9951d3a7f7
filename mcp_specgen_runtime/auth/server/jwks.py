"""`JwksCache`: an issuer's signing keys (a JWK Set), fetched and kept fresh.

Keys are fetched on first use and kept for `max_age_s`; a token naming a
key id the cache does not hold triggers one early refetch (the issuer may
have rotated its keys), at most once per `min_refresh_interval_s`, so tokens
with made-up key ids cannot make the server hammer the issuer. Concurrent
refreshes are one fetch. When a refetch fails and keys were fetched before,
those keys stay in use (tried again after `min_refresh_interval_s`): an
issuer's outage does not lock out the tokens it signed.
"""

from __future__ import annotations

import time
import typing
from typing import TYPE_CHECKING, Any

import anyio
from joserfc import jwk
from joserfc.errors import JoseError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["JwksCache", "parse_jwks"]

DEFAULT_MAX_AGE_S = 3600.0
DEFAULT_MIN_REFRESH_INTERVAL_S = 30.0


def parse_jwks(document: object) -> list[jwk.Key]:
    """The verification keys of a JWK Set document: its `keys`, less those
    that are malformed, of an unknown type, private, or for encryption only."""
    if not isinstance(document, dict):
        return []
    members = typing.cast("dict[str, Any]", document)
    entries: object = members.get("keys")
    if not isinstance(entries, list):
        return []
    keys: list[jwk.Key] = []
    for entry in typing.cast("list[object]", entries):
        if not isinstance(entry, dict):
            continue
        data = typing.cast("dict[str, Any]", entry)
        if data.get("use", "sig") != "sig" or "d" in data or "k" in data:
            # Encryption keys, private halves and shared secrets never verify
            # tokens from a JWKS: a published secret would let anyone sign.
            continue
        try:
            keys.append(jwk.import_key(typing.cast("jwk.DictKey", data)))
        except (JoseError, ValueError, TypeError):
            continue
    return keys


class JwksCache:
    """The keys of one JWK Set, by key id.

    Args:
        fetch: returns the JWK Set document (called with no arguments).
        max_age_s: how long fetched keys are used before refetching.
        min_refresh_interval_s: the least time between two fetches caused by
            an unknown key id.
        clock: a monotonic clock (seconds).
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[object]],
        *,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        min_refresh_interval_s: float = DEFAULT_MIN_REFRESH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetch = fetch
        self.max_age_s = max_age_s
        self.min_refresh_interval_s = min_refresh_interval_s
        self.clock = clock
        self.fetches = 0
        """How many fetches were made, failed ones included (for tests and
        metrics)."""
        self._keys: list[jwk.Key] = []
        self._fetched_at: float | None = None
        self._lock = anyio.Lock()

    async def key(self, kid: str | None) -> jwk.Key | None:
        """The key named `kid` (with no `kid`: the set's only key), or None.

        Raises:
            Exception: whatever `fetch` raised (the issuer is unreachable).
        """
        if self._stale():
            await self._refresh(lambda: self._stale())
        found = self._find(kid)
        if found is None and self._may_refresh_early():
            await self._refresh(lambda: self._may_refresh_early())
            found = self._find(kid)
        return found

    def _find(self, kid: str | None) -> jwk.Key | None:
        if kid is None:
            return self._keys[0] if len(self._keys) == 1 else None
        for key in self._keys:
            if key.kid == kid:
                return key
        return None

    def _stale(self) -> bool:
        return (
            self._fetched_at is None
            or self.clock() - self._fetched_at >= self.max_age_s
        )

    def _may_refresh_early(self) -> bool:
        assert self._fetched_at is not None
        return self.clock() - self._fetched_at >= self.min_refresh_interval_s

    async def _refresh(self, still_needed: Callable[[], bool]) -> None:
        async with self._lock:
            # Another task may have refreshed while this one waited.
            if self._fetched_at is not None and not still_needed():
                return
            self.fetches += 1
            try:
                document = await self.fetch()
            except Exception:
                if self._fetched_at is None:
                    raise
                # Keep the keys held; try again once the interval has passed.
                self._fetched_at = max(
                    self._fetched_at,
                    self.clock() - self.max_age_s + self.min_refresh_interval_s,
                )
                return
            self._keys = parse_jwks(document)
            self._fetched_at = self.clock()

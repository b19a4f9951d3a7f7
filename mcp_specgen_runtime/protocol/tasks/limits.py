"""A per-owner token bucket: the rate limit on task operations."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING

from mcp_specgen_runtime.errors import RpcError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["RATE_LIMITED", "RateLimiter"]

RATE_LIMITED = -32029
"""The error of a task operation over its owner's rate limit (data:
`{"retryAfterMs": n}`); JSON-RPC leaves -32000..-32099 to servers."""

MAX_OWNERS = 100_000
"""Buckets kept at most; the least recently used go first (a full bucket
is what a forgotten owner gets back anyway)."""


class RateLimiter:
    """`rate` operations per second per owner, bursts up to `burst`.

    Args:
        rate: tokens added per second (None: no limit).
        burst: the bucket's size.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        rate: float | None,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: OrderedDict[str | None, tuple[float, float]] = OrderedDict()

    def take(self, owner: str | None, what: str) -> None:
        """Spend one token of `owner`'s bucket.

        Raises:
            RpcError: `RATE_LIMITED`, naming `what` and when to retry.
        """
        if self.rate is None:
            return
        now = self._clock()
        tokens, then = self._buckets.pop(owner, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[owner] = (tokens, now)
            retry_ms = max(1, int((1.0 - tokens) / self.rate * 1000))
            raise RpcError(
                RATE_LIMITED,
                f"Too many task operations ({what}); retry in {retry_ms} ms",
                {"retryAfterMs": retry_ms},
            )
        self._buckets[owner] = (tokens - 1.0, now)
        while len(self._buckets) > MAX_OWNERS:
            self._buckets.popitem(last=False)

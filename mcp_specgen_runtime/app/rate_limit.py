"""`RateLimit`: a token bucket per caller, refusing requests over the rate.

    app = App("demo", middleware=[RateLimit(rate=5, burst=10)])

Each caller (`Call.caller`: the principal when the transport authenticated
one, else the HTTP session, else the client's address, else the
connection) gets a bucket of `burst` tokens, refilled at `rate` a second;
each request spends one. A request finding the bucket empty is refused with
`RATE_LIMITED` (-32029, the code the task engine's limit uses), a message
saying the limit and when to retry, and `data: {"retryAfterMs": n}`.

The handshake (`initialize`, `server/discover`) and `ping` are not counted
(`exempt=`), nor are notifications, which cannot be answered.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.protocol.tasks.limits import RATE_LIMITED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .middleware import Call, CallNext

__all__ = ["RATE_LIMITED", "RateLimit"]

EXEMPT = frozenset({"initialize", "server/discover", "ping"})
"""The requests no limit applies to by default."""


class RateLimit:
    """Middleware: `rate` requests a second per caller, bursts up to `burst`.

    Args:
        rate: tokens added to each bucket per second.
        burst: the bucket's size (the most requests at once after a pause).
        key: the bucket of a call (default `Call.caller`).
        exempt: methods never counted.
        max_callers: buckets kept at most; the least recently used go first
            (a full bucket is what a forgotten caller gets back anyway).
        clock: monotonic seconds (tests pass their own).

    Raises:
        ValueError: a rate that is not positive or a burst below 1.
    """

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        key: Callable[[Call], str] | None = None,
        exempt: Iterable[str] = EXEMPT,
        max_callers: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate
        self.burst = burst
        self.exempt = frozenset(exempt)
        self._key = key
        self._max = max_callers
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if not call.notification and call.method not in self.exempt:
            self.take(call.caller if self._key is None else self._key(call), call)
        return await call_next(call)

    def take(self, caller: str, call: Call) -> None:
        """Spend one of `caller`'s tokens.

        Raises:
            RpcError: `RATE_LIMITED`, saying when to retry.
        """
        now = self._clock()
        tokens, then = self._buckets.pop(caller, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[caller] = (tokens, now)
            retry_ms = max(1, int((1.0 - tokens) / self.rate * 1000 + 0.999))
            raise RpcError(
                RATE_LIMITED,
                f"Rate limit exceeded for {call.method}: at most {self.rate:g} "
                f"requests a second (bursts of {self.burst}); retry in {retry_ms} ms",
                {"retryAfterMs": retry_ms},
            )
        self._buckets[caller] = (tokens - 1.0, now)
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)

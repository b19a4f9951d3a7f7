"""The per-owner token bucket."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.protocol.tasks.limits import RATE_LIMITED, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_refusal_then_refill() -> None:
    clock = Clock()
    limiter = RateLimiter(2.0, 3, clock=clock)
    for _ in range(3):
        limiter.take("a", "get")
    with pytest.raises(RpcError) as caught:
        limiter.take("a", "get")
    assert caught.value.code == RATE_LIMITED
    assert caught.value.data == {"retryAfterMs": 500}
    limiter.take("b", "get")  # owners do not share a bucket
    clock.now += 0.5
    limiter.take("a", "get")
    with pytest.raises(RpcError):
        limiter.take("a", "get")


def test_no_rate_is_no_limit() -> None:
    limiter = RateLimiter(None, 1)
    for _ in range(1000):
        limiter.take("a", "get")

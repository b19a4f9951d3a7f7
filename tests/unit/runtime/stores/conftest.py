"""Fixtures shared by the Redis store tests (the server itself comes from
`tests/conftest.py`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from benchmarks.redis_server import RedisServer


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[Redis]:
    """A plain client of the test server, to look behind a store's back."""
    client = Redis.from_url(redis_server.url)
    try:
        yield client
    finally:
        await client.aclose()

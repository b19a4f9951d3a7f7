"""`RedisKeys`: one secret per Redis and prefix, made once, shared by every
instance, never regenerated while it exists; one key per purpose."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from benchmarks.redis_server import RedisServer, free_port
from mcp_specgen_runtime.stores.redis_keys import (
    LIST_CURSOR,
    REQUEST_STATE,
    TASK_CURSOR,
    RedisKeys,
)
from mcp_specgen_runtime.stores.redis_scripts import StoreUnreachableError


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_every_instance_gets_the_secret_the_first_one_stored(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    first = RedisKeys(redis_server.url, prefix=redis_prefix)
    second = RedisKeys(redis_server.url, prefix=redis_prefix)
    try:
        secret = await first.secret()
        assert len(secret) == 32
        assert await second.secret() == secret
        assert await raw.get(redis_prefix + "keys:secret") == secret
        assert await raw.ttl(redis_prefix + "keys:secret") == -1  # never expires
        for purpose in (REQUEST_STATE, LIST_CURSOR, TASK_CURSOR):
            assert await first.key(purpose) == await second.key(purpose)
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.anyio
async def test_an_existing_secret_is_never_replaced(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    await raw.set(redis_prefix + "keys:secret", b"s" * 32)
    keys = RedisKeys(redis_server.url, prefix=redis_prefix)
    try:
        assert await keys.secret() == b"s" * 32
    finally:
        await keys.aclose()
    assert await raw.get(redis_prefix + "keys:secret") == b"s" * 32


@pytest.mark.anyio
async def test_each_purpose_and_each_prefix_has_its_own_key(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    ours = RedisKeys(redis_server.url, prefix=redis_prefix)
    theirs = RedisKeys(redis_server.url, prefix=redis_prefix + "other:")
    try:
        purposes = [
            await ours.key(p) for p in (REQUEST_STATE, LIST_CURSOR, TASK_CURSOR)
        ]
        assert len(set(purposes)) == 3
        assert all(len(key) == 32 for key in purposes)
        assert await theirs.secret() != await ours.secret()
        assert await theirs.key(REQUEST_STATE) != await ours.key(REQUEST_STATE)
    finally:
        await ours.aclose()
        await theirs.aclose()


@pytest.mark.anyio
async def test_a_secret_of_the_wrong_size_is_refused(
    redis_server: RedisServer, redis_prefix: str, raw: Redis
) -> None:
    await raw.set(redis_prefix + "keys:secret", b"short")
    keys = RedisKeys(redis_server.url, prefix=redis_prefix)
    try:
        with pytest.raises(ValueError, match="32-byte secret: delete it"):
            await keys.secret()
    finally:
        await keys.aclose()


@pytest.mark.anyio
async def test_an_unreachable_redis_is_one_error_naming_it() -> None:
    url = f"redis://user:hunter2@127.0.0.1:{free_port()}/0"
    keys = RedisKeys(url)
    try:
        with pytest.raises(StoreUnreachableError) as caught:
            await keys.secret()
    finally:
        await keys.aclose()
    assert caught.value.code == -32603
    assert caught.value.message.startswith(
        f"the key store is unreachable (Redis at {url.replace('hunter2', '***')})"
    )
    assert "hunter2" not in caught.value.message

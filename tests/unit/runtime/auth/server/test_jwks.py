"""`JwksCache` and `parse_jwks`: which keys are kept, when the set is
refetched, and what an unreachable issuer does."""

from __future__ import annotations

import pytest
from joserfc import jwk

from mcp_specgen_runtime.auth.server import JwksCache, parse_jwks


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def public(key: jwk.Key) -> dict[str, object]:
    return dict(key.as_dict(private=False))


def test_only_public_signature_keys_are_kept() -> None:
    rsa = jwk.RSAKey.generate_key(2048, {"kid": "rsa"})
    ec = jwk.ECKey.generate_key("P-256", {"kid": "ec"})
    document = {
        "keys": [
            public(rsa),
            {**public(ec), "use": "enc"},
            dict(ec.as_dict(private=True)),  # a private half published by mistake
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "nope", "kid": "weird"},
            "not a key",
        ]
    }
    assert [key.kid for key in parse_jwks(document)] == ["rsa"]
    assert parse_jwks({"keys": "x"}) == [] and parse_jwks([]) == []


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.anyio
async def test_keys_expire_and_an_outage_keeps_the_old_ones() -> None:
    key = jwk.RSAKey.generate_key(2048, {"kid": "k1"})
    clock = Clock()
    failing = False

    async def fetch() -> object:
        if failing:
            raise OSError("issuer down")
        return {"keys": [public(key)]}

    cache = JwksCache(fetch, max_age_s=100, min_refresh_interval_s=10, clock=clock)
    assert (await cache.key("k1")) is not None
    assert cache.fetches == 1
    clock.now += 50
    assert (await cache.key("k1")) is not None
    assert cache.fetches == 1  # still fresh
    clock.now += 60
    failing = True
    assert (await cache.key("k1")) is not None  # stale, the refetch failed
    assert cache.fetches == 2
    clock.now += 5
    assert (await cache.key("k1")) is not None
    assert cache.fetches == 2  # not retried within the interval
    clock.now += 6
    assert (await cache.key("k1")) is not None
    assert cache.fetches == 3


@pytest.mark.anyio
async def test_a_first_fetch_that_fails_is_an_error() -> None:
    async def fetch() -> object:
        raise OSError("issuer down")

    with pytest.raises(OSError, match="issuer down"):
        await JwksCache(fetch).key("k1")


@pytest.mark.anyio
async def test_no_kid_picks_the_only_key_and_never_one_of_several() -> None:
    one = jwk.RSAKey.generate_key(2048, {"kid": "a"})
    two = jwk.RSAKey.generate_key(2048, {"kid": "b"})
    keys = [public(one)]

    async def fetch() -> object:
        return {"keys": keys}

    cache = JwksCache(fetch, min_refresh_interval_s=0)
    assert (await cache.key(None)) is not None
    keys.append(public(two))
    assert (await cache.key("b")) is not None
    assert (await cache.key(None)) is None

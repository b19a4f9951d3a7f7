"""`JwtVerifier`: signature, issuer, audience, lifetime and scopes, with keys
made here and served from a mocked issuer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import pytest
from joserfc import jwk

from mcp_specgen_runtime.auth.server import JwtVerifier, Principal
from tests.unit.runtime.auth.server.keys import ISSUER, JWKS_URI, RESOURCE, Issuer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def verifier(issuer: Issuer, **options: object) -> JwtVerifier:
    return JwtVerifier(
        ISSUER, RESOURCE, jwks_uri=JWKS_URI, http=issuer.client(), **options  # type: ignore[arg-type]
    )


@pytest.mark.anyio
async def test_a_good_token_names_its_caller_and_scopes() -> None:
    issuer = Issuer()
    token = issuer.token(scope="mcp:read mcp:write")
    principal = await verifier(issuer).verify(token)
    assert isinstance(principal, Principal)
    assert principal.subject == "alice"
    assert principal.client_id == "client-1"
    assert principal.scopes == {"mcp:read", "mcp:write"}
    assert principal.issuer == ISSUER
    assert principal.claims["sub"] == "alice"
    assert principal.binding == (ISSUER, "alice", "client-1")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "claims",
    [
        {"aud": "https://other.example/mcp"},
        {"aud": ["https://other.example/mcp", "https://third.example"]},
        {"aud": None},
        {"iss": "https://evil.example"},
        {"iss": None},
        {"exp": -120},
        {"exp": None},
        {"exp": "tomorrow"},
        {"nbf": +600},
    ],
    ids=[
        "wrong-aud",
        "wrong-aud-list",
        "no-aud",
        "wrong-iss",
        "no-iss",
        "expired",
        "no-exp",
        "bad-exp",
        "not-yet-valid",
    ],
)
async def test_claims_that_do_not_fit_are_refused(claims: dict[str, Any]) -> None:
    # Times are offsets from now, taken when the test runs (not when it is
    # collected: a long suite would turn "600 s ahead" into the past).
    now = int(time.time())
    for name in ("exp", "nbf"):
        if isinstance(claims.get(name), int):
            claims = {**claims, name: now + claims[name]}
    issuer = Issuer()
    assert await verifier(issuer).verify(issuer.token(**claims)) is None


@pytest.mark.anyio
async def test_audience_in_a_list_and_in_another_spelling_is_accepted() -> None:
    issuer = Issuer()
    token = issuer.token(aud=["https://other.example", "HTTPS://MCP.example/mcp/"])
    assert await verifier(issuer).verify(token) is not None


@pytest.mark.anyio
async def test_clock_skew_within_the_leeway_is_allowed() -> None:
    issuer = Issuer()
    now = int(time.time())
    token = issuer.token(exp=now - 5, nbf=now + 5)
    assert await verifier(issuer, leeway_s=30).verify(token) is not None
    assert await verifier(issuer, leeway_s=0).verify(token) is None


@pytest.mark.anyio
async def test_a_bad_signature_is_refused() -> None:
    issuer = Issuer()
    head, body, signature = issuer.token().split(".")
    forged = json.loads(base64.urlsafe_b64decode(body + "=="))
    forged["scope"] = "admin"
    body = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    assert await verifier(issuer).verify(f"{head}.{body}.{signature}") is None


@pytest.mark.anyio
async def test_a_token_signed_by_another_key_with_the_same_kid_is_refused() -> None:
    issuer = Issuer()
    impostor = jwk.RSAKey.generate_key(2048, {"kid": "rsa-1", "alg": "RS256"})
    assert await verifier(issuer).verify(issuer.token(impostor)) is None


def _unsigned(claims: dict[str, object], alg: str) -> str:
    def part(value: dict[str, object]) -> str:
        raw = json.dumps(value).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    return f"{part({'alg': alg, 'kid': 'rsa-1'})}.{part(claims)}."


@pytest.mark.anyio
async def test_alg_none_is_refused() -> None:
    issuer = Issuer()
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "mallory",
        "exp": now + 300,
    }
    assert await verifier(issuer).verify(_unsigned(claims, "none")) is None


@pytest.mark.anyio
async def test_hmac_signed_with_the_public_key_is_refused() -> None:
    """The algorithm confusion attack: HS256 keyed with the RSA public key."""
    issuer = Issuer()
    public = issuer.rsa.as_pem(private=False)
    claims: dict[str, object] = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "mallory",
        "exp": int(time.time()) + 300,
    }
    unsigned = _unsigned(claims, "HS256")
    signature = hmac.new(public, unsigned.rstrip(".").encode(), hashlib.sha256)
    mac = base64.urlsafe_b64encode(signature.digest()).rstrip(b"=").decode()
    assert await verifier(issuer).verify(unsigned + mac) is None


def test_symmetric_algorithms_cannot_be_allowed() -> None:
    with pytest.raises(ValueError, match="HS256"):
        JwtVerifier(ISSUER, RESOURCE, algorithms=["RS256", "HS256"])


@pytest.mark.anyio
async def test_an_algorithm_off_the_list_is_refused() -> None:
    issuer = Issuer()
    ec = issuer.rotate()
    token = issuer.token(ec, alg="ES256")
    assert await verifier(issuer, algorithms=["RS256"]).verify(token) is None
    assert await verifier(issuer).verify(token) is not None


@pytest.mark.anyio
async def test_a_key_used_with_another_alg_than_its_own_is_refused() -> None:
    """The issuer's RSA key is published for RS256: a PS256 token signed with
    the same key material does not verify."""
    issuer = Issuer()
    material = dict(issuer.rsa.as_dict(private=True))
    del material["alg"]
    same_key = jwk.RSAKey.import_key(material)  # type: ignore[arg-type]
    assert await verifier(issuer).verify(issuer.token(same_key, alg="PS256")) is None


@pytest.mark.anyio
async def test_garbage_is_refused() -> None:
    issuer = Issuer()
    check = verifier(issuer)
    for token in ("", "abc", "a.b.c", "!!.??.**", "e30.e30.e30"):
        assert await check.verify(token) is None


@pytest.mark.anyio
async def test_an_unknown_kid_refetches_the_keys_once_rotated() -> None:
    issuer = Issuer()
    check = verifier(issuer)
    assert await check.verify(issuer.token()) is not None
    assert check.keys.fetches == 1
    # The issuer rotates: a token with the new key makes the cache refetch.
    ec = issuer.rotate()
    check.keys.min_refresh_interval_s = 0
    assert await check.verify(issuer.token(ec, alg="ES256")) is not None
    assert check.keys.fetches == 2
    # Known keys need no fetch.
    assert await check.verify(issuer.token()) is not None
    assert check.keys.fetches == 2


@pytest.mark.anyio
async def test_unknown_kids_refetch_at_most_once_per_interval() -> None:
    issuer = Issuer()
    check = verifier(issuer, jwks_min_refresh_interval_s=60.0)
    assert await check.verify(issuer.token()) is not None
    stranger = jwk.RSAKey.generate_key(2048, {"kid": "made-up", "alg": "RS256"})
    for _ in range(5):
        assert await check.verify(issuer.token(stranger)) is None
    assert check.keys.fetches == 1


@pytest.mark.anyio
async def test_scp_is_read_when_there_is_no_scope() -> None:
    issuer = Issuer()
    token = issuer.token(scope=None, scp=["mcp:read", "mcp:admin"])
    principal = await verifier(issuer).verify(token)
    assert principal is not None
    assert principal.scopes == {"mcp:read", "mcp:admin"}


@pytest.mark.anyio
async def test_the_jwks_uri_comes_from_the_issuer_metadata() -> None:
    issuer = Issuer()
    check = JwtVerifier(ISSUER, RESOURCE, http=issuer.client())
    assert await check.verify(issuer.token()) is not None
    assert issuer.requests == ["/.well-known/oauth-authorization-server", "/jwks"]

"""`StaticVerifier`: a table of tokens, with expiry."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.auth.server import Principal, StaticVerifier


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_known_tokens_only_and_not_once_expired() -> None:
    alice = Principal(subject="alice", scopes=frozenset({"a"}))
    old = Principal(subject="bob", expires_at=1_000)
    verifier = StaticVerifier({"t-alice": alice, "t-old": old}, clock=lambda: 2_000)
    assert await verifier.verify("t-alice") == alice
    assert await verifier.verify("t-old") is None
    assert await verifier.verify("t-unknown") is None
    assert await verifier.verify("") is None


def test_a_principal_binds_by_identity_not_by_token() -> None:
    first = Principal(subject="a", client_id="c", scopes=frozenset({"x"}), expires_at=1)
    refreshed = Principal(
        subject="a", client_id="c", scopes=frozenset({"x", "y"}), expires_at=2
    )
    assert first != refreshed
    assert first.binding == refreshed.binding
    assert refreshed.has_scopes(["x", "y"]) and not first.has_scopes(["y"])

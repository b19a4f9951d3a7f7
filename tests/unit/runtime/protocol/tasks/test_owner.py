"""Owner keys: the principal's binding, else the connection."""

from __future__ import annotations

from mcp_specgen_runtime.auth.server.principal import Principal
from mcp_specgen_runtime.jsonrpc.serving import (
    RequestContext,
    enter_request,
    leave_request,
    reset_peer_address,
    set_peer_address,
)
from mcp_specgen_runtime.protocol.tasks.owner import (
    limit_key,
    owner_of,
    principal_owner,
)


class _Peer:
    async def notify(self, method: str, params: object) -> None: ...

    async def request(self, *args: object, **kwargs: object) -> object: ...


def test_an_anonymous_caller_has_no_principal_owner() -> None:
    assert principal_owner(None) is None


def test_a_principal_is_owned_by_its_binding_not_its_token() -> None:
    one = Principal(
        issuer="https://as", subject="ann", client_id="c", scopes=frozenset({"a"})
    )
    refreshed = Principal(
        issuer="https://as",
        subject="ann",
        client_id="c",
        scopes=frozenset({"a", "b"}),
        expires_at=9,
    )
    other = Principal(issuer="https://as", subject="bob", client_id="c")
    assert principal_owner(one) == principal_owner(refreshed)
    assert principal_owner(one) != principal_owner(other)
    assert "ann" not in str(principal_owner(one))  # a digest, no claims


def test_owner_of_prefers_the_principal_then_the_connection() -> None:
    assert owner_of("k1") == "connection:k1"
    assert owner_of(None) is None
    context = RequestContext(_Peer(), 1, "tools/call", None, principal="alice")
    token = enter_request(context)
    try:
        assert owner_of("k1") == principal_owner("alice")
        assert owner_of("k1") == owner_of("k2")
    finally:
        leave_request(token)


def _key_in(peer: _Peer, address: str | None = None) -> str | None:
    token = set_peer_address(address)
    entered = enter_request(RequestContext(peer, 1, "tasks/get", None))
    try:
        return limit_key(None)
    finally:
        leave_request(entered)
        reset_peer_address(token)


def test_an_owner_spends_its_own_limits() -> None:
    assert limit_key("connection:x") == "connection:x"


def test_anonymous_callers_are_told_apart_by_connection() -> None:
    one, other = _Peer(), _Peer()
    assert _key_in(one) == _key_in(one)
    assert _key_in(one) != _key_in(other)
    assert _key_in(one) is not None


def test_anonymous_http_callers_are_told_apart_by_address() -> None:
    # Every HTTP request has a peer of its own: the address is what lasts.
    assert _key_in(_Peer(), "10.0.0.1") == _key_in(_Peer(), "10.0.0.1")
    assert _key_in(_Peer(), "10.0.0.1") != _key_in(_Peer(), "10.0.0.2")

"""Owner keys: the principal's binding, else the connection."""

from __future__ import annotations

from mcp_codegen_runtime.auth.server.principal import Principal
from mcp_codegen_runtime.jsonrpc.serving import (
    RequestContext,
    enter_request,
    leave_request,
)
from mcp_codegen_runtime.protocol.tasks.owner import owner_of, principal_owner


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

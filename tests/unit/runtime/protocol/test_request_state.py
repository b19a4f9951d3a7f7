"""`RequestStateSealer`: sealed, bound, expiring `requestState` tokens."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

import msgspec
import pytest

from mcp_specgen_runtime.errors import InvalidParamsError
from mcp_specgen_runtime.protocol.request_state import (
    RequestStateSealer,
    principal_digest,
    request_binding,
)

BINDING = request_binding("tools/call", b'{"name":"ask","arguments":{"a":1}}')


def test_a_token_round_trips_its_payload() -> None:
    sealer = RequestStateSealer()
    token = sealer.seal({"answers": [1, "two"]}, BINDING)
    assert sealer.open(token, BINDING, "tools/call") == {"answers": [1, "two"]}


def test_the_payload_cannot_be_read_from_the_token() -> None:
    token = RequestStateSealer().seal({"secret": "swordfish"}, BINDING)
    assert b"swordfish" not in base64.urlsafe_b64decode(token)


def test_the_binding_ignores_key_order_and_retry_members() -> None:
    retry = request_binding(
        "tools/call",
        b'{"arguments":{"a":1},"requestState":"x","inputResponses":{},'
        b'"_meta":{"k":1},"name":"ask"}',
    )
    assert retry == BINDING
    assert request_binding("tools/call", b'{"name":"other"}') != BINDING
    assert request_binding("prompts/get", b'{"name":"ask","arguments":{"a":1}}') != (
        BINDING
    )


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda t: t[:-2] + ("AA" if t[-2:] != "AA" else "BB"), "altered"),
        (lambda t: ("B" if t[0] == "A" else "A") + t[1:], "not a token"),
        (lambda t: "%%%", "not a token"),
        (lambda t: "", "not a token"),
        (lambda t: t[:20], "not a token"),
        (lambda t: t + "-TAMPERED", "not a token"),
        (lambda t: t + "=", "not a token"),
    ],
)
def test_a_changed_token_is_refused(mutate: Callable[[str], str], reason: str) -> None:
    sealer = RequestStateSealer()
    token = sealer.seal({"answers": []}, BINDING)
    with pytest.raises(InvalidParamsError, match=reason) as caught:
        sealer.open(mutate(token), BINDING, "tools/call")
    assert caught.value.code == -32602


def test_a_token_for_another_request_or_key_is_refused() -> None:
    sealer = RequestStateSealer(b"k" * 32)
    token = sealer.seal({}, BINDING)
    other = request_binding("tools/call", b'{"name":"other"}')
    with pytest.raises(InvalidParamsError, match="another request"):
        sealer.open(token, other, "tools/call")
    with pytest.raises(InvalidParamsError, match="another request"):
        RequestStateSealer(b"q" * 32).open(token, BINDING, "tools/call")
    assert RequestStateSealer(b"k" * 32).open(token, BINDING, "tools/call") == {}


def test_an_expired_token_is_refused() -> None:
    sealer = RequestStateSealer(ttl_s=-1)
    token = sealer.seal({}, BINDING)
    with pytest.raises(InvalidParamsError, match="expired"):
        sealer.open(token, BINDING, "tools/call")


def test_the_key_must_be_32_bytes() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        RequestStateSealer(b"short")


@pytest.mark.parametrize("size", range(6))
def test_text_after_the_padding_is_not_ignored(size: int) -> None:
    """base64 decoders stop at `=`; a token with a tail must still fail."""
    sealer = RequestStateSealer()
    token = sealer.seal({"answers": ["x" * size]}, BINDING)
    with pytest.raises(InvalidParamsError):
        sealer.open(token + "-TAMPERED", BINDING, "tools/call")


@dataclass(frozen=True)
class User:
    sub: str
    scopes: tuple[str, ...]


class Claims(msgspec.Struct):
    sub: str
    scopes: list[str]


class Named:
    """Not encodable by msgspec, but with a repr of its own."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Named({self.name!r})"


class Opaque:
    """Neither encodable nor with a repr of its own."""


@pytest.mark.parametrize(
    ("issued_to", "opened_by"),
    [
        ("alice", "bob"),
        ("alice", None),
        (None, "alice"),
        ({"sub": "alice"}, {"sub": "bob"}),
        ("alice", {"sub": "alice"}),
        (Named("alice"), Named("bob")),
    ],
)
def test_a_token_is_refused_to_another_caller(
    issued_to: object, opened_by: object
) -> None:
    sealer = RequestStateSealer()
    token = sealer.seal({"answers": {}}, BINDING, issued_to)
    with pytest.raises(InvalidParamsError, match="issued to another caller") as caught:
        sealer.open(token, BINDING, "tools/call", opened_by)
    assert caught.value.code == -32602
    assert sealer.open(token, BINDING, "tools/call", issued_to) == {"answers": {}}


def test_the_caller_is_named_by_value_not_by_object_or_key_order() -> None:
    claims = {"sub": "alice", "scopes": ["read", "write"]}
    same = [
        claims,
        {"scopes": ["read", "write"], "sub": "alice"},
        User("alice", ("read", "write")),
        Claims(sub="alice", scopes=["read", "write"]),
    ]
    assert {principal_digest(p) for p in same} == {principal_digest(claims)}
    assert principal_digest(Named("alice")) == principal_digest(Named("alice"))
    others = ["alice", {"sub": "alice"}, Named("alice"), "Named('alice')", 1]
    digests = {principal_digest(p) for p in [claims, *others]}
    assert len(digests) == 1 + len(others)
    assert principal_digest(None) == b""


def test_a_principal_without_a_stable_name_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="stable __repr__"):
        RequestStateSealer().seal({}, BINDING, Opaque())


def test_a_principal_with_a_binding_is_digested_by_it() -> None:
    """A refreshed token (new expiry, more scopes) of the same caller keeps
    its request state: the digest is of `binding` alone."""
    from mcp_specgen_runtime.protocol.request_state import (
        principal_binding,
        principal_digest,
    )

    class Caller(msgspec.Struct, frozen=True):
        name: str
        scopes: frozenset[str]

        @property
        def binding(self) -> str:
            return self.name

    first, later = Caller("a", frozenset({"x"})), Caller("a", frozenset({"x", "y"}))
    assert principal_binding(first) == "a"
    assert principal_digest(first) == principal_digest(later)
    assert principal_digest(first) != principal_digest(Caller("b", frozenset()))

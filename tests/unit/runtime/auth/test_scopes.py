"""Scope strings to and from sets."""

from __future__ import annotations

from mcp_specgen_runtime.auth import format_scope, parse_scope


def test_scope_strings() -> None:
    assert parse_scope("a  b a") == {"a", "b"}
    assert parse_scope(["a", "", 3, "b"]) == {"a", "b"}
    assert parse_scope(None) == frozenset()
    assert format_scope({"b", "a"}) == "a b"

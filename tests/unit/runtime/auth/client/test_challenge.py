"""`parse_bearer_challenge`: the Bearer parameters among WWW-Authenticate values."""

from __future__ import annotations

from mcp_specgen_runtime.auth.client.challenge import (
    BearerChallenge,
    parse_bearer_challenge,
)


def test_reads_quoted_and_bare_parameters() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        "resource_metadata=https://mcp.example.com/.well-known/x"
    )
    assert parse_bearer_challenge([header]) == BearerChallenge(
        error="insufficient_scope",
        scope="files:read files:write",
        resource_metadata="https://mcp.example.com/.well-known/x",
    )


def test_unescapes_quoted_strings() -> None:
    found = parse_bearer_challenge([r'Bearer error_description="say \"no\""'])
    assert found is not None and found.error_description == 'say "no"'


def test_finds_bearer_after_another_scheme_in_one_value() -> None:
    found = parse_bearer_challenge(['Basic realm="x", Bearer scope="a b"'])
    assert found == BearerChallenge(scope="a b")


def test_scheme_and_parameter_names_ignore_case() -> None:
    found = parse_bearer_challenge(['bEaReR SCOPE="a"'])
    assert found == BearerChallenge(scope="a")


def test_a_bare_bearer_has_no_parameters() -> None:
    assert parse_bearer_challenge(["Bearer"]) == BearerChallenge()


def test_no_bearer_challenge() -> None:
    assert parse_bearer_challenge(['Basic realm="x"', "DPoP"]) is None
    assert parse_bearer_challenge([]) is None


def test_a_later_header_value_is_read() -> None:
    found = parse_bearer_challenge(['Basic realm="x"', 'Bearer scope="s"'])
    assert found == BearerChallenge(scope="s")

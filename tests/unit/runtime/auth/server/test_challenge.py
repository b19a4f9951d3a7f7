"""`WWW-Authenticate: Bearer` challenges."""

from __future__ import annotations

from mcp_specgen_runtime.auth.server.challenge import (
    bearer_challenge,
    forbidden,
    unauthorized,
)

PRM = "https://mcp.example/.well-known/oauth-protected-resource/mcp"


def test_no_token_has_no_error_code() -> None:
    challenge = unauthorized(PRM, ["b", "a"])
    assert challenge.status == 401
    assert (
        challenge.www_authenticate == f'Bearer resource_metadata="{PRM}", scope="a b"'
    )


def test_a_bad_token_is_invalid_token() -> None:
    challenge = unauthorized(PRM, error="invalid_token", description="expired")
    assert challenge.www_authenticate == (
        f'Bearer resource_metadata="{PRM}", error="invalid_token", '
        'error_description="expired"'
    )


def test_insufficient_scope_is_403_naming_the_scopes() -> None:
    challenge = forbidden(PRM, ["mcp:write"])
    assert challenge.status == 403
    assert 'error="insufficient_scope"' in challenge.www_authenticate
    assert 'scope="mcp:write"' in challenge.www_authenticate


def test_quotes_and_backslashes_are_escaped() -> None:
    header = bearer_challenge(description='say "hi" \\ bye')
    assert header == 'Bearer error_description="say \\"hi\\" \\\\ bye"'
    assert bearer_challenge() == "Bearer"

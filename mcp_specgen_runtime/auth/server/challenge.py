"""The `WWW-Authenticate: Bearer` challenges of RFC 6750 (section 3), with the
`resource_metadata` parameter of RFC 9728 (section 5.1) MCP clients follow."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...transports.http.auth import AuthChallenge
from ..scopes import format_scope

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "INSUFFICIENT_SCOPE",
    "INVALID_REQUEST",
    "INVALID_TOKEN",
    "bearer_challenge",
    "forbidden",
    "invalid_request",
    "unauthorized",
]

INVALID_REQUEST = "invalid_request"
INVALID_TOKEN = "invalid_token"
INSUFFICIENT_SCOPE = "insufficient_scope"


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def bearer_challenge(
    *,
    resource_metadata: str | None = None,
    scope: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
) -> str:
    """A `Bearer` challenge: `Bearer resource_metadata="…", scope="…"`, with
    `error` and `error_description` when given (none for a request that
    carried no token at all, as RFC 6750 asks)."""
    params: list[str] = []
    if resource_metadata is not None:
        params.append(f"resource_metadata={_quoted(resource_metadata)}")
    scopes = format_scope(scope)
    if scopes:
        params.append(f"scope={_quoted(scopes)}")
    if error is not None:
        params.append(f"error={_quoted(error)}")
    if description is not None:
        params.append(f"error_description={_quoted(description)}")
    return "Bearer " + ", ".join(params) if params else "Bearer"


def unauthorized(
    resource_metadata: str,
    scope: Iterable[str] = (),
    *,
    error: str | None = None,
    description: str | None = None,
) -> AuthChallenge:
    """401: no token (no `error`), or a token not valid here (`invalid_token`)."""
    header = bearer_challenge(
        resource_metadata=resource_metadata,
        scope=scope,
        error=error,
        description=description,
    )
    return AuthChallenge(
        401, header, f"Unauthorized: {description or 'a bearer token is required'}"
    )


def forbidden(resource_metadata: str, scope: Iterable[str]) -> AuthChallenge:
    """403 `insufficient_scope`, naming the scopes to ask for (step-up)."""
    scopes = format_scope(scope)
    description = f"this request needs scope {scopes}"
    header = bearer_challenge(
        resource_metadata=resource_metadata,
        scope=scope,
        error=INSUFFICIENT_SCOPE,
        description=description,
    )
    return AuthChallenge(403, header, f"Forbidden: {description}")


def invalid_request(resource_metadata: str, description: str) -> AuthChallenge:
    """400 `invalid_request`: credentials sent in a way that is not accepted."""
    header = bearer_challenge(
        resource_metadata=resource_metadata,
        error=INVALID_REQUEST,
        description=description,
    )
    return AuthChallenge(400, header, f"Bad Request: {description}")

"""Errors of the OAuth client.

TransportError
└── AuthorizationError   no usable token could be obtained
    └── TokenError       the authorization server refused a token request
"""

from __future__ import annotations

from mcp_specgen_runtime.errors import TransportError

__all__ = ["AuthorizationError", "TokenError"]


class AuthorizationError(TransportError):
    """The OAuth flow could not authorize the request (discovery,
    registration, the user's consent or a check of the response failed)."""


class TokenError(AuthorizationError):
    """The token endpoint answered with an error (RFC 6749 §5.2)."""

    def __init__(self, error: str, description: str | None = None) -> None:
        self.error = error
        self.description = description
        super().__init__(f"{error}: {description}" if description else error)

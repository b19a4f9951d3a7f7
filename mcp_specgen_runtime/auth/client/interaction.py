"""The user's part of the authorization-code flow, pluggable.

A `RedirectHandler` sends the user to the authorization URL (opens a
browser, prints it...); a `CallbackReceiver` waits for the redirect back and
returns its parameters. `LoopbackCallback` (module `loopback`) is a ready
receiver for command-line apps.
"""

from __future__ import annotations

from typing import Protocol
from urllib.parse import parse_qs, urlsplit

import msgspec

__all__ = ["AuthorizationResponse", "CallbackReceiver", "RedirectHandler"]


class AuthorizationResponse(msgspec.Struct, kw_only=True, frozen=True):
    """The parameters of the redirect back to the client (RFC 6749 §4.1.2,
    RFC 9207)."""

    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None

    @classmethod
    def from_url(cls, url: str) -> AuthorizationResponse:
        """Read the response from the redirect URL's query."""
        query = parse_qs(urlsplit(url).query)

        def one(name: str) -> str | None:
            values = query.get(name)
            return values[0] if values else None

        return cls(
            code=one("code"),
            state=one("state"),
            iss=one("iss"),
            error=one("error"),
            error_description=one("error_description"),
        )


class RedirectHandler(Protocol):
    """Sends the user to the authorization URL."""

    async def __call__(self, url: str) -> None: ...


class CallbackReceiver(Protocol):
    """Waits for the authorization response (the redirect to the client)."""

    async def __call__(self, state: str) -> AuthorizationResponse:
        """The response to the request sent with `state` (a receiver that can
        tell responses apart ignores the others; the flow checks it again)."""
        ...

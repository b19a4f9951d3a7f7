"""What the HTTP server asks of an authorization layer, free of any OAuth code.

`McpHttpApp(auth=...)` takes any object of the `HttpAuth` shape (the
`ResourceServer` of `mcp_codegen_runtime.auth.server` is one): it names the
caller of each request, or refuses it by raising `AuthChallenge`, whose status
and `WWW-Authenticate` value the server answers with as they are (401 for a
missing or bad token, 403 for scopes the request lacks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Collection

    from .server import HttpRequest

__all__ = ["AuthChallenge", "HttpAuth"]


class AuthChallenge(Exception):
    """A refusal to answer with `status` and a `WWW-Authenticate` header.

    Args:
        status: 401 (no or bad credentials) or 403 (not enough scope).
        www_authenticate: the header's value, e.g. `Bearer error="..."`.
        message: the reason, sent in the JSON-RPC error body.
    """

    def __init__(self, status: int, www_authenticate: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.www_authenticate = www_authenticate
        self.message = message


class HttpAuth(Protocol):
    """An authorization layer the HTTP server consults."""

    async def authenticate(self, request: HttpRequest) -> object:
        """Who sent `request`.

        Raises:
            AuthChallenge: the request is refused (typically 401).
        """
        ...

    def authorize(self, principal: object, scopes: Collection[str]) -> None:
        """Check that `principal` holds `scopes`, the scopes one request needs.

        Raises:
            AuthChallenge: it does not (typically 403 `insufficient_scope`).
        """
        ...

    def mount(self, app: Any) -> Any:
        """`app` (ASGI) with the layer's own routes (its metadata) in front."""
        ...

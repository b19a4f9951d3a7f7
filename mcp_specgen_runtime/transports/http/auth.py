"""What the HTTP server asks of an authorization layer, free of any OAuth code.

`McpHttpApp(auth=...)` takes any object of the `HttpAuth` shape (the
`ResourceServer` of `mcp_specgen_runtime.auth.server` is one): it names the
caller of each request, or refuses it by raising `AuthChallenge`, whose status
and `WWW-Authenticate` value the server answers with as they are (401 for a
missing or bad token, 403 for scopes the request lacks).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcp_specgen_runtime.jsonrpc.envelope import BadMessage

from .messages import Batch, params_of, request_id

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection, Mapping

    from mcp_specgen_runtime.jsonrpc.envelope import Envelope

    from .headers import HttpHeaders

    Scope = dict[str, Any]

__all__ = [
    "AuthChallenge",
    "HttpAuth",
    "HttpRequest",
    "authenticate_request",
    "authenticate_with",
    "authorize_requests",
    "current_request",
    "request_of",
]


@dataclass(frozen=True)
class HttpRequest:
    """An HTTP request as the server sees it: what the `authenticate` hook
    gets, and what a handler finds as `RequestContext.http_request`."""

    method: str
    path: str
    headers: HttpHeaders
    client: tuple[str, int] | None
    query: bytes = b""
    """The raw query string (an auth layer refuses a token sent there)."""
    scheme: str = "http"
    """"http" or "https", as the ASGI server says."""


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


def authorize_requests(
    auth: HttpAuth | None,
    required_scopes: Callable[[str, Mapping[str, Any]], Collection[str]] | None,
    principal: object,
    body: Envelope | Batch,
) -> None:
    """Refuse a POST body holding a request `principal` lacks the scopes of,
    before any of it is served.

    Raises:
        AuthChallenge: a request needs scopes the principal does not hold.
    """
    if auth is None or required_scopes is None:
        return
    for item in body.items if isinstance(body, Batch) else [body]:
        if isinstance(item, BadMessage) or request_id(item) is None:
            continue
        assert isinstance(item.method, str)  # a request has one
        needed = required_scopes(item.method, params_of(item))
        if needed:
            auth.authorize(principal, needed)


def request_of(scope: Scope, headers: HttpHeaders) -> HttpRequest:
    """What the `authenticate` hook sees of the ASGI request `scope`."""
    client = scope.get("client")
    return HttpRequest(
        scope["method"],
        scope.get("path", ""),
        headers,
        tuple(client) if client else None,
        scope.get("query_string", b""),
        scope.get("scheme", "http"),
    )


async def authenticate_with(
    hook: Callable[[HttpRequest], Awaitable[object]],
    scope: Scope,
    headers: HttpHeaders,
) -> object:
    """Who sent the ASGI request `scope`, as the bare `authenticate` hook says
    (see `authenticate_request`)."""
    return await authenticate_request(hook, request_of(scope, headers))


async def authenticate_request(
    hook: Callable[[HttpRequest], Awaitable[object]], request: HttpRequest
) -> object:
    """Who sent `request`, as the bare `authenticate` hook says.

    Raises:
        AuthChallenge: the hook returned None (401, `WWW-Authenticate: Bearer`),
            or raised a challenge of its own.
    """
    principal = await hook(request)
    if principal is None:
        raise AuthChallenge(
            401, "Bearer", "Unauthorized: missing or invalid credentials"
        )
    return principal


current_request: contextvars.ContextVar[HttpRequest | None] = contextvars.ContextVar(
    "mcp_specgen_runtime.http.request", default=None
)
"""The HTTP request being served, as the `authenticate` hook sees it (set
by `McpHttpApp`; a request forwarded to another instance carries it)."""


request_principal: contextvars.ContextVar[object] = contextvars.ContextVar(
    "mcp_specgen_runtime.http.principal", default=None
)
"""Who the HTTP request being served is: what `authenticate` returned (read
by `http_principal`)."""

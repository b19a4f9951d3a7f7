"""The authorization-code request and its response: PKCE S256 (RFC 7636),
`state`, the `resource` parameter (RFC 8707) and the `iss` check (RFC 9207)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit, urlunsplit

import msgspec

from .errors import AuthorizationError

if TYPE_CHECKING:
    from ..metadata import AuthorizationServerMetadata
    from .interaction import AuthorizationResponse

__all__ = ["AuthorizationRequest", "check_response", "start_authorization"]


class AuthorizationRequest(msgspec.Struct, kw_only=True, frozen=True):
    """One authorization request: the URL for the user's browser and what
    the client keeps to check the answer and redeem the code."""

    url: str
    state: str
    code_verifier: str
    redirect_uri: str
    issuer: str


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def start_authorization(
    server: AuthorizationServerMetadata,
    *,
    client_id: str,
    redirect_uri: str,
    resource: str,
    scope: str | None,
    documented: bool = True,
) -> AuthorizationRequest:
    """Build the authorization request with a fresh PKCE verifier and state.

    Raises:
        AuthorizationError: the server has no authorization endpoint, or its
            metadata does not offer PKCE with S256 (the client must not go on).
    """
    if server.authorization_endpoint is None:
        raise AuthorizationError(f"{server.issuer} has no authorization endpoint")
    methods = server.code_challenge_methods_supported
    if documented and (methods is None or "S256" not in methods):
        raise AuthorizationError(
            f"{server.issuer} does not advertise PKCE with S256 "
            "(code_challenge_methods_supported)"
        )
    verifier = secrets.token_urlsafe(48)
    state = secrets.token_urlsafe(24)
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": _challenge(verifier),
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
    }
    if scope:
        query["scope"] = scope
    parts = urlsplit(server.authorization_endpoint)
    joined = "&".join(p for p in (parts.query, urlencode(query)) if p)
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))
    return AuthorizationRequest(
        url=url,
        state=state,
        code_verifier=verifier,
        redirect_uri=redirect_uri,
        issuer=server.issuer,
    )


def check_response(
    request: AuthorizationRequest,
    response: AuthorizationResponse,
    server: AuthorizationServerMetadata,
) -> str:
    """The authorization code, once the response is checked.

    Raises:
        AuthorizationError: an error response, a state mismatch, or an `iss`
            that is missing where the server promised it or differs from the
            issuer (compared as plain strings, RFC 9207 §2.4).
    """
    if response.error is not None:
        detail = f": {response.error_description}" if response.error_description else ""
        raise AuthorizationError(f"authorization refused: {response.error}{detail}")
    given, expected = (response.state or "").encode(), request.state.encode()
    if not secrets.compare_digest(given, expected):
        raise AuthorizationError("the authorization response's state does not match")
    if response.iss is not None:
        if response.iss != request.issuer:
            raise AuthorizationError(
                f"the authorization response comes from {response.iss!r}, "
                f"not {request.issuer!r}"
            )
    elif server.authorization_response_iss_parameter_supported:
        raise AuthorizationError("the authorization response lacks its `iss`")
    if not response.code:
        raise AuthorizationError("the authorization response carries no code")
    return response.code

"""Token requests (authorization code, refresh, client credentials) with the
client's authentication at the token endpoint, and reading the answers."""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING
from urllib.parse import quote

import httpx
import msgspec

from .assertion import ASSERTION_TYPE
from .documents import TokenSet
from .errors import AuthorizationError, TokenError

if TYPE_CHECKING:
    from ..metadata import AuthorizationServerMetadata
    from .assertion import PrivateKeyJwt
    from .documents import ClientInformation

__all__ = [
    "auth_method",
    "authorization_code_request",
    "client_credentials_request",
    "jwt_bearer_request",
    "read_token_response",
    "refresh_request",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_PREFERENCE = ("private_key_jwt", "client_secret_basic", "client_secret_post", "none")


class _Error(msgspec.Struct):
    error: str
    error_description: str | None = None


def auth_method(
    client: ClientInformation,
    server: AuthorizationServerMetadata,
    key: PrivateKeyJwt | None,
) -> str:
    """How the client authenticates at the token endpoint: what its
    registration says, else the first the server supports that the client
    can do (a key for `private_key_jwt`, a secret for the two secret ones)."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    able = [
        method
        for method in _PREFERENCE
        if (method != "private_key_jwt" or key is not None)
        and (not method.startswith("client_secret") or client.client_secret)
    ]
    offered = server.token_endpoint_auth_methods_supported
    if offered:
        for method in able:
            if method in offered:
                return method
    # RFC 8414 §2: the default is client_secret_basic.
    return able[0] if able else "none"


def _request(
    server: AuthorizationServerMetadata,
    client: ClientInformation,
    form: dict[str, str],
    *,
    key: PrivateKeyJwt | None,
) -> httpx.Request:
    """The token request carrying `form`, the client authenticated as
    `auth_method` says."""
    method = auth_method(client, server, key)
    headers = {"Accept": "application/json"}
    if method == "client_secret_basic":
        # RFC 6749 §2.3.1: both halves form-urlencoded before base64.
        secret = client.client_secret or ""
        pair = f"{quote(client.client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif method == "client_secret_post":
        form["client_id"] = client.client_id
        form["client_secret"] = client.client_secret or ""
    elif method == "private_key_jwt":
        if key is None:
            raise TokenError("invalid_client", "private_key_jwt needs a signing key")
        form["client_id"] = client.client_id
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = key.sign(
            client_id=client.client_id, audience=server.issuer
        )
    else:
        form["client_id"] = client.client_id
    if server.token_endpoint is None:  # discovery passes such metadata over
        raise AuthorizationError(f"{server.issuer} names no token endpoint")
    return httpx.Request("POST", server.token_endpoint, data=form, headers=headers)


def authorization_code_request(
    server: AuthorizationServerMetadata,
    client: ClientInformation,
    *,
    code: str,
    code_verifier: str,
    redirect_uri: str,
    resource: str,
    key: PrivateKeyJwt | None = None,
) -> httpx.Request:
    """Redeem an authorization code (RFC 6749 §4.1.3, with PKCE and RFC 8707)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": code_verifier,
        "redirect_uri": redirect_uri,
        "resource": resource,
    }
    return _request(server, client, form, key=key)


def refresh_request(
    server: AuthorizationServerMetadata,
    client: ClientInformation,
    *,
    refresh_token: str,
    resource: str,
    key: PrivateKeyJwt | None = None,
) -> httpx.Request:
    """Use a refresh token (RFC 6749 §6), for the same resource."""
    form = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "resource": resource,
    }
    return _request(server, client, form, key=key)


def client_credentials_request(
    server: AuthorizationServerMetadata,
    client: ClientInformation,
    *,
    resource: str,
    scope: str | None,
    key: PrivateKeyJwt | None = None,
) -> httpx.Request:
    """Ask for a token as the client itself (RFC 6749 §4.4)."""
    form = {"grant_type": "client_credentials", "resource": resource}
    if scope:
        form["scope"] = scope
    return _request(server, client, form, key=key)


def jwt_bearer_request(
    server: AuthorizationServerMetadata,
    client: ClientInformation,
    *,
    assertion: str,
    resource: str,
    scope: str | None,
    key: PrivateKeyJwt | None = None,
) -> httpx.Request:
    """Trade a JWT authorization grant for a token (RFC 7523 §2.1)."""
    form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": resource}
    if scope:
        form["scope"] = scope
    return _request(server, client, form, key=key)


def read_token_response(
    response: httpx.Response,
    *,
    issuer: str,
    resource: str,
    previous: TokenSet | None = None,
    token_types: tuple[str, ...] = ("bearer",),
) -> TokenSet:
    """The tokens of a token response; a refresh answer without a new
    refresh token keeps the previous one (RFC 6749 §6).

    Raises:
        TokenError: an error answer, or a token of a type not in
            `token_types` (lower case; `dpop` where the client sent a proof).
    """
    if response.status_code != 200:
        try:
            error = msgspec.json.decode(response.content, type=_Error)
        except (msgspec.ValidationError, msgspec.DecodeError):
            raise TokenError(
                "invalid_response",
                f"HTTP {response.status_code} from the token endpoint",
            ) from None
        raise TokenError(error.error, error.error_description)
    try:
        tokens = msgspec.json.decode(response.content, type=TokenSet)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise TokenError("invalid_response", str(exc)) from None
    if tokens.token_type.lower() not in token_types:
        raise TokenError("invalid_response", f"token type {tokens.token_type!r}")
    refresh = tokens.refresh_token
    if refresh is None and previous is not None:
        refresh = previous.refresh_token
    expires_at = None if tokens.expires_in is None else time.time() + tokens.expires_in
    return msgspec.structs.replace(
        tokens,
        refresh_token=refresh,
        expires_at=expires_at,
        issuer=issuer,
        resource=resource,
    )

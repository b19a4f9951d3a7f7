"""The client's identity at an authorization server, in the specification's
order of preference: pre-registered credentials, a Client ID Metadata
Document (when the server supports them and the app has one), Dynamic Client
Registration (RFC 7591)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import httpx
import msgspec

from .documents import ClientInformation, ClientMetadata
from .errors import AuthorizationError

if TYPE_CHECKING:
    from collections.abc import Generator

    from ..metadata import AuthorizationServerMetadata

__all__ = ["obtain_client", "registration_request", "usable"]


def usable(client: ClientInformation | None, issuer: str) -> bool:
    """Whether `client` may be presented to `issuer`: bound to it (or to no
    issuer, for pre-registered credentials) and its secret not expired."""
    if client is None or client.issuer not in (None, issuer):
        return False
    expires = client.client_secret_expires_at
    return not expires or expires > time.time()


def registration_request(
    server: AuthorizationServerMetadata, metadata: ClientMetadata
) -> httpx.Request:
    """The registration request, asking for a token endpoint authentication
    the server supports (the app's choice when it is among them)."""
    if server.registration_endpoint is None:
        raise AuthorizationError(f"{server.issuer} offers no dynamic registration")
    offered = server.token_endpoint_auth_methods_supported
    method = metadata.token_endpoint_auth_method
    if offered and method not in offered:
        for candidate in ("none", "client_secret_basic", "client_secret_post"):
            if candidate in offered:
                method = candidate
                break
    body = msgspec.structs.replace(metadata, token_endpoint_auth_method=method)
    return httpx.Request(
        "POST",
        server.registration_endpoint,
        content=msgspec.json.encode(body),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )


def obtain_client(
    server: AuthorizationServerMetadata,
    *,
    preregistered: ClientInformation | None,
    stored: ClientInformation | None,
    metadata: ClientMetadata | None,
    metadata_url: str | None,
) -> Generator[httpx.Request, httpx.Response, tuple[ClientInformation, bool]]:
    """The identity to use at `server`, and whether it is new (to store).

    Raises:
        AuthorizationError: no way to identify the client at this server.
    """
    if preregistered is not None and usable(preregistered, server.issuer):
        return preregistered, False
    if stored is not None and usable(stored, server.issuer):
        return stored, False
    if metadata_url is not None and server.client_id_metadata_document_supported:
        document = ClientInformation(
            client_id=metadata_url,
            token_endpoint_auth_method="none",
            issuer=server.issuer,
        )
        return document, False
    if metadata is None or server.registration_endpoint is None:
        raise AuthorizationError(
            f"no client identity for {server.issuer}: give pre-registered "
            "credentials, or client metadata for a server offering registration"
        )
    request = registration_request(server, metadata)
    response = yield request
    if response.status_code not in (200, 201):
        raise AuthorizationError(
            f"registration at {server.registration_endpoint} answered "
            f"HTTP {response.status_code}: {response.text[:200]}"
        )
    try:
        registered = msgspec.json.decode(response.content, type=ClientInformation)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise AuthorizationError(f"unreadable registration response: {exc}") from None
    sent = msgspec.json.decode(request.content, type=ClientMetadata)
    method = registered.token_endpoint_auth_method or sent.token_endpoint_auth_method
    return (
        msgspec.structs.replace(
            registered, issuer=server.issuer, token_endpoint_auth_method=method
        ),
        True,
    )

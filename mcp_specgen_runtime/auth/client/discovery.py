"""Finding the authorization server of an MCP server, sans I/O.

`discover` is a generator: it yields the `httpx.Request`s to make and is sent
their responses, and returns a `Discovery`. The order follows the
specification: Protected Resource Metadata (RFC 9728) from the challenge's
`resource_metadata`, else the path-suffixed then the root well-known URL;
then the first authorization server's metadata, RFC 8414 and OpenID Connect
discovery with the path-insertion rules; and, when the server publishes no
resource metadata, the 2025-03-26 fallbacks (the server's origin as issuer,
its RFC 8414 document or the default `/authorize`, `/token`, `/register`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from mcp_specgen_runtime.transports.http.security import is_loopback

from ..metadata import (
    PROTECTED_RESOURCE_WELL_KNOWN,
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    canonical_resource_url,
    protected_resource_metadata_url,
)
from .errors import AuthorizationError

if TYPE_CHECKING:
    from collections.abc import Generator

    from .challenge import BearerChallenge

__all__ = [
    "Discovery",
    "discover",
    "origin",
    "resource_allowed",
    "resource_metadata_urls",
    "secure_endpoint",
    "server_metadata_urls",
]

_OAUTH = "/.well-known/oauth-authorization-server"
_OIDC = "/.well-known/openid-configuration"
_HEADERS = {"Accept": "application/json"}
_T = TypeVar("_T")


class Discovery(msgspec.Struct, kw_only=True, frozen=True):
    """What discovery found for one MCP server.

    `resource` is the value of the `resource` parameter (RFC 8707): the
    metadata's `resource` exactly as published, else the server's canonical
    URI. `documented` is False when the endpoints are the 2025-03-26 defaults.
    """

    resource: str
    server: AuthorizationServerMetadata
    resource_metadata: ProtectedResourceMetadata | None = None
    documented: bool = True


def origin(url: str) -> str:
    """`scheme://host[:port]` of `url`, scheme and host in lower case."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def resource_metadata_urls(server_url: str) -> list[str]:
    """The well-known Protected Resource Metadata URLs to try, in order: the
    one for the server's path (RFC 9728 §3.1), then the origin's."""
    found = protected_resource_metadata_url(server_url)
    root = origin(server_url) + PROTECTED_RESOURCE_WELL_KNOWN
    return [found] if found == root else [found, root]


def server_metadata_urls(issuer: str) -> list[str]:
    """The authorization server metadata URLs of `issuer`, in the
    specification's order: RFC 8414 with path insertion, OpenID Connect with
    path insertion, OpenID Connect with the path appended."""
    path = urlsplit(issuer).path.rstrip("/")
    base = origin(issuer)
    if not path:
        return [f"{base}{_OAUTH}", f"{base}{_OIDC}"]
    return [f"{base}{_OAUTH}{path}", f"{base}{_OIDC}{path}", f"{base}{path}{_OIDC}"]


def secure_endpoint(url: str) -> bool:
    """HTTPS, or plain HTTP to the loopback interface (development and
    native apps): what an authorization server endpoint may be."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and is_loopback(parts.hostname or "")


def resource_allowed(server_url: str, resource: str) -> bool:
    """Whether metadata naming `resource` may speak for `server_url`: same
    origin, and the resource's path is the server's path or a parent of it."""
    server, claimed = urlsplit(server_url), urlsplit(resource)
    if origin(server_url) != origin(resource) or claimed.query or claimed.fragment:
        return False
    mine = server.path.rstrip("/") + "/"
    theirs = claimed.path.rstrip("/") + "/"
    return mine.startswith(theirs)


def _get(url: str) -> httpx.Request:
    return httpx.Request("GET", url, headers=_HEADERS)


def _decode(response: httpx.Response, kind: type[_T]) -> _T | None:
    if response.status_code != 200:
        return None
    try:
        return msgspec.json.decode(response.content, type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


def discover(
    server_url: str, challenge: BearerChallenge | None
) -> Generator[httpx.Request, httpx.Response, Discovery]:
    """Discover the authorization server of `server_url` (see the module).

    Raises:
        AuthorizationError: the metadata names another resource or no
            authorization server, or no server metadata could be used.
    """
    urls = resource_metadata_urls(server_url)
    if challenge is not None and challenge.resource_metadata:
        hinted = challenge.resource_metadata
        urls = [hinted, *(url for url in urls if url != hinted)]
    found: ProtectedResourceMetadata | None = None
    for url in urls:
        found = _decode((yield _get(url)), ProtectedResourceMetadata)
        if found is not None:
            break
    if found is None:
        return (yield from _legacy(server_url))
    if not resource_allowed(server_url, found.resource):
        raise AuthorizationError(
            f"the resource metadata names {found.resource!r}, "
            f"not this server ({server_url})"
        )
    if not found.authorization_servers:
        raise AuthorizationError("the resource metadata names no authorization server")
    issuer = found.authorization_servers[0]
    server = yield from _server_metadata(issuer)
    if server is None:
        raise AuthorizationError(f"no authorization server metadata for {issuer}")
    return Discovery(resource=found.resource, server=server, resource_metadata=found)


def _server_metadata(
    issuer: str,
) -> Generator[httpx.Request, httpx.Response, AuthorizationServerMetadata | None]:
    for url in server_metadata_urls(issuer):
        metadata = _decode((yield _get(url)), AuthorizationServerMetadata)
        if metadata is None or metadata.token_endpoint is None:
            continue
        # RFC 8414 §3.3: simple string comparison, no normalization.
        if metadata.issuer != issuer:
            raise AuthorizationError(
                f"the metadata at {url} names issuer {metadata.issuer!r}, "
                f"not {issuer!r}"
            )
        return _checked(metadata)
    return None


def _checked(metadata: AuthorizationServerMetadata) -> AuthorizationServerMetadata:
    """`metadata`, once each of its endpoints is HTTPS (or loopback)."""
    for endpoint in (
        metadata.authorization_endpoint,
        metadata.token_endpoint,
        metadata.registration_endpoint,
    ):
        if endpoint is not None and not secure_endpoint(endpoint):
            raise AuthorizationError(
                f"{metadata.issuer} names an endpoint that is not HTTPS: {endpoint}"
            )
    return metadata


def _legacy(server_url: str) -> Generator[httpx.Request, httpx.Response, Discovery]:
    """2025-03-26: the MCP server's origin is the authorization server."""
    base = origin(server_url)
    metadata = _decode((yield _get(f"{base}{_OAUTH}")), AuthorizationServerMetadata)
    # That revision took the origin as the authorization base URL, not as
    # the issuer: the issuer may add a path, but not move to another origin.
    if metadata is not None and origin(metadata.issuer) != base:
        raise AuthorizationError(
            f"the metadata at {base}{_OAUTH} names issuer {metadata.issuer!r}"
        )
    if metadata is not None and metadata.token_endpoint is None:
        metadata = None
    documented = metadata is not None
    if metadata is not None:
        metadata = _checked(metadata)
    else:
        metadata = AuthorizationServerMetadata(
            issuer=base,
            authorization_endpoint=f"{base}/authorize",
            token_endpoint=f"{base}/token",
            registration_endpoint=f"{base}/register",
        )
    return Discovery(
        resource=canonical_resource_url(server_url),
        server=metadata,
        documented=documented,
    )

"""Finding an issuer's metadata (and so its `jwks_uri`) from its identifier.

RFC 8414 section 3.1 inserts the well-known segment between host and path
(`https://as/.well-known/oauth-authorization-server/tenant`); OpenID Connect
discovery appends it (`https://as/tenant/.well-known/openid-configuration`),
and inserting it is tried too, as MCP clients do. The first document found
whose `issuer` is the one asked for wins: a document naming another issuer
is refused (RFC 8414 section 3.3), so a mix-up cannot swap in foreign keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import msgspec

from ..metadata import AuthorizationServerMetadata

if TYPE_CHECKING:
    import httpx

__all__ = ["IssuerDiscoveryError", "discover_issuer", "issuer_metadata_urls"]


class IssuerDiscoveryError(Exception):
    """No metadata document of the issuer could be found."""


def issuer_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order MCP clients try them."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    oauth = "/.well-known/oauth-authorization-server"
    oidc = "/.well-known/openid-configuration"
    if not path:
        return [at(oauth), at(oidc)]
    return [at(oauth + path), at(oidc + path), at(path + oidc)]


async def discover_issuer(
    client: httpx.AsyncClient, issuer: str
) -> AuthorizationServerMetadata:
    """The metadata of `issuer`, from the first URL that serves it.

    Raises:
        IssuerDiscoveryError: no URL served a document for this issuer.
        httpx.HTTPError: the issuer could not be reached.
    """
    for url in issuer_metadata_urls(issuer):
        response = await client.get(url, headers={"accept": "application/json"})
        if response.status_code != 200:
            continue
        try:
            metadata = msgspec.json.decode(
                response.content, type=AuthorizationServerMetadata
            )
        except msgspec.DecodeError:
            continue
        if metadata.issuer == issuer:
            return metadata
    raise IssuerDiscoveryError(f"no authorization server metadata for {issuer!r}")

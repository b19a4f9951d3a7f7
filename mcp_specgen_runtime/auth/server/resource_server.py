"""`ResourceServer`: an MCP server's OAuth settings, as the HTTP server's
authorization layer (`HttpAuth`).

    auth = ResourceServer(
        JwtVerifier("https://as.example", "https://mcp.example/mcp"),
        "https://mcp.example/mcp",
        authorization_servers=["https://as.example"],
        scopes_supported=["mcp:read", "mcp:write"],
        required_scopes=["mcp:read"],
    )
    app.run("http", auth=auth)

For each request it:

- refuses a token in the query string (400 `invalid_request`): RFC 6750
  section 2.3 URIs end up in logs and histories, and MCP forbids them; the
  token there is never verified;
- reads the token from `Authorization: Bearer` only; none (or another
  scheme) is 401 with `resource_metadata` and the required scopes and no
  error code, a token the verifier refuses is 401 `invalid_token`, and so
  is one whose `aud` claim does not name `resource_url` (RFC 8707: checked
  here, whatever the verifier; an introspection answer without `aud`, or a
  `StaticVerifier` principal without `claims={"aud": resource_url}`, is
  refused too);
- leaves expiry to the verifier, which alone applies its leeway (see
  `TokenVerifier`);
- refuses (403 `insufficient_scope`) a token without `required_scopes`, and,
  through `authorize`, one without the scopes of the request (a tool's).

It serves the metadata document (`ProtectedResourceMetadata`) at both
`/.well-known/oauth-protected-resource` and the form suffixed with the
resource's path (RFC 9728 section 3.1), which `WWW-Authenticate` names.

The token itself goes no further than the verifier: handlers see the
`Principal`, never the token, so it cannot be passed on to another service
(MCP forbids token passthrough; call other APIs with tokens of their own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import msgspec

from ..metadata import (
    PROTECTED_RESOURCE_WELL_KNOWN,
    ProtectedResourceMetadata,
    canonical_resource_url,
    protected_resource_metadata_path,
    protected_resource_metadata_url,
)
from .audience import names_resource
from .challenge import INVALID_TOKEN, forbidden, invalid_request, unauthorized
from .principal import Principal
from .routes import MetadataRoutes

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from ...transports.http.auth import HttpRequest
    from .base import TokenVerifier

__all__ = ["ResourceServer"]


class ResourceServer:
    """The resource server side of MCP authorization; see the module docstring.

    Args:
        verifier: checks tokens (`JwtVerifier`, `IntrospectionVerifier`,
            `StaticVerifier`, or any `TokenVerifier`).
        resource_url: this server's MCP endpoint URL, as clients reach it
            (the `resource` of its metadata and the audience of its tokens).
        authorization_servers: the issuers whose tokens it accepts.
        scopes_supported: the scopes it knows, advertised in the metadata.
        required_scopes: scopes every request needs (401 names them).
        resource_name, resource_documentation: shown to users by clients.
        metadata: more members of the metadata document (e.g. `jwks_uri`).
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        resource_url: str,
        *,
        authorization_servers: Sequence[str],
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Sequence[str] = (),
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.verifier = verifier
        self.resource_url = canonical_resource_url(resource_url)
        self.authorization_servers = list(authorization_servers)
        self.scopes_supported = (
            None if scopes_supported is None else list(scopes_supported)
        )
        self.required_scopes = frozenset(required_scopes)
        self.metadata = ProtectedResourceMetadata(
            resource=self.resource_url,
            authorization_servers=self.authorization_servers,
            scopes_supported=self.scopes_supported,
            bearer_methods_supported=["header"],
            resource_name=resource_name,
            resource_documentation=resource_documentation,
        )
        if metadata:
            merged = {**msgspec.to_builtins(self.metadata), **metadata}
            self.metadata = msgspec.convert(merged, ProtectedResourceMetadata)
        self.metadata_url = protected_resource_metadata_url(self.resource_url)

    @property
    def metadata_paths(self) -> list[str]:
        """The paths the metadata document is served at."""
        suffixed = protected_resource_metadata_path(self.resource_url)
        return sorted({PROTECTED_RESOURCE_WELL_KNOWN, suffixed})

    # -- HttpAuth --

    async def authenticate(self, request: HttpRequest) -> Principal:
        """The principal of a request's bearer token.

        Raises:
            AuthChallenge: 400 for a token in the query string, 401 for no
                or a bad token or one for another audience, 403 for a
                token without `required_scopes`.
        """
        if any(
            name == "access_token"
            for name, _ in parse_qsl(request.query.decode("latin-1"))
        ):
            raise invalid_request(
                self.metadata_url,
                "access tokens are accepted only in the Authorization header",
            )
        token = _bearer_token(request.headers.get("authorization"))
        if token is None:
            raise unauthorized(self.metadata_url, self.required_scopes)
        principal = await self.verifier.verify(token)
        if principal is None or not names_resource(
            principal.claims.get("aud"), frozenset({self.resource_url})
        ):
            raise unauthorized(
                self.metadata_url,
                self.required_scopes,
                error=INVALID_TOKEN,
                description="the access token is invalid or expired",
            )
        self.authorize(principal, self.required_scopes)
        return principal

    def authorize(self, principal: object, scopes: Collection[str]) -> None:
        """Check that `principal` holds `scopes`.

        Raises:
            AuthChallenge: 403 `insufficient_scope`; its `scope` names what
                the caller holds and what it lacks, so that re-authorizing
                with it loses nothing (a step-up, not a swap).
        """
        held: frozenset[str] = frozenset()
        if isinstance(principal, Principal):
            held = principal.scopes
        if not held.issuperset(scopes):
            raise forbidden(self.metadata_url, held | frozenset(scopes))

    def mount(self, app: Any) -> Any:
        """`app` with the metadata document served in front of it."""
        document = msgspec.json.encode(self.metadata)
        return MetadataRoutes(document, self.metadata_paths, app)


def _bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` value, else None."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token or "," in token:
        return None
    return token

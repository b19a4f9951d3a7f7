"""`OAuthClientAuth`: the authorization-code flow with PKCE for MCP clients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .authorization import check_response, start_authorization
from .discovery import secure_endpoint
from .flow import LoadClient, OAuthFlow, SaveClient, select_scope
from .registration import obtain_client, usable
from .tokens import authorization_code_request

if TYPE_CHECKING:
    from collections.abc import Generator

    from .assertion import PrivateKeyJwt
    from .challenge import BearerChallenge
    from .discovery import Discovery
    from .documents import ClientInformation, ClientMetadata, TokenSet
    from .dpop import DPoPKey
    from .flow import Effect
    from .interaction import CallbackReceiver, RedirectHandler
    from .storage import TokenStore

__all__ = ["OAuthClientAuth"]


class OAuthClientAuth(OAuthFlow):
    """OAuth 2.1 for an MCP server, as an `httpx.Auth`::

        auth = OAuthClientAuth(url, client_metadata=..., redirect_handler=...,
                               callback=...)
        async with connect_http(url, name="me", version="1", auth=auth) as s:
            ...

    On a 401 it discovers the authorization server, identifies the client
    (`client`, pre-registered; else `client_metadata_url`, a Client ID
    Metadata Document, where the server supports them; else registers
    `client_metadata`), sends the user to authorize (`redirect_handler`,
    then `callback` for the answer), redeems the code and retries.

    Args:
        server_url: the MCP endpoint.
        client_metadata: the client's registration metadata; its first
            redirect URI is the one used.
        client_metadata_url: the HTTPS URL of the client's metadata document.
        client: pre-registered credentials (`issuer` set: only there).
        redirect_uri: overrides the metadata's first redirect URI.
        scope: always ask for this scope instead of choosing one.
        offline_access: also ask for `offline_access` (a refresh token) where
            the authorization server lists it.
        private_key: signs `private_key_jwt` client assertions.
        store: tokens and registrations (default: in memory).
        max_step_ups: 403 `insufficient_scope` answers re-authorized per request.
        dpop: a DPoP key: tokens are bound to it (RFC 9449) where the
            authorization server takes ES256 proofs.
    """

    def __init__(
        self,
        server_url: str,
        *,
        redirect_handler: RedirectHandler,
        callback: CallbackReceiver,
        client_metadata: ClientMetadata | None = None,
        client_metadata_url: str | None = None,
        client: ClientInformation | None = None,
        redirect_uri: str | None = None,
        scope: str | None = None,
        offline_access: bool = True,
        private_key: PrivateKeyJwt | None = None,
        store: TokenStore | None = None,
        max_step_ups: int = 2,
        dpop: DPoPKey | None = None,
    ) -> None:
        super().__init__(
            server_url,
            store=store,
            private_key=private_key,
            max_step_ups=max_step_ups,
            redirect_handler=redirect_handler,
            callback=callback,
            dpop=dpop,
        )
        if redirect_uri is None and client_metadata is not None:
            redirect_uri = client_metadata.redirect_uris[0]
        if redirect_uri is None:
            raise ValueError("give client_metadata or a redirect_uri")
        if not secure_endpoint(redirect_uri) or not urlsplit(redirect_uri).hostname:
            raise ValueError(
                f"the redirect URI must be HTTPS or loopback HTTP: {redirect_uri}"
            )
        self.redirect_uri = redirect_uri
        self.client_metadata = client_metadata
        self.client_metadata_url = client_metadata_url
        self.preregistered = client
        self.fixed_scope = scope
        self.offline_access = offline_access

    def identify(
        self, discovery: Discovery
    ) -> Generator[Effect, Any, ClientInformation | None]:
        """This server's identity: the current one, the pre-registered
        credentials, or the stored registration, whichever is usable there."""
        issuer = discovery.server.issuer
        for known in (self.client, self.preregistered):
            if usable(known, issuer):
                return known
        stored: ClientInformation | None = yield LoadClient(issuer)
        return stored if usable(stored, issuer) else None

    def acquire(
        self, challenge: BearerChallenge | None, discovery: Discovery, *, step_up: bool
    ) -> Generator[Effect, Any, TokenSet]:
        server = discovery.server
        client = yield from self.identify(discovery)
        if client is None:
            client, new = yield from obtain_client(
                server,
                preregistered=None,
                stored=None,
                metadata=self.client_metadata,
                metadata_url=self.client_metadata_url,
            )
            if new:
                yield SaveClient(server.issuer, client)
        self.client = client
        scope = self.fixed_scope or select_scope(
            challenge,
            discovery,
            previous=self.scope if step_up else None,
            offline_access=self.offline_access,
        )
        request = start_authorization(
            server,
            client_id=client.client_id,
            redirect_uri=self.redirect_uri,
            resource=discovery.resource,
            scope=scope,
            documented=discovery.documented,
        )
        answer = yield request
        code = check_response(request, answer, server)
        token_request = authorization_code_request(
            server,
            client,
            code=code,
            code_verifier=request.code_verifier,
            redirect_uri=request.redirect_uri,
            resource=discovery.resource,
            key=self.private_key,
        )
        response = yield from self.exchange(token_request)
        tokens = self.read_tokens(response, discovery)
        self.scope = scope
        return tokens

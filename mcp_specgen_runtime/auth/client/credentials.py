"""`ClientCredentialsAuth`: machine-to-machine access with the client
credentials grant (the MCP OAuth client-credentials extension)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .documents import ClientInformation
from .flow import OAuthFlow, select_scope
from .tokens import client_credentials_request

if TYPE_CHECKING:
    from collections.abc import Generator

    from .assertion import PrivateKeyJwt
    from .challenge import BearerChallenge
    from .discovery import Discovery
    from .documents import TokenSet
    from .dpop import DPoPKey
    from .flow import Effect
    from .storage import TokenStore

__all__ = ["ClientCredentialsAuth"]


class ClientCredentialsAuth(OAuthFlow):
    """Tokens for the client itself, no user: on a 401 it discovers the
    authorization server and asks its token endpoint with
    `grant_type=client_credentials`, authenticating with `client_secret`
    (`client_secret_basic`, or `_post` where only that is offered) or a
    signed assertion (`private_key`, `private_key_jwt`). With `dpop`, the
    tokens are bound to that key where the server takes DPoP proofs."""

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: PrivateKeyJwt | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
        dpop: DPoPKey | None = None,
    ) -> None:
        if (client_secret is None) == (private_key is None):
            raise ValueError("give exactly one of client_secret and private_key")
        super().__init__(server_url, store=store, private_key=private_key, dpop=dpop)
        method = "private_key_jwt" if private_key is not None else None
        self.credentials = ClientInformation(
            client_id=client_id,
            client_secret=client_secret,
            token_endpoint_auth_method=method,
        )
        self.fixed_scope = scope

    def acquire(
        self, challenge: BearerChallenge | None, discovery: Discovery, *, step_up: bool
    ) -> Generator[Effect, Any, TokenSet]:
        client = self.client = self.credentials
        scope = self.fixed_scope or select_scope(
            challenge, discovery, previous=self.scope if step_up else None
        )
        request = client_credentials_request(
            discovery.server,
            client,
            resource=discovery.resource,
            scope=scope,
            key=self.private_key,
        )
        response = yield from self.exchange(request)
        self.scope = scope
        return self.read_tokens(response, discovery)

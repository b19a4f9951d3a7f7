"""Grants by assertion (RFC 7523 §2.1): a workload's own JWT (workload
identity federation), or an Identity Assertion JWT Authorization Grant
obtained from the enterprise identity provider by token exchange (RFC 8693,
enterprise-managed authorization)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import msgspec

from .documents import ClientInformation
from .errors import TokenError
from .flow import OAuthFlow, select_scope
from .tokens import jwt_bearer_request

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

    from .assertion import PrivateKeyJwt
    from .challenge import BearerChallenge
    from .discovery import Discovery
    from .documents import TokenSet
    from .dpop import DPoPKey
    from .flow import Effect
    from .storage import TokenStore

__all__ = ["EnterpriseAuth", "JwtBearerAuth"]

_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class _Exchanged(msgspec.Struct):
    access_token: str
    issued_token_type: str


class JwtBearerAuth(OAuthFlow):
    """Tokens for a JWT the client already holds: on a 401 it discovers the
    authorization server and sends `assertion` (a string, or a function
    returning a fresh one) with `grant_type=jwt-bearer`. The client
    authenticates with `client_secret`, `private_key`, or only its id. A
    refused grant is an error, never retried with another grant."""

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        assertion: str | Callable[[], str] = "",
        client_secret: str | None = None,
        private_key: PrivateKeyJwt | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
        dpop: DPoPKey | None = None,
    ) -> None:
        super().__init__(server_url, store=store, private_key=private_key, dpop=dpop)
        method: str | None
        if private_key is not None:
            method = "private_key_jwt"
        else:
            method = None if client_secret else "none"
        self.credentials = ClientInformation(
            client_id=client_id,
            client_secret=client_secret,
            token_endpoint_auth_method=method,
        )
        self._assertion = assertion
        self.fixed_scope = scope

    def assertion(
        self, discovery: Discovery, scope: str | None
    ) -> Generator[Effect, Any, str]:
        """The JWT to present to the authorization server `discovery` found."""
        value = self._assertion
        return value() if callable(value) else value
        yield  # a generator, like the subclasses' that make requests

    def acquire(
        self, challenge: BearerChallenge | None, discovery: Discovery, *, step_up: bool
    ) -> Generator[Effect, Any, TokenSet]:
        client = self.client = self.credentials
        scope = self.fixed_scope or select_scope(
            challenge, discovery, previous=self.scope if step_up else None
        )
        grant = yield from self.assertion(discovery, scope)
        request = jwt_bearer_request(
            discovery.server,
            client,
            assertion=grant,
            resource=discovery.resource,
            scope=scope,
            key=self.private_key,
        )
        response = yield from self.exchange(request)
        self.scope = scope
        return self.read_tokens(response, discovery)


class EnterpriseAuth(JwtBearerAuth):
    """Enterprise-managed authorization: the user's ID token from the
    enterprise identity provider is exchanged there (RFC 8693) for an
    Identity Assertion JWT Authorization Grant naming the MCP server's
    authorization server and resource, which `JwtBearerAuth` then presents.

    `id_token` is a string or a function returning a current one; the
    identity provider's token endpoint is called with `idp_client_id` (and
    `idp_client_secret`, sent in the body, where given).
    """

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        id_token: str | Callable[[], str],
        idp_token_endpoint: str,
        idp_client_id: str,
        idp_client_secret: str | None = None,
        client_secret: str | None = None,
        private_key: PrivateKeyJwt | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
    ) -> None:
        super().__init__(
            server_url,
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            scope=scope,
            store=store,
        )
        self.id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self.idp_client_secret = idp_client_secret

    def assertion(
        self, discovery: Discovery, scope: str | None
    ) -> Generator[Effect, Any, str]:
        token = self.id_token() if callable(self.id_token) else self.id_token
        form = {
            "grant_type": _EXCHANGE,
            "requested_token_type": _ID_JAG,
            "subject_token": token,
            "subject_token_type": _ID_TOKEN,
            "audience": discovery.server.issuer,
            "resource": discovery.resource,
            "client_id": self.idp_client_id,
        }
        if self.idp_client_secret:
            form["client_secret"] = self.idp_client_secret
        if scope:
            form["scope"] = scope
        response = yield httpx.Request(
            "POST",
            self.idp_token_endpoint,
            data=form,
            headers={"Accept": "application/json"},
        )
        if response.status_code != 200:
            raise TokenError(
                "invalid_grant",
                f"the identity provider refused the exchange "
                f"(HTTP {response.status_code}): {response.text[:200]}",
            )
        try:
            exchanged = msgspec.json.decode(response.content, type=_Exchanged)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise TokenError("invalid_response", str(exc)) from None
        if exchanged.issued_token_type != _ID_JAG:
            raise TokenError(
                "invalid_response", f"the exchange issued {exchanged.issued_token_type}"
            )
        return exchanged.access_token

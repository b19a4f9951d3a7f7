"""`IntrospectionVerifier`: opaque access tokens, asked of the authorization
server (RFC 7662 token introspection).

Each token is posted to the introspection endpoint, the resource server
authenticating as an OAuth client (`client_secret_basic` or
`client_secret_post`). The token is accepted when the answer says `active`,
its `exp` (when given) has not passed, its `iss` is the expected issuer (when
one is configured), and its `aud` names this resource (when an `audience` is
configured: an answer with no `aud` is then refused, since nothing shows the
token was meant for this server). A 400 whose `error` is about the token
(`unsupported_token_type`, `invalid_token`: the endpoint will not read it)
refuses the token too; any other failure is the server's, not the token's.
"""

from __future__ import annotations

import time
import typing
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ..metadata import canonical_resource_url
from ..scopes import parse_scope
from .audience import names_resource
from .principal import Principal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import httpx

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """Verifies tokens with an RFC 7662 introspection endpoint.

    Args:
        endpoint: the introspection endpoint's URL.
        client_id, client_secret: this resource server's credentials there
            (None: no client authentication).
        auth_method: how they are sent: `client_secret_basic` (HTTP Basic)
            or `client_secret_post` (form fields).
        audience: this resource's URL; when set, the answer's `aud` must name it.
        issuer: when set, the answer's `iss` (if any) must be it.
        http: the httpx client to use (one is made, 10 s timeout, when None).
        clock: the wall clock (Unix seconds).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: Literal[
            "client_secret_basic", "client_secret_post"
        ] = "client_secret_basic",
        audience: str | Sequence[str] | None = None,
        issuer: str | None = None,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_method = auth_method
        audiences = [audience] if isinstance(audience, str) else list(audience or ())
        self.audiences = frozenset(map(canonical_resource_url, audiences))
        self.issuer = issuer
        self.clock = clock
        self._http = http

    async def verify(self, token: str) -> Principal | None:
        """The principal of an active token meant for this resource, else None.

        Raises:
            httpx.HTTPError: the endpoint could not be reached or refused this
                server's credentials (the token is not judged).
        """
        import httpx

        form = {"token": token, "token_type_hint": "access_token"}
        auth: httpx.Auth | None = None
        if self.client_id is not None:
            if self.auth_method == "client_secret_post":
                form["client_id"] = self.client_id
                if self.client_secret is not None:
                    form["client_secret"] = self.client_secret
            else:
                auth = httpx.BasicAuth(self.client_id, self.client_secret or "")
        client = self._http or httpx.AsyncClient(timeout=10.0)
        try:
            response = await client.post(
                self.endpoint,
                data=form,
                auth=auth or httpx.USE_CLIENT_DEFAULT,
                headers={"accept": "application/json"},
            )
        finally:
            if self._http is None:
                await client.aclose()
        if response.status_code == 400 and _refuses_the_token(response.content):
            return None
        response.raise_for_status()
        try:
            answer = msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            return None
        if not isinstance(answer, dict):
            return None
        return self._principal(typing.cast("dict[str, Any]", answer))

    def _principal(self, answer: dict[str, Any]) -> Principal | None:
        if answer.get("active") is not True:
            return None
        expires = answer.get("exp")
        if expires is not None and (
            not isinstance(expires, int | float) or expires <= self.clock()
        ):
            return None
        issuer = answer.get("iss")
        if self.issuer is not None and issuer not in (None, self.issuer):
            return None
        if self.audiences and not names_resource(answer.get("aud"), self.audiences):
            return None
        subject = answer.get("sub")
        client_id = answer.get("client_id")
        return Principal(
            subject=subject if isinstance(subject, str) else None,
            client_id=client_id if isinstance(client_id, str) else None,
            scopes=parse_scope(answer.get("scope")),
            claims=answer,
            expires_at=int(expires) if expires is not None else None,
            issuer=issuer if isinstance(issuer, str) else self.issuer,
        )


_TOKEN_ERRORS = frozenset({"unsupported_token_type", "invalid_token"})


def _refuses_the_token(body: bytes) -> bool:
    """Whether a 400 answer's OAuth `error` is about the token itself (an
    endpoint that will not read it: a JWT at oidc-provider, say), rather
    than about this server's request or credentials."""
    try:
        answer = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return False
    if not isinstance(answer, dict):
        return False
    error = typing.cast("dict[str, Any]", answer).get("error")
    return error in _TOKEN_ERRORS

"""`JwtVerifier`: JWT access tokens (RFC 9068) checked locally with the
issuer's published keys.

A token is accepted when, and only when:

- its header names an algorithm of the allow-list (never `none`, never an
  HMAC one: the verifier holds only public keys) and a key the issuer's JWK
  Set holds (`JwksCache`: fetched from `jwks_uri`, or from the issuer's
  metadata, refreshed on an unknown key id);
- the signature verifies with that key (joserfc);
- `iss` is the issuer; `aud` (a string or a list) names this resource
  (RFC 8707: a token minted for another resource is refused here, which is
  what stops a token passed along from being replayed);
- `exp` is present and not past, and `nbf`, when present, is not ahead,
  each within `leeway_s` of clock skew.

Scopes come from `scope` (space-separated) or, failing that, `scp` (a list or
a string, as some issuers send them).
"""

from __future__ import annotations

import base64
import binascii
import time
import typing
from typing import TYPE_CHECKING, Any

import msgspec
from joserfc import jwt as jose_jwt
from joserfc.errors import JoseError

from ..metadata import canonical_resource_url
from ..scopes import parse_scope
from .audience import names_resource
from .discovery import discover_issuer
from .jwks import JwksCache
from .principal import Principal

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import httpx

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier"]

DEFAULT_ALGORITHMS: tuple[str, ...] = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""The asymmetric signature algorithms accepted by default."""
_FORBIDDEN = frozenset({"none", "HS256", "HS384", "HS512"})


class JwtVerifier:
    """Verifies JWT access tokens against an issuer's JWK Set.

    Args:
        issuer: the `iss` tokens must carry (the authorization server's
            identifier, exactly).
        audience: this resource's URL (the `resource` clients ask tokens
            for); tokens whose `aud` does not name it are refused. Compared
            in canonical form (`canonical_resource_url`).
        jwks_uri: where the keys are; None to read it from the issuer's
            metadata (RFC 8414 or OpenID Connect discovery).
        algorithms: the signature algorithms accepted (asymmetric only).
        leeway_s: the clock skew allowed on `exp` and `nbf`.
        http: the httpx client fetching metadata and keys (one is made,
            with a 10 s timeout, when None).
        jwks_max_age_s, jwks_min_refresh_interval_s: see `JwksCache`.
        clock: the wall clock (Unix seconds).

    Raises:
        ValueError: an algorithm of the list is symmetric or `none`.
    """

    def __init__(
        self,
        issuer: str,
        audience: str | Sequence[str],
        *,
        jwks_uri: str | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway_s: float = 30.0,
        http: httpx.AsyncClient | None = None,
        jwks_max_age_s: float = 3600.0,
        jwks_min_refresh_interval_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        refused = _FORBIDDEN.intersection(algorithms)
        if refused:
            raise ValueError(f"algorithms not accepted for access tokens: {refused}")
        self.issuer = issuer
        audiences = [audience] if isinstance(audience, str) else list(audience)
        self.audiences = frozenset(map(canonical_resource_url, audiences))
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        self.leeway_s = leeway_s
        self.clock = clock
        self._http = http
        self.keys = JwksCache(
            self._fetch_jwks,
            max_age_s=jwks_max_age_s,
            min_refresh_interval_s=jwks_min_refresh_interval_s,
        )

    async def verify(self, token: str) -> Principal | None:
        """The principal of a valid token, None for any other.

        Raises:
            httpx.HTTPError, IssuerDiscoveryError: the keys could not be
                fetched (the token is not judged).
        """
        header = _header(token)
        if header is None:
            return None
        algorithm = header.get("alg")
        kid = header.get("kid")
        if algorithm not in self.algorithms or not isinstance(kid, str | None):
            return None
        key = await self.keys.key(kid)
        if key is None or key.alg not in (None, algorithm):
            return None
        try:
            claims = jose_jwt.decode(token, key, algorithms=[algorithm]).claims
        except (JoseError, ValueError):
            return None
        return self._principal(claims)

    def _principal(self, claims: dict[str, Any]) -> Principal | None:
        now = self.clock()
        if claims.get("iss") != self.issuer:
            return None
        if not names_resource(claims.get("aud"), self.audiences):
            return None
        expires = claims.get("exp")
        if not _is_number(expires) or expires <= now - self.leeway_s:
            return None
        not_before = claims.get("nbf")
        if not_before is not None and (
            not _is_number(not_before) or not_before > now + self.leeway_s
        ):
            return None
        scopes = parse_scope(
            claims["scope"] if "scope" in claims else claims.get("scp")
        )
        subject = claims.get("sub")
        client_id = claims.get("client_id", claims.get("azp"))
        return Principal(
            subject=subject if isinstance(subject, str) else None,
            client_id=client_id if isinstance(client_id, str) else None,
            scopes=scopes,
            claims=claims,
            expires_at=int(expires),
            issuer=self.issuer,
        )

    async def _fetch_jwks(self) -> object:
        import httpx

        client = self._http or httpx.AsyncClient(timeout=10.0)
        try:
            if self.jwks_uri is None:
                self.jwks_uri = (await discover_issuer(client, self.issuer)).jwks_uri
                if self.jwks_uri is None:
                    raise ValueError(f"the issuer {self.issuer!r} has no jwks_uri")
            response = await client.get(self.jwks_uri)
            response.raise_for_status()
            return msgspec.json.decode(response.content)
        finally:
            if self._http is None:
                await client.aclose()


def _is_number(value: object) -> typing.TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _header(token: str) -> dict[str, Any] | None:
    """The JOSE header of a compact JWS, or None when it is not one."""
    segments = token.split(".")
    if len(segments) != 3:
        return None
    encoded = segments[0]
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        header = msgspec.json.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        return None
    return typing.cast("dict[str, Any]", header) if isinstance(header, dict) else None

"""`private_key_jwt` client authentication (RFC 7523 §2.2), signed with joserfc."""

from __future__ import annotations

import secrets
import time

import msgspec
from joserfc import jwt
from joserfc.jwk import JWKRegistry

__all__ = ["ASSERTION_TYPE", "PrivateKeyJwt"]

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

_KEY_TYPES = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}
"""JWS algorithm prefix -> the key type joserfc reads a PEM key as."""


class PrivateKeyJwt(msgspec.Struct, kw_only=True, frozen=True):
    """A private key the client signs its assertions with.

    `key` is a PEM private key (EC or RSA) or a JWK as JSON text; `algorithm`
    the JWS algorithm (ES256, RS256...); `lifetime` the assertion's life in
    seconds.
    """

    key: str
    algorithm: str = "ES256"
    key_id: str | None = None
    lifetime: int = 300

    def sign(self, *, client_id: str, audience: str) -> str:
        """A fresh assertion: `iss` and `sub` the client, `aud` the
        authorization server's issuer, a unique `jti`."""
        key = JWKRegistry.import_key(self.key, _KEY_TYPES.get(self.algorithm[:2]))
        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + self.lifetime,
            "jti": secrets.token_urlsafe(16),
        }
        header: dict[str, str] = {"alg": self.algorithm}
        if self.key_id is not None:
            header["kid"] = self.key_id
        return jwt.encode(header, claims, key, algorithms=[self.algorithm])

"""DPoP (RFC 9449): proofs of possession that bind the access token to a key
the client holds, so a stolen token is useless without it."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey

__all__ = ["DPoPKey"]


def _htu(url: str) -> str:
    """The request URI without query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DPoPKey:
    """An ES256 key pair (made at random by default) and the nonces the
    servers handed out; `proof` signs a fresh proof for one request."""

    def __init__(self, key: ECKey | None = None) -> None:
        self._key = key if key is not None else ECKey.generate_key("P-256")
        self._public = self._key.as_dict(private=False)
        self.nonces: dict[str, str] = {}
        """Origin -> the last `DPoP-Nonce` it sent."""

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """The `DPoP` header value for `method url` (with `ath` when the
        request presents `access_token`, and the origin's nonce, if any)."""
        claims: dict[str, object] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method,
            "htu": _htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        nonce = self.nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self._public}
        return jwt.encode(header, claims, self._key, algorithms=["ES256"])

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep `nonce` for `url`'s origin; True when it is new."""
        if not nonce:
            return False
        origin = _origin(url)
        fresh = self.nonces.get(origin) != nonce
        self.nonces[origin] = nonce
        return fresh


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()

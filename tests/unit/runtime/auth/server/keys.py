"""Signing keys made for the tests, an issuer serving them, and tokens."""

from __future__ import annotations

import time
from typing import Any

import httpx
from joserfc import jwk, jwt

ISSUER = "https://as.example"
RESOURCE = "https://mcp.example/mcp"
JWKS_URI = "https://as.example/jwks"


class Issuer:
    """An authorization server's keys and metadata behind an httpx mock."""

    def __init__(self) -> None:
        self.rsa = jwk.RSAKey.generate_key(2048, {"kid": "rsa-1", "alg": "RS256"})
        self.keys: list[jwk.Key] = [self.rsa]
        self.requests: list[str] = []

    def rotate(self) -> jwk.Key:
        """Add a new EC key (the issuer starts signing with it)."""
        key = jwk.ECKey.generate_key("P-256", {"kid": f"ec-{len(self.keys)}"})
        self.keys.append(key)
        return key

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request.url.path)
        if request.url.path == "/jwks":
            keys = [key.as_dict(private=False) for key in self.keys]
            return httpx.Response(200, json={"keys": keys})
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json={"issuer": ISSUER, "jwks_uri": JWKS_URI})
        return httpx.Response(404)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def token(
        self,
        key: jwk.Key | None = None,
        *,
        alg: str = "RS256",
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        key = key or self.keys[0]
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "sub": "alice",
            "client_id": "client-1",
            "iat": now,
            "exp": now + 300,
            "scope": "mcp:read",
        }
        body.update(claims)
        body = {name: value for name, value in body.items() if value is not None}
        head = {"alg": alg, "kid": key.kid, **(header or {})}
        return jwt.encode(head, body, key, algorithms=[alg])

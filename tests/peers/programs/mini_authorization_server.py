"""A minimal OAuth 2.1 authorization server, for the interop tests only.

It exists because the SDK clients' OAuth flows need an authorization server
to talk to and none from a registry is set up here yet (an `oidc-provider`
one is planned); it is deliberately small and strict, and it is not part of
the library. What it does:

- RFC 8414 metadata at `/.well-known/oauth-authorization-server` (and the
  OpenID Connect name), with `authorization_response_iss_parameter_supported`;
- RFC 7591 registration at `/register` (public clients, `none`, or a secret);
- `/authorize`: a scripted login that approves at once as `interop-user`,
  refusing unless the client is registered, the redirect URI is one it
  registered (exact match), PKCE is S256 and a `resource` is named; the
  redirect carries `code`, `state` and `iss` (RFC 9207);
- `/token`: `authorization_code` (checking the verifier, the redirect URI and
  the same `resource`) and `refresh_token`, issuing RS256 JWT access tokens
  with `aud` = the resource, `scope`, `client_id`, a five-minute `exp`;
- `/jwks`: its public key.

`grants` records each token issued (grant type, scope, resource, client);
`on_grant` is told of each as it happens.

Run on its own (`python mini_authorization_server.py PORT`), it serves at
`http://127.0.0.1:PORT`, prints `READY <issuer>` once listening and a line
`GRANT <json>` for each token it issues.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

import msgspec
from joserfc import jwk, jwt

Scope = dict[str, Any]


class MiniAuthorizationServer:
    """An ASGI authorization server at `issuer`; see the module docstring."""

    def __init__(
        self,
        issuer: str,
        scopes: list[str],
        user: str = "interop-user",
        on_grant: Callable[[dict[str, Any]], None] | None = None,
    ):
        self.on_grant = on_grant
        self.issuer = issuer.rstrip("/")
        self.scopes = scopes
        self.user = user
        self.key = jwk.RSAKey.generate_key(2048, {"kid": "mini-1", "alg": "RS256"})
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh_tokens: dict[str, dict[str, Any]] = {}
        self.grants: list[dict[str, Any]] = []

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "jwks_uri": f"{self.issuer}/jwks",
            "scopes_supported": self.scopes,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_post",
                "client_secret_basic",
            ],
            "authorization_response_iss_parameter_supported": True,
        }

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        status, headers, payload = self.handle(scope, body)
        raw = [(k.encode(), v.encode()) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": payload})

    def handle(self, scope: Scope, body: bytes) -> tuple[int, dict[str, str], bytes]:
        path, method = scope["path"], scope["method"]
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if method == "GET" and path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            return _json(200, self.metadata())
        if method == "GET" and path == "/jwks":
            return _json(200, {"keys": [self.key.as_dict(private=False)]})
        if method == "POST" and path == "/register":
            return self.register(msgspec.json.decode(body))
        if method == "GET" and path == "/authorize":
            return self.authorize(query)
        if method == "POST" and path == "/token":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            return self.token(form, headers.get("authorization"))
        return _json(404, {"error": "not_found"})

    def register(self, request: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        uris = request.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            return _json(400, {"error": "invalid_redirect_uri"})
        client = {**request, "client_id": "client-" + secrets.token_hex(8)}
        method = request.get("token_endpoint_auth_method", "client_secret_basic")
        client["token_endpoint_auth_method"] = method
        if method != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
        client["client_id_issued_at"] = int(time.time())
        self.clients[client["client_id"]] = client
        return _json(201, client)

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        client = self.clients.get(query.get("client_id", ""))
        if client is None or query.get("redirect_uri") not in client["redirect_uris"]:
            return _json(400, {"error": "invalid_request", "why": "client/redirect"})
        if query.get("response_type") != "code":
            return _json(400, {"error": "unsupported_response_type"})
        if query.get("code_challenge_method") != "S256" or not query.get(
            "code_challenge"
        ):
            return _json(400, {"error": "invalid_request", "why": "PKCE S256"})
        if not query.get("resource"):
            return _json(400, {"error": "invalid_target", "why": "no resource"})
        code = secrets.token_urlsafe(24)
        scope = query.get("scope") or "mcp:read"
        self.codes[code] = {
            "client_id": client["client_id"],
            "redirect_uri": query["redirect_uri"],
            "challenge": query["code_challenge"],
            "resource": query["resource"],
            "scope": scope,
        }
        answer = {"code": code, "iss": self.issuer}
        if "state" in query:
            answer["state"] = query["state"]
        location = f"{query['redirect_uri']}?{urlencode(answer)}"
        return 302, {"location": location, "content-length": "0"}, b""

    def token(
        self, form: dict[str, str], authorization: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        client_id = form.get("client_id")
        secret = form.get("client_secret")
        if authorization and authorization.lower().startswith("basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            client_id, _, secret = decoded.partition(":")
        client = self.clients.get(client_id or "")
        if client is None:
            return _json(401, {"error": "invalid_client"})
        if client.get("client_secret") not in (None, secret):
            return _json(401, {"error": "invalid_client"})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            issued = self.codes.pop(form.get("code", ""), None)
            if issued is None or issued["client_id"] != client_id:
                return _json(400, {"error": "invalid_grant"})
            verifier = form.get("code_verifier", "")
            digest = hashlib.sha256(verifier.encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if challenge != issued["challenge"]:
                return _json(400, {"error": "invalid_grant", "why": "PKCE"})
            if form.get("redirect_uri") != issued["redirect_uri"]:
                return _json(400, {"error": "invalid_grant", "why": "redirect_uri"})
            if form.get("resource", issued["resource"]) != issued["resource"]:
                return _json(400, {"error": "invalid_target"})
            return self.issue(
                client_id or "", issued["scope"], issued["resource"], grant
            )
        if grant == "refresh_token":
            held = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if held is None or held["client_id"] != client_id:
                return _json(400, {"error": "invalid_grant"})
            return self.issue(client_id or "", held["scope"], held["resource"], grant)
        return _json(400, {"error": "unsupported_grant_type"})

    def issue(
        self, client_id: str, scope: str, resource: str, grant: str
    ) -> tuple[int, dict[str, str], bytes]:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": self.user,
            "aud": resource,
            "client_id": client_id,
            "scope": scope,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_hex(8),
        }
        header = {"alg": "RS256", "kid": "mini-1", "typ": "at+jwt"}
        access = jwt.encode(header, claims, self.key)
        refresh = secrets.token_urlsafe(24)
        self.refresh_tokens[refresh] = {
            "client_id": client_id,
            "scope": scope,
            "resource": resource,
        }
        record = {
            "grant": grant,
            "scope": scope,
            "resource": resource,
            "client_id": client_id,
        }
        self.grants.append(record)
        if self.on_grant is not None:
            self.on_grant(record)
        return _json(
            200,
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": 300,
                "refresh_token": refresh,
                "scope": scope,
            },
        )


def _json(status: int, value: object) -> tuple[int, dict[str, str], bytes]:
    body = msgspec.json.encode(value)
    headers = {"content-type": "application/json", "content-length": str(len(body))}
    return status, headers, body


def main() -> None:
    import asyncio

    import uvicorn

    port = int(sys.argv[1])
    issuer = f"http://127.0.0.1:{port}"

    def tell(grant: dict[str, Any]) -> None:
        print("GRANT " + json.dumps(grant), flush=True)

    server = MiniAuthorizationServer(issuer, ["mcp:read", "mcp:write"], on_grant=tell)
    config = uvicorn.Config(server, host="127.0.0.1", port=port, log_level="warning")
    runner = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(runner.serve())
        for _ in range(600):  # uvicorn offers no event: poll, for 30 s at most
            if runner.started:
                print(f"READY {issuer}", flush=True)
                break
            await asyncio.sleep(0.05)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()

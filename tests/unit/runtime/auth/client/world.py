"""A fake protected MCP server and authorization server, as one
`httpx.MockTransport` handler, with the user's part scripted."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import anyio.lowlevel
import httpx

from mcp_specgen_runtime.auth.client import AuthorizationResponse

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


class World:
    """The servers' state and what the client did to them.

    A POST to the MCP endpoint needs a token with `read`, and `write` too
    when its body mentions `tools/call`.
    """

    def __init__(self, issuer: str = "https://auth.example.com") -> None:
        self.issuer = issuer
        self.expires_in: int | None = 3600
        self.give_refresh = True
        self.always_forbid = False
        self.access: dict[str, set[str]] = {}
        self.refresh: dict[str, str] = {}
        self.codes: dict[str, dict[str, str]] = {}
        self.clients: dict[str, str] = {}
        """client id -> issuer that registered it."""
        self.log: list[str] = []
        self.authorizations: list[dict[str, str]] = []
        self.location: str | None = None

    # -- the user ---------------------------------------------------------

    async def redirect(self, url: str) -> None:
        await anyio.lowlevel.checkpoint()  # let concurrent requests interleave
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        self.authorizations.append(query)
        assert self.clients.get(query["client_id"]) == self.issuer, "foreign client"
        code = secrets.token_urlsafe(8)
        self.codes[code] = query
        back = {"code": code, "state": query["state"], "iss": self.issuer}
        self.location = f"{query['redirect_uri']}?{urlencode(back)}"

    async def callback(self, state: str) -> AuthorizationResponse:
        assert self.location is not None
        return AuthorizationResponse.from_url(self.location)

    # -- the servers ------------------------------------------------------

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url).split("?")[0]
        self.log.append(f"{request.method} {url}")
        if url == MCP:
            return self._mcp(request)
        if url == PRM:
            return httpx.Response(
                200, json={"resource": MCP, "authorization_servers": [self.issuer]}
            )
        base = self.issuer
        if url == f"{base}/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self._metadata())
        if url == f"{base}/register":
            body = json.loads(request.content)
            client_id = f"client-{len(self.clients)}"
            self.clients[client_id] = self.issuer
            return httpx.Response(
                201,
                json={
                    **body,
                    "client_id": client_id,
                    "token_endpoint_auth_method": "none",
                },
            )
        if url == f"{base}/token":
            return self._token(request)
        return httpx.Response(404)

    def _metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "scopes_supported": ["read", "write", "offline_access"],
        }

    def _challenge(self, status: int, scope: str, error: str) -> httpx.Response:
        header = f'Bearer resource_metadata="{PRM}", scope="{scope}"'
        if error:
            header += f', error="{error}"'
        return httpx.Response(status, headers={"WWW-Authenticate": header})

    def _mcp(self, request: httpx.Request) -> httpx.Response:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme != "Bearer" or token not in self.access:
            return self._challenge(401, "read", "")
        needed = {"read", "write"} if b"tools/call" in request.content else {"read"}
        if self.always_forbid or not needed <= self.access[token]:
            return self._challenge(403, "write", "insufficient_scope")
        return httpx.Response(200, json={"ok": token})

    def _mint(self, scope: str) -> dict[str, Any]:
        token = secrets.token_urlsafe(8)
        self.access[token] = set(scope.split())
        answer: dict[str, Any] = {"access_token": token, "token_type": "Bearer"}
        if self.expires_in is not None:
            answer["expires_in"] = self.expires_in
        if self.give_refresh:
            refresh = secrets.token_urlsafe(8)
            self.refresh[refresh] = scope
            answer["refresh_token"] = refresh
        return answer

    def _token(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        assert form["resource"] == MCP
        if self.clients.get(form["client_id"]) != self.issuer:
            return httpx.Response(401, json={"error": "invalid_client"})
        if form["grant_type"] == "refresh_token":
            scope = self.refresh.pop(form["refresh_token"], None)
            if scope is None:
                return httpx.Response(400, json={"error": "invalid_grant"})
            return httpx.Response(200, json=self._mint(scope))
        asked = self.codes.pop(form["code"])
        digest = hashlib.sha256(form["code_verifier"].encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        assert challenge == asked["code_challenge"]
        assert form["redirect_uri"] == asked["redirect_uri"]
        return httpx.Response(200, json=self._mint(asked.get("scope", "")))

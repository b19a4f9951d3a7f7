"""The official Python SDK client (`mcp==2.3.0`) signing in to a protected MCP
server with its own OAuth flow (`OAuthClientProvider`), then calling tools.

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_oauth_client.py \
        MODE URL

MODE is the SDK's `Client(mode=...)` (`legacy` or `2026-07-28`). The
"browser" is scripted: the redirect handler fetches the authorization URL,
follows the authorization server's redirects (its scripted login and consent,
keeping cookies) up to the one to our redirect URI, which it does not follow,
and hands the code, state and `iss` of that `Location` to the callback
handler. The client registers dynamically (RFC 7591), as a public client
with PKCE.

It lists the tools, calls `whoami`, then `write` (403 `insufficient_scope`
at first: the SDK steps up, re-authorizing with the scopes the challenge
names, and retries), then `whoami` again, and prints one JSON object:
{"tools_before", "whoami_before", "write", "whoami_after", "authorizations"}.
"""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.types import CallToolResult, TextContent
from pydantic import AnyUrl

REDIRECT_URI = "http://127.0.0.1:9/callback"
"""Never listened on: the scripted browser reads the redirect, not follows it."""


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class ScriptedBrowser:
    def __init__(self) -> None:
        self.pending: AuthorizationCodeResult | None = None
        self.visited: list[dict[str, Any]] = []

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient() as http:
            response = first = await http.get(url)
            # The authorization server's own hops (its login and consent
            # pages, with their cookies) until it redirects to us.
            while not response.headers["location"].startswith(REDIRECT_URI):
                hop = response.url.join(response.headers["location"])
                response = await http.get(hop)
        asked = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        self.visited.append(
            {
                "status": first.status_code,
                "scope": asked.get("scope"),
                "resource": asked.get("resource"),
                "code_challenge_method": asked.get("code_challenge_method"),
            }
        )
        location = response.headers["location"]
        answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        self.pending = AuthorizationCodeResult(
            code=answer["code"], state=answer.get("state"), iss=answer.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        assert self.pending is not None
        result, self.pending = self.pending, None
        return result


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def run(mode: str, url: str) -> dict[str, Any]:
    browser = ScriptedBrowser()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-interop",
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=20) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            read_timeout_seconds=20,
        ) as client,
    ):
        tools = await client.list_tools()
        before = await client.call_tool("whoami", {})
        write = await client.call_tool("write", {"text": "x"})
        after = await client.call_tool("whoami", {})
    return {
        "tools_before": sorted(tool.name for tool in tools.tools),
        "whoami_before": text(before),
        "write": text(write),
        "whoami_after": text(after),
        "authorizations": browser.visited,
    }


def main() -> None:
    mode, url = sys.argv[1], sys.argv[2]
    print(json.dumps(anyio.run(run, mode, url)), flush=True)


if __name__ == "__main__":
    main()

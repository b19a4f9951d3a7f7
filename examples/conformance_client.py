"""Our client as the official conformance suite runs it: `conformance_client.py URL`.

The suite starts a scenario's mock server (and authorization server), then
runs this program with `MCP_CONFORMANCE_SCENARIO` (the scenario's name),
`MCP_CONFORMANCE_CONTEXT` (JSON: credentials or tool calls some scenarios
hand over) and `MCP_CONFORMANCE_PROTOCOL_VERSION` in the environment. It uses
only the public API at default settings (`Client`, the library's version
negotiation, results in the newest revision's types):

- every scenario: connect, list the tools and call each once, with an
  argument of the right JSON type per property of its input schema, or with
  the calls the context lists; elicitation is accepted with empty content
  (so the schema's defaults are what the server gets);
- `auth/*`: through `OAuthClientAuth` (Dynamic Client Registration, a Client
  ID Metadata Document where the server supports them, or the pre-registered
  credentials of the context). The "browser" is headless: it fetches the
  authorization URL and reads the redirect's `Location`, as a user who
  consents at once. Tokens are bound to a DPoP key where the server takes
  DPoP proofs;
- `auth/client-credentials-*`: through `ClientCredentialsAuth` with the
  context's secret or private key.

It exits non-zero when anything fails, which several scenarios expect.
"""

from __future__ import annotations

import json
import os
import sys
import typing
from typing import Any

import anyio
import httpx

from mcp_specgen_runtime import Client, to_builtins
from mcp_specgen_runtime.auth.client import (
    AuthorizationResponse,
    ClientCredentialsAuth,
    ClientInformation,
    ClientMetadata,
    DPoPKey,
    EnterpriseAuth,
    JwtBearerAuth,
    OAuthClientAuth,
    PrivateKeyJwt,
)
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_types.latest import ElicitRequestParams, ElicitResult, Tool

SAMPLES: dict[str, Any] = {
    "string": "text",
    "number": 1.5,
    "integer": 2,
    "boolean": True,
    "array": [],
    "object": {},
}
REDIRECT_URI = "http://127.0.0.1:3030/callback"
METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The Client ID Metadata Document URL the suite expects (it is never fetched
by the mock authorization server)."""
ECHO_TOOL = "json_schema_echo"


async def accept(params: ElicitRequestParams) -> ElicitResult:
    """Accepts every elicitation, filling in nothing itself."""
    return ElicitResult(action="accept", content={})


class HeadlessBrowser:
    """The user's part: follows the authorization URL and keeps the redirect."""

    def __init__(self) -> None:
        self.location: str | None = None

    async def __call__(self, url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=False) as http:
            response = await http.get(url)
        self.location = response.headers.get("location")
        if self.location is None:
            raise RuntimeError(f"the authorization endpoint answered {response}")

    async def callback(self, state: str) -> AuthorizationResponse:
        assert self.location is not None
        return AuthorizationResponse.from_url(self.location)


def arguments(tool: Tool) -> dict[str, Any]:
    # `properties` of any revision's input schema, typed field or unknown key
    whole: dict[str, Any] = to_builtins(tool.input_schema)
    properties: dict[str, Any] = dict(whole.get("properties") or {})
    found: dict[str, Any] = {}
    for name, schema in properties.items():
        kind: Any = None
        if isinstance(schema, dict):
            kind = typing.cast("dict[str, Any]", schema).get("type")
        if isinstance(kind, str) and kind in SAMPLES:
            found[name] = SAMPLES[kind]
    return found


def authorization(
    url: str, scenario: str, context: dict[str, Any]
) -> httpx.Auth | None:
    """The `httpx.Auth` for `scenario`, from what its context hands over."""
    if not scenario.startswith("auth/"):
        return None
    if "idp_id_token" in context:
        return EnterpriseAuth(
            url,
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client_id=context["idp_client_id"],
        )
    if "valid_jwt" in context:
        return JwtBearerAuth(
            url, client_id=context["client_id"], assertion=context["valid_jwt"]
        )
    if scenario.startswith("auth/client-credentials-"):
        key = context.get("private_key_pem")
        algorithm = context.get("signing_algorithm", "ES256")
        return ClientCredentialsAuth(
            url,
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            private_key=PrivateKeyJwt(key=key, algorithm=algorithm) if key else None,
        )
    browser = HeadlessBrowser()
    preregistered = None
    if "client_id" in context:
        preregistered = ClientInformation(
            client_id=context["client_id"], client_secret=context.get("client_secret")
        )
    return OAuthClientAuth(
        url,
        redirect_handler=browser,
        callback=browser.callback,
        client=preregistered,
        client_metadata=ClientMetadata(
            client_name="mcp-codegen-conformance", redirect_uris=[REDIRECT_URI]
        ),
        client_metadata_url=METADATA_URL,
        dpop=DPoPKey(),
    )


async def exercise(client: Client, context: dict[str, Any]) -> None:
    tools = await client.list_all_tools()  # none when the server offers none
    calls = context.get("toolCalls")
    if isinstance(calls, list):
        for call in typing.cast("list[dict[str, Any]]", calls):
            await client.call_tool(call["name"], call["arguments"])
        return
    schemas = {tool.name: tool.input_schema for tool in tools}
    for tool in tools:
        if tool.name == ECHO_TOOL:
            focal = next((s for name, s in schemas.items() if name != ECHO_TOOL), None)
            echoed: Any = to_builtins(focal) if focal is not None else {}
            await client.call_tool(tool.name, {"schema": echoed})
        else:
            try:
                await client.call_tool(tool.name, arguments(tool))
            except RpcError as exc:  # the server's answer, not our failure
                print(f"{tool.name}: {exc}", file=sys.stderr)


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context: dict[str, Any] = json.loads(
        os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"
    )
    async with Client(
        url,
        name="mcp-codegen-conformance",
        version="1",
        elicitation=accept,
        auth=authorization(url, scenario, context),
    ) as client:
        await exercise(client, context)


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])

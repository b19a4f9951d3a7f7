"""An MCP server protected by OAuth 2.1: an `App` behind a `ResourceServer`.

    python examples/protected_server.py --port 8000 \\
        --issuer-url https://auth.example.com \\
        --resource-url http://127.0.0.1:8000/mcp

It accepts JWT access tokens the issuer signed for this server (`aud` = the
resource URL), checked against the issuer's JWKS (found through its metadata,
or `--jwks-uri`); or, with `--introspection-endpoint`, opaque tokens, asked
of the issuer (RFC 7662) with this server's `--client-id` and
`--client-secret`, and accepted when active and meant for this resource.
Every request needs `--required-scopes` (default `mcp:read`); the `write`
tool also needs `mcp:write`, and is listed only to callers holding it.
Clients find the issuer through the protected resource metadata at
`/.well-known/oauth-protected-resource/mcp`, which every 401
names. Each setting may come from the environment instead: `MCP_ISSUER_URL`,
`MCP_RESOURCE_URL`, `MCP_REQUIRED_SCOPES`, `MCP_JWKS_URI`,
`MCP_INTROSPECTION_ENDPOINT`, `MCP_CLIENT_ID`, `MCP_CLIENT_SECRET`.
"""

from __future__ import annotations

import argparse
import os

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.auth.server import (
    IntrospectionVerifier,
    JwtVerifier,
    Principal,
    ResourceServer,
    TokenVerifier,
)

app = App("protected-example", version="1.0.0")


@app.tool()
def whoami(ctx: Context) -> str:
    """The signed-in user and the scopes the token grants."""
    caller = ctx.principal
    if not isinstance(caller, Principal):
        return "anonymous"
    return f"{caller.subject} {' '.join(sorted(caller.scopes))}"


@app.tool(scopes=["mcp:write"])
def write(text: str) -> str:
    """Write something down (needs the mcp:write scope)."""
    return f"wrote {text}"


def resource_server(
    issuer: str,
    resource: str,
    required: list[str],
    jwks_uri: str | None,
    introspection: tuple[str, str | None, str | None] | None = None,
) -> ResourceServer:
    """The OAuth settings of the HTTP server; `introspection`: the endpoint,
    client id and secret to verify opaque tokens with instead of JWTs."""
    verifier: TokenVerifier = JwtVerifier(issuer, resource, jwks_uri=jwks_uri)
    if introspection is not None:
        endpoint, client_id, client_secret = introspection
        verifier = IntrospectionVerifier(
            endpoint,
            client_id=client_id,
            client_secret=client_secret,
            audience=resource,
            issuer=issuer,
        )
    return ResourceServer(
        verifier,
        resource,
        authorization_servers=[issuer],
        scopes_supported=sorted({*required, "mcp:read", "mcp:write"}),
        required_scopes=required,
        resource_name="mcp-codegen protected example",
    )


def main(argv: list[str] | None = None) -> None:
    env = os.environ.get
    parser = argparse.ArgumentParser(description="An MCP server protected by OAuth.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--issuer-url", default=env("MCP_ISSUER_URL"))
    parser.add_argument("--resource-url", default=env("MCP_RESOURCE_URL"))
    parser.add_argument(
        "--required-scopes", default=env("MCP_REQUIRED_SCOPES", "mcp:read")
    )
    parser.add_argument("--jwks-uri", default=env("MCP_JWKS_URI"))
    parser.add_argument(
        "--introspection-endpoint", default=env("MCP_INTROSPECTION_ENDPOINT")
    )
    parser.add_argument("--client-id", default=env("MCP_CLIENT_ID"))
    parser.add_argument("--client-secret", default=env("MCP_CLIENT_SECRET"))
    args = parser.parse_args(argv)
    if not args.issuer_url:
        parser.error("--issuer-url (or MCP_ISSUER_URL) is required")
    resource = args.resource_url or f"http://{args.host}:{args.port}/mcp"
    introspection = None
    if args.introspection_endpoint:
        introspection = (
            args.introspection_endpoint,
            args.client_id,
            args.client_secret,
        )
    auth = resource_server(
        args.issuer_url,
        resource,
        args.required_scopes.split(),
        args.jwks_uri,
        introspection,
    )
    app.run("http", host=args.host, port=args.port, auth=auth)


if __name__ == "__main__":
    main()

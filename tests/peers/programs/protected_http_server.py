"""An `App` protected by OAuth over Streamable HTTP, with the test-only
authorization server of `mini_authorization_server.py` beside it.

    python tests/peers/programs/protected_http_server.py

Both listen on free loopback ports, in one process; once both are up it
prints one line, `READY <mcp url> <issuer>`, and serves until terminated.
Each token the authorization server issues is told on stdout as a line
`GRANT <json>` (grant type, scope, resource, client id).

The app's tools: `whoami` (the caller's subject and scopes; any token with
`mcp:read`, which every request needs) and `write` (needs `mcp:write` too).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mcp_codegen_runtime.app import App, Context  # noqa: E402
from mcp_codegen_runtime.auth.server import (  # noqa: E402
    JwtVerifier,
    Principal,
    ResourceServer,
)
from mcp_codegen_runtime.transports.http.security import SecurityPolicy  # noqa: E402
from tests.peers.programs.mini_authorization_server import (  # noqa: E402
    MiniAuthorizationServer,
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def make_app() -> App:
    app = App("protected-interop", version="1.0.0")

    @app.tool()
    def whoami(ctx: Context) -> str:
        """The caller and its scopes."""
        caller = ctx.principal
        assert isinstance(caller, Principal)
        return f"{caller.subject} {' '.join(sorted(caller.scopes))}"

    @app.tool(scopes=["mcp:write"])
    def write(text: str) -> str:
        """Write (needs mcp:write)."""
        return f"wrote {text}"

    return app


def tell(grant: dict[str, Any]) -> None:
    print("GRANT " + json.dumps(grant), flush=True)


async def main() -> None:
    as_port, mcp_port = free_port(), free_port()
    issuer = f"http://127.0.0.1:{as_port}"
    resource = f"http://127.0.0.1:{mcp_port}/mcp"
    authorization = MiniAuthorizationServer(
        issuer, ["mcp:read", "mcp:write"], on_grant=tell
    )
    auth = ResourceServer(
        JwtVerifier(issuer, resource),
        resource,
        authorization_servers=[issuer],
        scopes_supported=["mcp:read", "mcp:write"],
        required_scopes=["mcp:read"],
    )
    mcp = make_app().asgi(
        auth=auth, policy=SecurityPolicy.for_bind("127.0.0.1", mcp_port)
    )
    servers = [
        uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        for app, port in ((authorization, as_port), (mcp, mcp_port))
    ]
    tasks = [asyncio.create_task(server.serve()) for server in servers]
    for _ in range(600):  # uvicorn offers no event: poll, for 30 s at most
        if all(server.started for server in servers):
            break
        await asyncio.sleep(0.05)
    else:
        raise SystemExit("the servers did not start")
    print(f"READY {resource} {issuer}", flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main())

"""A Streamable HTTP MCP server built with the official Python SDK (PyPI
`mcp==2.3.0`), both eras on one endpoint.

Run it with the peer venv's python (`benchmarks.peers.ensure_python_peers()`):

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_http_server.py \
        PORT [--json | --sse]

Serves `MCPServer.streamable_http_app()` at http://127.0.0.1:PORT/mcp (0: a
free port) with uvicorn, and prints one line, `ready PORT`, on stdout once it
listens. The SDK routes a request by its `MCP-Protocol-Version` header: the
handshake revisions (2024-11-05 .. 2025-11-25) go to its stateful legacy
transport (sessions, GET stream, DELETE), anything else to its 2026-07-28
single-exchange entry. `--json` answers with JSON bodies instead of SSE
streams. `--sse` serves the deprecated HTTP+SSE transport (2024-11-05)
instead, `MCPServer.sse_app()`: GET /sse opens the stream, whose `endpoint`
event names /messages/?session_id=...; a POST to /sse gets 405.

Tools: `echo(message)` answers the message unchanged; `slow_echo(message)`
reports progress once (when the request asked for it), waits 300 ms, then
answers the message.
"""

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("python-sdk-http-echo", version="1.0.0")


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@server.tool()
async def slow_echo(message: str, ctx: Context) -> str:
    """Report progress, wait a little, then return the message."""
    await ctx.report_progress(1, 2, "half way")
    await anyio.sleep(0.3)
    return message


class Announcing(uvicorn.Server):
    """A uvicorn server printing `ready PORT` once it listens."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.should_exit and sockets:
            print(f"ready {sockets[0].getsockname()[1]}", flush=True)


def main(argv: list[str]) -> None:
    ports = [a for a in argv if not a.startswith("--")]
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say
    # TCP, and without it every SSE answer waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", int(ports[0]) if ports else 0))
    if "--sse" in argv:
        app = server.sse_app()
    else:
        app = server.streamable_http_app(json_response="--json" in argv)
    Announcing(uvicorn.Config(app, log_level="warning", ws="none")).run([sock])


if __name__ == "__main__":
    main(sys.argv[1:])

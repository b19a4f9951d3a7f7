"""An HTTP+SSE (2024-11-05 transport) MCP server built with the official
Python SDK (PyPI `mcp==2.3.0`).

Run it with the peer venv's python (`benchmarks.peers.ensure_python_peers()`):

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_sse_server.py [PORT]

One tool, `echo(message: str) -> str`, answering the message unchanged. The
app is the SDK's own `MCPServer.sse_app()` (GET /sse, POST /messages/), with
its default DNS-rebinding protection for 127.0.0.1, served by uvicorn on
127.0.0.1. PORT 0 (the default) binds a free port; either way the bound port
is printed on stdout, one line, once the socket listens, so a test can connect
without racing for a port. It serves until SIGTERM or SIGINT.
"""

import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("python-sdk-sse-echo", version="1.0.0")


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say
    # TCP, and without it every SSE answer waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    app = server.sse_app(host="127.0.0.1")
    config = uvicorn.Config(
        app, log_level="warning", timeout_graceful_shutdown=1, ws="none"
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

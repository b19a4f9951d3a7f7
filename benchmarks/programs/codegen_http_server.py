"""A Streamable HTTP MCP echo server built on our runtime, for the HTTP
benchmark's `ours (ServerSession)` row (the scaffold server, without this
program, is its `ours` row).

The same dual-era echo session as `codegen_echo_server.py` (its `session()`),
served by `serve_http` (uvicorn) at http://127.0.0.1:PORT/mcp under the
loopback security policy. It prints one line, `ready PORT`, on stdout once the
port accepts connections, and serves until terminated (SIGTERM or SIGINT).

    .venv/bin/python benchmarks/programs/codegen_http_server.py PORT
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

# Run as a script, this folder is sys.path[0]; the repository root is added.
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))

from codegen_echo_server import session  # noqa: E402

from benchmarks._common import announce_when_listening  # noqa: E402
from mcp_specgen_runtime.transports.http.server import serve_http  # noqa: E402

HOST = "127.0.0.1"


def main(argv: list[str]) -> None:
    """Serve the echo session on the port given as the only argument."""
    if len(argv) != 1 or not argv[0].isdigit() or int(argv[0]) == 0:
        sys.exit(__doc__)
    port = int(argv[0])
    announce = threading.Thread(
        target=announce_when_listening, args=(port, f"ready {port}", HOST)
    )
    announce.daemon = True
    announce.start()
    serve_http(session(), host=HOST, port=port)


if __name__ == "__main__":
    main(sys.argv[1:])

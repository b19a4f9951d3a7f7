"""Serve `echo_session.session(*VERSIONS)` over HTTP on 127.0.0.1:PORT.

Run it with this repository's python::

    python tests/peers/programs/http_echo_server.py [OPTION] PORT [VERSION ...]

OPTION is ``--legacy-sse`` or ``--stateless``.

VERSIONS default to echo_session's (2025-06-18, 2025-11-25, 2026-07-28).

- By default: `serve_http` with its defaults, the Streamable HTTP endpoint
  `/mcp` under the loopback security policy (Host and Origin must be local).
- With ``--stateless``: `serve_http(..., stateless=True)`, legacy revisions
  served without sessions.
- With ``--legacy-sse``: `serve_legacy_sse`, the deprecated HTTP+SSE
  transport (GET `/sse`, POST `/messages`), with the same `McpHttpApp` behind
  it for `/mcp`.

It prints ``READY http://127.0.0.1:PORT`` on stdout once the port accepts
connections, and serves until terminated (SIGTERM or SIGINT).
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mcp_specgen_runtime.transports.http.security import SecurityPolicy  # noqa: E402
from mcp_specgen_runtime.transports.http.server import (  # noqa: E402
    McpHttpApp,
    serve_http,
)
from tests.unit.runtime.session_programs.echo_session import session  # noqa: E402

HOST = "127.0.0.1"
READY_TIMEOUT_S = 30.0


def announce_when_listening(port: int) -> None:
    """Print the ready line once `port` accepts a connection."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=1.0):
                print(f"READY http://{HOST}:{port}", flush=True)
                return
        except OSError:
            time.sleep(0.02)


def main(argv: list[str]) -> None:
    legacy_sse = argv[:1] == ["--legacy-sse"]
    stateless = argv[:1] == ["--stateless"]
    args = argv[1:] if legacy_sse or stateless else argv
    if not args or not args[0].isdigit() or int(args[0]) == 0:
        sys.exit(__doc__)
    port = int(args[0])
    served = session(*args[1:])
    threading.Thread(target=announce_when_listening, args=(port,), daemon=True).start()
    if not legacy_sse:
        serve_http(served, host=HOST, port=port, stateless=stateless)
        return
    from mcp_specgen_runtime.transports.http.legacy_sse import serve_legacy_sse

    policy = SecurityPolicy.for_bind(HOST, port)
    fallback = McpHttpApp(served, policy=policy)
    serve_legacy_sse(served, host=HOST, port=port, fallback=fallback)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The one line `serve_http` logs once it listens: where, and what it serves.

    MCP server "demo" 1.0 listening on http://127.0.0.1:8000/mcp: 2026-07-28
    (stateless), 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 (sessions),
    HTTP+SSE at /sse; auth off, CORS off

It goes to the logger `mcp_specgen_runtime.http` at INFO. When nothing in
the process configured logging for it (no handler on it or its parents),
`serve_http` gives it one printing to stderr, as uvicorn does for its own
loggers; configure logging first to send it elsewhere, or raise that
logger's level to WARNING to silence it.
"""

from __future__ import annotations

import logging
import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .stopping import EndedOnStop

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mcp_specgen_runtime.protocol.session import ServerSession

__all__ = ["LOGGER", "Served", "listening_urls", "serve_announced", "show_start_line"]

LOGGER = logging.getLogger("mcp_specgen_runtime.http")


@dataclass(frozen=True, slots=True)
class Served:
    """What an HTTP server serves, for its start line."""

    session: ServerSession
    path: str
    legacy_sse: bool
    stateless: bool
    auth: bool
    cors: bool

    def line(self, urls: Sequence[str]) -> str:
        """The start line, given the URLs of the MCP endpoint."""
        session = self.session
        served: list[str] = []
        if session.modern_versions:
            served.append(f"{', '.join(reversed(session.modern_versions))} (stateless)")
        if session.legacy_versions:
            how = "stateless" if self.stateless else "sessions"
            served.append(f"{', '.join(reversed(session.legacy_versions))} ({how})")
        if self.legacy_sse and session.legacy_versions:
            served.append("HTTP+SSE at /sse")
        where = ", ".join(urls)
        return (
            f'MCP server "{session.name}" {session.version} listening on {where}: '
            f"{', '.join(served)}; auth {_on(self.auth)}, CORS {_on(self.cors)}"
        )


def _on(flag: bool) -> str:
    return "on" if flag else "off"


def listening_urls(sockets: Sequence[socket.socket], path: str) -> list[str]:
    """The MCP endpoint's URL on each listening socket (IPv6 in brackets;
    an unspecified address as bound: 0.0.0.0 or [::] means every interface)."""
    urls: list[str] = []
    for sock in sockets:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address: Any = sock.getsockname()
        host, port = str(address[0]), int(address[1])
        if sock.family == socket.AF_INET6:
            host = f"[{host}]"
        url = f"http://{host}:{port}{path}"
        if url not in urls:
            urls.append(url)
    return urls


def show_start_line() -> None:
    """Print the start line to stderr unless logging was configured for it."""
    if LOGGER.hasHandlers():
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    LOGGER.addHandler(handler)
    if LOGGER.level == logging.NOTSET:
        LOGGER.setLevel(logging.INFO)


def serve_announced(
    config: Any, on_listening: Callable[[Sequence[socket.socket]], None]
) -> None:
    """Run uvicorn with `config` (a `uvicorn.Config`) as `uvicorn.run` does
    for one process, calling `on_listening` with the listening sockets once
    they are bound; streams still open when it stops are ended
    (`EndedOnStop`). Exits with status 3 (uvicorn's) when it cannot start."""
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                bound = [s for server in self.servers for s in server.sockets]
                on_listening(bound)

    server = AnnouncingServer(config=config)
    config.app = EndedOnStop(config.app, lambda: server.should_exit)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    if not server.started:
        sys.exit(3)

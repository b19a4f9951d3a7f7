"""The protected resource metadata endpoint (RFC 9728), in front of an app.

`MetadataRoutes` answers `GET` (and `HEAD`, and CORS preflight `OPTIONS`: a
browser-based client reads the document cross-origin) at the well-known
paths it is given, with the document as JSON; every other request, and the
lifespan protocol, go to the app behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...transports.http.asgi import respond

if TYPE_CHECKING:
    from collections.abc import Collection

    from ...transports.http.asgi import Receive, Scope, Send

__all__ = ["MetadataRoutes"]

_CORS = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET, OPTIONS",
    "access-control-allow-headers": "mcp-protocol-version",
}


class MetadataRoutes:
    """An ASGI app serving one JSON document at `paths`, `app` elsewhere."""

    def __init__(self, document: bytes, paths: Collection[str], app: Any) -> None:
        self.document = document
        self.paths = frozenset(paths)
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") not in self.paths:
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method == "OPTIONS":
            await respond(send, 204, b"", None, _CORS)
        elif method in ("GET", "HEAD"):
            body = self.document if method == "GET" else b""
            headers = {**_CORS, "cache-control": "public, max-age=3600"}
            await respond(send, 200, body, "application/json", headers)
        else:
            await respond(send, 405, b"", None, {"allow": "GET, HEAD, OPTIONS"})

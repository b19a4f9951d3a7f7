"""Answers still streaming when uvicorn stops: ended, not logged as errors.

Once stopping, uvicorn waits up to its graceful timeout for the open
responses, then cancels them. A standalone GET stream or an HTTP+SSE stream
never ends by itself, so every stop (Ctrl+C, each reload of `mcp-codegen
dev` while an Inspector is attached) cancelled one, and uvicorn logged the
cancellation as "Exception in ASGI application" with a 40-line traceback,
then cut the connection mid-chunk. `EndedOnStop` ends such a response as a
stream ends (its last, empty chunk), so the client sees a clean end and
reconnects, and nothing is logged.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from .asgi import Message, Receive, Scope, Send

__all__ = ["EndedOnStop"]


class EndedOnStop:
    """ASGI middleware: a response cancelled mid-stream while `stopping()`
    is ended with its last chunk instead of failing (see the module
    docstring); any other cancellation goes on as it came."""

    def __init__(self, app: Any, stopping: Callable[[], bool]) -> None:
        self.app = app
        self.stopping = stopping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        streaming = False

        async def watched(message: Message) -> None:
            nonlocal streaming
            if message["type"] == "http.response.start":
                streaming = True
            elif message["type"] == "http.response.body":
                streaming = bool(message.get("more_body", False))
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except asyncio.CancelledError:
            if not (streaming and self.stopping()):
                raise
            try:
                await send({"type": "http.response.body", "body": b""})
            except OSError:  # the client left meanwhile
                pass

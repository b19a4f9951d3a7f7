"""The few ASGI helpers both HTTP apps are written with.

`McpHttpApp` (Streamable HTTP) and `LegacySseApp` (HTTP+SSE) speak plain ASGI
3: a whole response (`respond`) or the head of an SSE stream (`start_sse`),
whose events they then send as body chunks, and the lifespan protocol
(`serve_lifespan`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

__all__ = [
    "Message",
    "Receive",
    "Scope",
    "Send",
    "respond",
    "serve_lifespan",
    "start_sse",
]

Scope: TypeAlias = "dict[str, Any]"
Message: TypeAlias = "dict[str, Any]"
Receive: TypeAlias = "Callable[[], Awaitable[Message]]"
Send: TypeAlias = "Callable[[Message], Awaitable[None]]"


def _encoded(extra: Mapping[str, str] | None) -> list[tuple[bytes, bytes]]:
    return [
        (name.encode("latin-1"), value.encode("latin-1"))
        for name, value in (extra or {}).items()
    ]


async def respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: str | None,
    extra: Mapping[str, str] | None = None,
) -> None:
    """Send a whole response: status, headers (`extra` added) and body."""
    headers = [(b"content-length", str(len(body)).encode())]
    if content_type is not None:
        headers.append((b"content-type", content_type.encode()))
    headers += _encoded(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def start_sse(
    send: Send,
    extra: Mapping[str, str] | None = None,
    *,
    cache_control: bytes = b"no-cache",
) -> None:
    """Start a 200 `text/event-stream` response (no proxy buffering)."""
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", cache_control),
        (b"x-accel-buffering", b"no"),
        *_encoded(extra),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def serve_lifespan(
    receive: Receive, send: Send, on_shutdown: Callable[[], Awaitable[None]]
) -> None:
    """Answer the ASGI lifespan protocol: nothing to start; `on_shutdown()`
    before confirming shutdown."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await on_shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return

"""The few ASGI helpers both HTTP apps are written with.

`McpHttpApp` (Streamable HTTP) and `LegacySseApp` (HTTP+SSE) speak plain ASGI
3: a request's body (`read_body`, within the policy's size and time; its
messages are read by `messages.py`), a whole response (`respond`) or the head
of an SSE stream (`start_sse`), whose events they then send as body chunks,
and the lifespan protocol (`serve_lifespan`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from .headers import HttpError
from .security import check_body_size

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from .security import SecurityPolicy

__all__ = [
    "Message",
    "Receive",
    "Scope",
    "Send",
    "closing",
    "read_body",
    "respond",
    "serve_lifespan",
    "start_sse",
]

Scope: TypeAlias = "dict[str, Any]"
Message: TypeAlias = "dict[str, Any]"
Receive: TypeAlias = "Callable[[], Awaitable[Message]]"
Send: TypeAlias = "Callable[[Message], Awaitable[None]]"


CLOSE: Mapping[str, str] = MappingProxyType({"connection": "close"})
REQUEST_TIMEOUT = 408


def closing(refusal: HttpError) -> Mapping[str, str] | None:
    """The extra headers of a `read_body` refusal: a 408 ends the connection
    (the rest of the body may never come); the others leave it to the server
    (uvicorn reads past a body refused as too large, so its client, still
    sending, gets the answer instead of a reset)."""
    return CLOSE if refusal.status == REQUEST_TIMEOUT else None


async def read_body(receive: Receive, policy: SecurityPolicy) -> bytes | HttpError:
    """A request's whole body, or why it was refused: 413 past
    `policy.max_body_size`, 408 when it takes longer than
    `policy.body_timeout_s` (slow or stalled), 400 when the client went away.
    Answer a refusal with the headers `closing` gives."""
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(policy.body_timeout_s):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return HttpError(400, "the client went away")
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            too_big = check_body_size(size, policy)
            if too_big is not None:
                return too_big
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
    return HttpError(
        REQUEST_TIMEOUT,
        f"Request Timeout: the body did not arrive within "
        f"{policy.body_timeout_s} seconds",
    )


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
    receive: Receive,
    send: Send,
    on_shutdown: Callable[[], Awaitable[None]],
    on_startup: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Answer the ASGI lifespan protocol: `on_startup()` before confirming
    start-up (an exception fails it, with its message, and ends the
    protocol), `on_shutdown()` before confirming shutdown."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            if on_startup is not None:
                try:
                    await on_startup()
                except Exception as exc:
                    failed = {"type": "lifespan.startup.failed", "message": str(exc)}
                    await send(failed)
                    return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await on_shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return

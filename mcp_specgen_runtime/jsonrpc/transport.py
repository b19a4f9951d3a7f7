"""The contract between the JSON-RPC engine and whatever carries its messages.

A transport moves whole messages: one `send` writes one complete JSON text and
one `receive` returns one. Framing (newlines for stdio, HTTP bodies, SSE events)
is the transport's business, never the engine's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Awaitable

__all__ = ["Pushing", "Transport"]


class Transport(Protocol):
    """A bidirectional channel of complete JSON-RPC messages.

    End of stream is signalled the anyio way: `receive` raises
    `anyio.EndOfStream` once the peer has closed its side. After the local side
    is closed, `receive` and `send` raise `anyio.ClosedResourceError`; `send`
    raises `anyio.BrokenResourceError` once the peer can no longer receive.
    Transports may raise `TransportError` or `OSError` for other failures.
    `send` may be called by several tasks at once (the engine has many replies
    in flight): each message must go out whole, never interleaved.

    A transport that authenticates its peer may also offer
    `principal_of(request_id) -> object`: who sent that request (it becomes
    `RequestContext.principal`). An HTTP transport may offer
    `http_request_of(request_id) -> object`: the HTTP request that carried it
    (it becomes `RequestContext.http_request`).

    A transport that can hand over messages as it reads them, from its own
    callback rather than through `receive` (the stdio transport on asyncio),
    offers `push(on_message, on_too_large) -> Pushing | None`: the engine
    then serves each message without a task woken per message. None means
    it cannot (use `receive`).
    """

    async def send(self, message: bytes) -> None:
        """Send one complete message."""
        ...

    async def receive(self) -> bytes:
        """Wait for the next complete message.

        Raises:
            anyio.EndOfStream: the peer closed its side; no message will follow.
        """
        ...

    async def aclose(self) -> None:
        """Close the local side; the peer sees end of stream. Idempotent."""
        ...


class Pushing(Protocol):
    """Messages pushed by a transport as they are read (see `Transport`)."""

    @property
    def ended(self) -> Awaitable[Exception]:
        """Resolves to what ended reading: `anyio.EndOfStream`, a closed or
        broken resource, or a `TransportError`."""
        ...

    def pause(self) -> None:
        """Push nothing more until `resume` (the engine has too many answers
        waiting to be written)."""
        ...

    def resume(self) -> None:
        """Push again after `pause`."""
        ...

    def stop(self) -> None:
        """Push nothing more, for good."""
        ...

"""An in-memory transport pair for tests and in-process peers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from anyio.streams.memory import (
        MemoryObjectReceiveStream,
        MemoryObjectSendStream,
    )

__all__ = ["MemoryTransport", "memory_pair"]


class MemoryTransport:
    """One end of a `memory_pair`: sends to the other end, receives from it."""

    def __init__(
        self,
        outgoing: MemoryObjectSendStream[bytes],
        incoming: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._outgoing = outgoing
        self._incoming = incoming

    async def send(self, message: bytes) -> None:
        """Send one message to the other end.

        Raises:
            anyio.ClosedResourceError: this end is closed.
            anyio.BrokenResourceError: the other end is closed.
        """
        await self._outgoing.send(message)

    async def receive(self) -> bytes:
        """Wait for the next message from the other end.

        Raises:
            anyio.EndOfStream: the other end is closed and everything it sent
                has been received.
            anyio.ClosedResourceError: this end is closed.
        """
        return await self._incoming.receive()

    async def aclose(self) -> None:
        """Close this end; the other end then sees end of stream."""
        self._outgoing.close()
        self._incoming.close()


def memory_pair(max_buffer_size: float = 0) -> tuple[MemoryTransport, MemoryTransport]:
    """Two transports connected back to back by anyio memory object streams.

    `max_buffer_size` messages may wait in each direction before `send`
    blocks; the default 0 hands each message over directly, which keeps tests
    honest about back-pressure.
    """
    a_to_b_send, a_to_b_receive = anyio.create_memory_object_stream[bytes](
        max_buffer_size
    )
    b_to_a_send, b_to_a_receive = anyio.create_memory_object_stream[bytes](
        max_buffer_size
    )
    return (
        MemoryTransport(a_to_b_send, b_to_a_receive),
        MemoryTransport(b_to_a_send, a_to_b_receive),
    )

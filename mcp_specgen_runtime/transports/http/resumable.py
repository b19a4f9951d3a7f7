"""Resumable SSE streams of legacy sessions: stored first, then sent.

A `StoredStream` takes the messages a `SessionMux` routes to one SSE stream
(a POST's answer or the session's GET stream), appends each to the
`EventStore` (which gives it its event id) and hands it to the connection
attached to the stream, if any. The connection and the stream are apart:

- when the client goes away, its connection is detached and the stream goes
  on being stored (a POST's until its responses, the GET stream's until the
  session ends or a new GET replaces it);
- a GET with `Last-Event-ID` attaches a new connection (`attach`), gets the
  stored events that followed that id (`EventStore.replay`), then the live
  ones, each once: the connection is attached before the replay is read,
  and live events the replay already gave are skipped. Once the replay is
  granted, the new connection takes the stream over (`take_over`): one that
  was still attached is ended, as its client has evidently lost it.

One task runs `pump`, so events are stored and sent in the order they were
routed, however slow the store.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import anyio

from .mux import RELEASE
from .sse import encode_event

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from mcp_specgen_runtime.stores.events import EventStore

    from .mux import ResponseStream

__all__ = ["Listener", "StoredStream", "sse_event"]


def sse_event(
    event_id: str, message: bytes | None, retry_ms: int | None = None
) -> bytes:
    """One SSE event with its id: a message, or a priming event (no data)."""
    return encode_event(
        message or b"",
        event=None if message is None else "message",
        id=event_id,
        retry_ms=retry_ms,
    )


class Listener:
    """One HTTP connection attached to a `StoredStream`: the events for it,
    in order, as (event id, message); closed when the stream ends or another
    connection takes it over."""

    def __init__(self) -> None:
        sender, receiver = anyio.create_memory_object_stream[tuple[str, bytes]](
            math.inf
        )
        self._sender: MemoryObjectSendStream[tuple[str, bytes]] = sender
        self.events: MemoryObjectReceiveStream[tuple[str, bytes]] = receiver

    def put(self, event_id: str, message: bytes) -> None:
        try:
            self._sender.send_nowait((event_id, message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # its connection is gone: the event stays in the store

    def close(self) -> None:
        """No more events (those queued can still be read)."""
        self._sender.close()

    def end(self) -> None:
        """The connection is over: close both ends."""
        self._sender.close()
        self.events.close()

    async def next(self) -> tuple[str, bytes] | None:
        """The next event, or None once the listener is closed."""
        try:
            return await self.events.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None


class StoredStream:
    """One resumable SSE stream (see the module docstring).

    Args:
        source: the messages the session routes to this stream.
        store: where they are kept.
        stream_id: the store's id of the stream.
        owner: the session it belongs to (only that session resumes it).
    """

    def __init__(
        self, source: ResponseStream, store: EventStore, stream_id: str, owner: str
    ) -> None:
        self.source = source
        self.store = store
        self.id = stream_id
        self.owner = owner
        self.listeners: list[Listener] = []
        self.done = anyio.Event()
        """Set once every message of the stream is stored."""

    def attach(self) -> Listener:
        """A new connection for the stream's events, beside any other until
        `take_over`. A stream already done gives a listener closed at once."""
        listener = Listener()
        if self.done.is_set():
            listener.close()
        else:
            self.listeners.append(listener)
        return listener

    def take_over(self, listener: Listener) -> None:
        """Make `listener` the stream's only connection: the others end."""
        for other in self.listeners:
            if other is not listener:
                other.close()
        self.listeners = [listener] if listener in self.listeners else []

    def detach(self, listener: Listener) -> None:
        """`listener`'s connection is gone (events go on being stored)."""
        listener.end()
        if listener in self.listeners:
            self.listeners.remove(listener)

    def release(self) -> None:
        """End every connection; the stream goes on being stored."""
        for listener in self.listeners:
            listener.close()
        self.listeners = []

    @property
    def attached(self) -> bool:
        """Whether a connection is listening."""
        return bool(self.listeners)

    async def prime(self) -> str:
        """Store a priming event (an id, no data); its id."""
        return await self.store.append(self.id, None)

    async def pump(self, first: bytes | None = None) -> None:
        """Store and forward the source's messages until it is complete (a
        POST's stream: every request answered) or closed."""
        try:
            message = first if first is not None else await self._next()
            while message is not None:
                if message == RELEASE:
                    self.release()
                    message = await self._next()
                    continue
                event_id = await self.store.append(self.id, message)
                for listener in self.listeners:
                    listener.put(event_id, message)
                if self.source.completed_by(message):
                    return
                message = await self._next()
        finally:
            self.done.set()
            for listener in self.listeners:
                listener.close()
            self.listeners = []

    async def _next(self) -> bytes | None:
        try:
            return await self.source.messages.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None

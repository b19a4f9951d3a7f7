"""Events of resumable SSE streams: the `EventStore` interface, `MemoryEventStore`.

A server that makes its SSE streams resumable stores every event it sends
before sending it, so a client that lost the connection can ask for what
followed the last event it saw (`Last-Event-ID`) and get it again.

- A stream is created for an owner (the legacy HTTP session it belongs to)
  and gets a random id (`secrets.token_urlsafe(16)`: 128 bits). Only that
  owner can replay it: `replay` refuses another owner's stream exactly as an
  unknown one, so a client cannot tell whether another session's stream
  exists, let alone read it. (The session itself is bound to its principal
  by the server.)
- An event id is `<stream>.<position>`: the id alone names its stream, as
  the specification advises, and the position orders the events of that
  stream. Positions are the store's own (an integer counter here; a Redis
  Streams entry id such as `1700000000000-0` for a store built on XADD and
  XRANGE, with MAXLEN for the bounds).
- A message of None is a priming event (an id for the client to resume
  from, no data): stored, never replayed.

`MemoryEventStore` bounds what it keeps and says what it dropped:

- `max_events_per_stream`: a stream over it loses its oldest events;
- `max_bytes`: the messages of all streams together; over it, the oldest
  events of the store (whatever their stream) go first;
- `max_streams`: over it, the stream appended to least recently goes whole
  (a replay from it is then an unknown stream).

A replay whose cursor is older than what the stream still holds raises
`EventsEvictedError` (the client missed events no one can give it again):
never a silent gap. Streams go with their owner (`drop_owner`, when the
session ends).
"""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Final, NamedTuple, Protocol

from ..errors import McpError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_EVENTS_PER_STREAM",
    "DEFAULT_MAX_STREAMS",
    "EventStore",
    "EventsEvictedError",
    "MemoryEventStore",
    "Replay",
    "StoredEvent",
    "UnknownEventError",
    "event_id",
    "new_stream_id",
    "parse_event_id",
]

DEFAULT_MAX_EVENTS_PER_STREAM: Final = 1_000
DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
DEFAULT_MAX_STREAMS: Final = 10_000

_EVENT_ID = re.compile(r"([A-Za-z0-9_-]{16,64})\.([0-9A-Za-z-]{1,40})\Z")


def new_stream_id() -> str:
    """A fresh, unguessable stream id (128 random bits)."""
    return secrets.token_urlsafe(16)


def event_id(stream: str, position: str) -> str:
    """The event id of `position` in `stream`."""
    return f"{stream}.{position}"


def parse_event_id(value: str) -> tuple[str, str] | None:
    """(stream, position) of an event id, or None when it is no event id of
    ours (a client may send anything as `Last-Event-ID`)."""
    found = _EVENT_ID.match(value)
    return None if found is None else (found[1], found[2])


class UnknownEventError(McpError):
    """The event id is malformed, of an unknown stream or another owner's."""


class EventsEvictedError(McpError):
    """Events that followed the cursor are no longer kept: replay cannot be
    complete."""


class StoredEvent(NamedTuple):
    """One stored event: its id and message (None for a priming event)."""

    id: str
    message: bytes | None


@dataclass(frozen=True, slots=True)
class Replay:
    """What `replay` found: the stream and the events after the cursor, in
    order (priming events left out)."""

    stream: str
    events: list[StoredEvent]


class EventStore(Protocol):
    """Where the events of resumable streams are kept."""

    async def create_stream(self, owner: str) -> str:
        """A new, empty stream of `owner`; its id."""
        ...

    async def append(self, stream: str, message: bytes | None) -> str:
        """Store one event at the end of `stream`; its event id. Appending
        to a dropped stream still answers an id (the event is not kept)."""
        ...

    async def replay(self, last_event_id: str, owner: str) -> Replay:
        """The events of the stream of `last_event_id` that followed it.

        Raises:
            UnknownEventError: malformed id, unknown stream or not `owner`'s.
            EventsEvictedError: some events after it are no longer kept.
        """
        ...

    async def drop_owner(self, owner: str) -> None:
        """Forget every stream of `owner` (its session ended)."""
        ...


@dataclass(slots=True)
class _Stream:
    owner: str
    start: int
    """Positions of this stream's events are above this one."""
    last: int = 0
    """The position of its newest event (`start` when it has none)."""
    evicted: int = 0
    """The position of its newest event evicted (0: none was)."""
    events: deque[tuple[int, bytes | None]] = field(
        default_factory=lambda: deque[tuple[int, bytes | None]]()
    )
    size: int = 0


class MemoryEventStore:
    """A bounded in-memory `EventStore` (see the module docstring for what
    is evicted). One process only; all methods run without waiting.

    Positions come from one counter for the whole store, so they also order
    events across streams (the oldest event of the store is the lowest).
    """

    def __init__(
        self,
        *,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_streams: int = DEFAULT_MAX_STREAMS,
    ) -> None:
        for name, bound in (
            ("max_events_per_stream", max_events_per_stream),
            ("max_bytes", max_bytes),
            ("max_streams", max_streams),
        ):
            if bound < 1:
                raise ValueError(f"{name} must be positive: {bound}")
        self.max_events_per_stream = max_events_per_stream
        self.max_bytes = max_bytes
        self.max_streams = max_streams
        # Least recently appended first.
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        # (position, stream) of events kept, oldest first, for the store-wide
        # byte bound; entries of events evicted otherwise are skipped, and
        # the queue is rebuilt when they outnumber the events kept.
        self._order: deque[tuple[int, str]] = deque()
        self._count = 0
        self._position = 0
        self.size = 0
        """Bytes of messages kept."""

    def __len__(self) -> int:
        return len(self._streams)

    async def create_stream(self, owner: str) -> str:
        """A new, empty stream of `owner`; its id."""
        stream = new_stream_id()
        self._streams[stream] = _Stream(owner, self._position, self._position)
        while len(self._streams) > self.max_streams:
            self._drop(next(iter(self._streams)))
        return stream

    async def append(self, stream: str, message: bytes | None) -> str:
        """Store one event at the end of `stream`; its event id."""
        self._position += 1
        position = self._position
        found = self._streams.get(stream)
        if found is None:
            return event_id(stream, str(position))
        found.last = position
        found.events.append((position, message))
        size = len(message or b"")
        found.size += size
        self.size += size
        self._count += 1
        self._order.append((position, stream))
        self._streams.move_to_end(stream)
        if len(found.events) > self.max_events_per_stream:
            self._evict_oldest(found)
        while self.size > self.max_bytes and self._order:
            self._evict_store_oldest()
        if len(self._order) > 2 * self._count + 64:
            self._rebuild_order()
        return event_id(stream, str(position))

    async def replay(self, last_event_id: str, owner: str) -> Replay:
        """The events of the stream of `last_event_id` that followed it."""
        parsed = parse_event_id(last_event_id)
        found = None if parsed is None else self._streams.get(parsed[0])
        if parsed is None or found is None or found.owner != owner:
            raise UnknownEventError(
                f"Last-Event-ID {last_event_id[:80]!r} names no stream of this session"
            )
        stream, text = parsed
        position = int(text) if text.isdigit() else -1
        if not found.start < position <= found.last:
            raise UnknownEventError(
                f"Last-Event-ID {last_event_id[:80]!r} names no event of its stream"
            )
        if position < found.evicted:
            raise EventsEvictedError(
                f"events after Last-Event-ID {last_event_id!r} are no longer kept"
            )
        events = [
            StoredEvent(event_id(stream, str(at)), message)
            for at, message in found.events
            if at > position and message is not None
        ]
        return Replay(stream, events)

    async def drop_owner(self, owner: str) -> None:
        """Forget every stream of `owner`."""
        for stream in [s for s, found in self._streams.items() if found.owner == owner]:
            self._drop(stream)

    def _drop(self, stream: str) -> None:
        found = self._streams.pop(stream)
        self.size -= found.size
        self._count -= len(found.events)

    def _evict_oldest(self, found: _Stream) -> None:
        position, message = found.events.popleft()
        found.evicted = position
        size = len(message or b"")
        found.size -= size
        self.size -= size
        self._count -= 1

    def _evict_store_oldest(self) -> None:
        position, stream = self._order.popleft()
        found = self._streams.get(stream)
        if found is not None and found.events and found.events[0][0] == position:
            self._evict_oldest(found)

    def _rebuild_order(self) -> None:
        self._order = deque(
            sorted(
                (position, stream)
                for stream, found in self._streams.items()
                for position, _ in found.events
            )
        )

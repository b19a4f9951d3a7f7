"""Server-Sent Events: writing events, and an incremental parser of event streams.

Parsing follows the WHATWG HTML "event stream interpretation":

- Lines end with CRLF, LF or CR; a CR ending one chunk and an LF starting the
  next are one line ending. One UTF-8 byte order mark at the very start of
  the stream is dropped.
- ``:`` starts a comment; ``field: value`` sets a field (one space after the
  colon is dropped); a line without a colon is a field with an empty value.
- ``data`` lines join with LF; ``event`` names the event type ("message"
  when none); ``id`` sets the last event id unless its value holds NUL (an
  empty ``id`` resets it); ``retry`` sets the reconnection time when its value
  is ASCII digits only; other fields are ignored.
- A blank line dispatches the event. The last event id is updated even when
  nothing is dispatched (no data lines), and persists across events, so
  `Event.id` is the stream's last event id at that point. An event cut off by
  the end of the stream is never dispatched (see `SSEParser.in_event`).

Departures, to suit a JSON-RPC transport: data stays bytes (the JSON decoder
takes UTF-8 bytes; invalid UTF-8 fails there, not here), while the event type
and id are decoded as UTF-8 with replacement, as the standard decodes the
whole stream.

Memory is bounded: an event's data plus the line being read (field name
included) may hold `max_event_size` bytes, however the stream is chunked.
Past that the parser skips the rest of that event (dropping the bytes of
the line as they arrive) and `feed` raises `EventTooLongError` once it has
parsed the whole chunk: nothing else is lost, as the error carries the
events the chunk completed (`EventTooLongError.events`) and the parser goes
on with the next chunk.

`encode_event` writes the data line by line (CRLF, CR and LF all end a line,
so the parser gives the data back with LF line endings; JSON text has none)
and refuses CR and LF in the event type and id (and NUL in the id, which
makes readers ignore it), so no value can inject fields or events.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ...errors import MessageTooLargeError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "Event",
    "EventTooLongError",
    "SSEParser",
    "encode_comment",
    "encode_event",
]

DEFAULT_MAX_EVENT_SIZE: Final = 16 * 1024 * 1024
"""Bytes one event's data (plus the line being read) may hold."""

_LINE_END = re.compile(rb"\r\n?|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event.

    Attributes:
        data: the data lines joined with LF.
        event: the event type ("message" unless named).
        id: the stream's last event id ("" when none was set).
    """

    data: bytes
    event: str = "message"
    id: str = ""


class EventTooLongError(MessageTooLargeError):
    """Events passed the parser's size limit and were skipped.

    Attributes:
        events: the events the same chunk completed, to use as usual.
        skipped: how many events were skipped.
    """

    def __init__(
        self, limit: int, events: Sequence[Event] = (), skipped: int = 1
    ) -> None:
        super().__init__(
            f"server-sent event too long: more than {limit} bytes; "
            f"{skipped} skipped",
            limit,
        )
        self.events = list(events)
        self.skipped = skipped


def _check_field(name: str, value: str) -> None:
    if "\r" in value or "\n" in value:
        raise ValueError(f"an SSE {name} cannot contain CR or LF: {value!r}")


def encode_event(
    data: bytes,
    *,
    event: str | None = None,
    id: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    """One event in the SSE wire format, ending with its blank line.

    Raises:
        ValueError: `event` or `id` holds CR or LF (or `id` NUL), or
            `retry_ms` is negative.
    """
    lines: list[bytes] = []
    if event is not None:
        _check_field("event type", event)
        lines.append(b"event: " + event.encode("utf-8"))
    if id is not None:
        _check_field("id", id)
        if "\0" in id:
            raise ValueError(f"an SSE id cannot contain NUL: {id!r}")
        lines.append(b"id: " + id.encode("utf-8"))
    if retry_ms is not None:
        if retry_ms < 0:
            raise ValueError(f"retry_ms must not be negative: {retry_ms}")
        lines.append(b"retry: %d" % retry_ms)
    lines.extend(
        b"data: " + line if line else b"data:" for line in _LINE_END.split(data)
    )
    return b"\n".join(lines) + b"\n\n"


def encode_comment(text: str = "") -> bytes:
    """A comment line and a blank line (a keep-alive); no event is dispatched.

    Raises:
        ValueError: `text` holds CR or LF.
    """
    _check_field("comment", text)
    return b":" + (b" " + text.encode("utf-8") if text else b"") + b"\n\n"


class SSEParser:
    """Turns the bytes of an event stream, as they arrive, into events.

    Args:
        max_event_size: bytes one event's data plus the line being read
            (field name included) may hold.
    """

    def __init__(self, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        if max_event_size < 1:
            raise ValueError(f"max_event_size must be positive: {max_event_size}")
        self.max_event_size = max_event_size
        self.last_event_id = ""
        """The stream's last event id, as of the last blank line."""
        self.retry_ms: int | None = None
        """The reconnection time the stream last set, in milliseconds."""
        self._buffer = bytearray()
        self._scanned = 0  # bytes at the start of _buffer holding no line ending
        self._started = False  # past the byte order mark
        self._after_cr = False  # the last line ended with CR: skip one LF
        self._data: list[bytes] = []
        self._data_size = 0
        self._type = ""
        self._id = ""
        self._in_event = False
        self._dropping_line = False  # dropping the rest of an over-long line
        self._skipping = False  # ignoring lines up to the end of an event
        self._skipped = 0  # events skipped during this call of feed

    @property
    def in_event(self) -> bool:
        """Whether part of an event is buffered: a stream ending now would
        cut it off."""
        return bool(
            self._in_event or self._buffer or self._skipping or self._dropping_line
        )

    def feed(self, chunk: bytes) -> list[Event]:
        """Parse the next bytes of the stream; the events they complete.

        Raises:
            EventTooLongError: an event passed `max_event_size` and was
                skipped; the error holds the events the chunk completed.
        """
        self._buffer += chunk
        if not self._started and not self._strip_bom():
            return []
        events: list[Event] = []
        self._skipped = 0
        while (line := self._next_line()) is not None:
            event = self._line(line)
            if event is not None:
                events.append(event)
        if self._skipped:
            raise EventTooLongError(self.max_event_size, events, self._skipped)
        return events

    def _strip_bom(self) -> bool:
        """Drop a leading byte order mark; False while too few bytes tell."""
        if len(self._buffer) < len(_BOM) and _BOM.startswith(self._buffer):
            return False
        if self._buffer.startswith(_BOM):
            del self._buffer[: len(_BOM)]
        self._started = True
        return True

    def _next_line(self) -> bytes | None:
        """The next complete line, without its ending; None when there is none
        yet (or the line being read is over the limit and was dropped)."""
        while True:
            buffer = self._buffer
            if self._after_cr and buffer:
                self._after_cr = False
                if buffer[0] == 0x0A:
                    del buffer[:1]
            found = _LINE_END.search(buffer, self._scanned)
            if found is None:
                self._scanned = len(buffer)
                self._check_partial_line()
                return None
            # A CR may be the first half of a CRLF split between chunks: the
            # line ends now, and an LF starting the next chunk is skipped.
            self._after_cr = found.group() == b"\r" and found.end() == len(buffer)
            line = bytes(buffer[: found.start()])
            del buffer[: found.end()]
            self._scanned = 0
            if not self._dropping_line:
                return line
            self._dropping_line = False

    def _check_partial_line(self) -> None:
        """Drop the line being read once it makes its event too long."""
        if not self._dropping_line:
            if self._data_size + len(self._buffer) <= self.max_event_size:
                return
            self._dropping_line = True
            if not self._skipping:
                self._skip_event()
        self._buffer.clear()
        self._scanned = 0

    def _skip_event(self) -> None:
        """Drop the event being read, up to its blank line, and count it."""
        self._data.clear()
        self._data_size = 0
        self._type = ""
        self._in_event = False
        self._skipping = True
        self._skipped += 1

    def _line(self, line: bytes) -> Event | None:
        """Interpret one line; the event it dispatches, if any."""
        if self._skipping:
            if not line:  # the skipped event ends: it counts, without data
                self._skipping = False
                self.last_event_id = self._id
            return None
        if not line:
            return self._dispatch()
        if self._data_size + len(line) > self.max_event_size:
            self._skip_event()
            return None
        if line.startswith(b":"):
            return None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._in_event = True
            self._data_size += len(value) + bool(self._data)
            self._data.append(value)
        elif name == b"event":
            self._in_event = True
            self._type = value.decode("utf-8", "replace")
        elif name == b"id":
            self._in_event = True
            if b"\0" not in value:
                self._id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> Event | None:
        self.last_event_id = self._id
        self._in_event = False
        event = None
        if self._data:
            event = Event(b"\n".join(self._data), self._type or "message", self._id)
        self._data.clear()
        self._data_size = 0
        self._type = ""
        return event

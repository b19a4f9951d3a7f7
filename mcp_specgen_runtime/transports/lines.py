"""Newline-delimited JSON framing over anyio byte streams (the stdio wire format).

One message is one line: a complete UTF-8 JSON text followed by ``b"\\n"``
(JSON encoders never emit a raw newline).

- Lines split on ``b"\\n"``; a ``b"\\r"`` before it is dropped, so CRLF peers
  work; blank (whitespace-only) lines are skipped.
- Lines are limited to `max_line_length` bytes, without the line ending
  (default `DEFAULT_MAX_LINE_LENGTH`, 16 MiB: room for large embedded resources,
  while a runaway peer costs at most that much memory). Past the limit the
  reader discards the rest of the line, keeping only its first and last
  `SCAN_WINDOW` bytes, and raises `LineTooLongError` (a `MessageTooLargeError`
  carrying them) when the line ends; the next `receive` returns the line after
  it. The JSON-RPC engine finds the id in those ends: a request gets -32600,
  the request a response answers fails, and serving goes on.
- Bytes after the last newline at end of stream (other than whitespace) raise
  `TruncatedMessageError`; the next `receive` raises `anyio.EndOfStream`.
- Concurrent sends never interleave: they are serialised by a lock unless the
  writer says it sends whole messages itself (`sends_whole_messages`, as
  `stdio_server()`'s does). A message containing ``b"\\n"`` is refused with
  `ValueError`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import TYPE_CHECKING, Protocol

import anyio

from mcp_specgen_runtime.jsonrpc.id_scan import SCAN_WINDOW

from ..errors import MessageTooLargeError, TransportError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = [
    "DEFAULT_MAX_LINE_LENGTH",
    "LineReader",
    "LineTooLongError",
    "Pushing",
    "StdioTransport",
    "TruncatedMessageError",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024
"""Bytes one message line may hold, line ending excluded."""
READ_CHUNK = 65536


class LineTooLongError(MessageTooLargeError):
    """A line exceeded the reader's limit and was skipped; `head` and `tail`
    are its first and last `SCAN_WINDOW` bytes (`tail` empty when the stream
    ended inside it)."""

    def __init__(self, limit: int, head: bytes = b"", tail: bytes = b"") -> None:
        super().__init__(
            f"message line too long: more than {limit} bytes; the line is "
            "discarded (raise the limit with max_line_length)",
            limit,
            head,
            tail,
        )


class TruncatedMessageError(TransportError):
    """The stream ended in the middle of a line."""

    def __init__(self, size: int) -> None:
        super().__init__(
            f"the stream ended inside a message: {size} bytes after the last newline"
        )
        self.size = size


class LineReader:
    """Splits a byte stream into lines: newline-delimited, CRLF tolerated, blank
    lines skipped, each line at most `max_line_length` bytes.

    Reads in chunks of up to 64 KiB; a line split across chunks is joined
    once, when its end arrives.
    """

    def __init__(
        self,
        stream: ByteReceiveStream,
        max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    ) -> None:
        if max_line_length < 1:
            raise ValueError(f"max_line_length must be positive: {max_line_length}")
        self.stream = stream
        self.max_line_length = max_line_length
        self._chunk = b""
        self._pos = 0  # where the unread part of _chunk starts
        self._partial: list[bytes] = []  # a line begun in earlier chunks
        self._partial_size = 0
        self._discarding = False  # skipping the rest of an over-long line
        self._head = b""  # the ends of the line being skipped
        self._tail = b""
        self._eof = False

    async def receive_line(self) -> bytes:
        """The next non-blank line, without its line ending.

        Raises:
            anyio.EndOfStream: the stream ended (after its last line).
            LineTooLongError: the line exceeds `max_line_length`; the next call
                returns the line after it.
            TruncatedMessageError: the stream ended inside a line.
        """
        # A buffered line is returned at once: no trip through the event loop
        # per message when a peer pipelines many (the wait for data is the
        # checkpoint).
        line = self.next_line()
        if line is not None:
            return line
        while True:
            if self._eof:
                raise anyio.EndOfStream
            await self._fill()
            line = self.next_line()
            if line is not None:
                return line

    async def _fill(self) -> None:
        try:
            self.take(await self.stream.receive(READ_CHUNK))
        except anyio.EndOfStream:
            self.end()

    @property
    def buffered(self) -> bool:
        """Whether bytes read are waiting to be split (the rest of a chunk)."""
        return self._pos < len(self._chunk)

    def take(self, chunk: bytes) -> None:
        """Buffer `chunk`, read from the stream by someone else (a push-mode
        reader); `next_line` then returns its lines."""
        self._chunk = chunk
        self._pos = 0

    def end(self) -> None:
        """The stream ended: raise for what is left of a line.

        Raises:
            LineTooLongError: it ended inside a line being skipped.
            TruncatedMessageError: it ended inside a line.
        """
        self._eof = True
        rest = b"".join(self._partial)
        self._partial.clear()
        self._partial_size = 0
        if self._discarding:
            self._discarding = False
            raise LineTooLongError(self.max_line_length, self._head) from None
        if rest.strip():
            raise TruncatedMessageError(len(rest)) from None

    def next_line(self) -> bytes | None:
        """A complete non-blank line from what is buffered, or None.

        Raises:
            LineTooLongError: as `receive_line`; the next call goes on after it.
        """
        while True:
            chunk, pos = self._chunk, self._pos
            end = chunk.find(b"\n", pos)
            if end < 0:
                self._chunk, self._pos = b"", 0
                if pos < len(chunk):
                    piece = chunk[pos:] if pos else chunk
                    if self._discarding:
                        self._tail = _last(self._tail, piece)
                    else:
                        self._keep(piece)
                return None
            self._pos = end + 1
            if self._discarding:
                self._discarding = False
                tail = _last(self._tail, chunk[pos:end]).removesuffix(b"\r")
                raise LineTooLongError(
                    self.max_line_length, self._head, tail[-SCAN_WINDOW:]
                )
            if self._partial:
                self._partial.append(chunk[pos:end])
                line = b"".join(self._partial)
                self._partial.clear()
                self._partial_size = 0
            else:
                line = chunk[pos:end]
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > self.max_line_length:
                raise LineTooLongError(
                    self.max_line_length, line[:SCAN_WINDOW], line[-SCAN_WINDOW:]
                )
            if line and not line.isspace():
                return line

    def _keep(self, piece: bytes) -> None:
        self._partial.append(piece)
        self._partial_size += len(piece)
        # One byte of slack: the line may yet end in CRLF.
        if self._partial_size > self.max_line_length + 1:
            # Skip the rest, keeping the ends for the error raised at its end.
            self._head = _first(self._partial)
            self._tail = b""
            for part in self._partial:
                self._tail = _last(self._tail, part)
            self._partial.clear()
            self._partial_size = 0
            self._discarding = True


def _first(parts: list[bytes]) -> bytes:
    """The first `SCAN_WINDOW` bytes of the parts joined."""
    kept: list[bytes] = []
    size = 0
    for part in parts:
        kept.append(part[: SCAN_WINDOW - size])
        size += len(kept[-1])
        if size >= SCAN_WINDOW:
            break
    return b"".join(kept)


def _last(tail: bytes, piece: bytes) -> bytes:
    """The last bytes of `tail` followed by `piece`: `SCAN_WINDOW` of them,
    and one more for a CR that may end the line."""
    keep = SCAN_WINDOW + 1
    if len(piece) >= keep:
        return piece[-keep:]
    return (tail + piece)[-keep:]


class _PushedReads(Protocol):
    """What a reader that pushes its chunks (`_FdReader.push`) hands back."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class Pushing:
    """Lines handed to callbacks as the reader's selector callback reads
    them, no task woken per message (`StdioTransport.push`).

    While it delivers the lines of one read, the writer holds what is sent,
    and releases it once the tasks started for them have run their first
    step: the answers produced in that loop pass go out in one `write`.
    `ended` resolves to what ended reading (`anyio.EndOfStream`, a
    `TruncatedMessageError`, `anyio.BrokenResourceError` or
    `anyio.ClosedResourceError`).
    """

    def __init__(
        self,
        lines: LineReader,
        writer: object,
        on_message: Callable[[bytes], None],
        on_too_large: Callable[[LineTooLongError], None],
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._lines = lines
        self._hold: Callable[[], bool] | None = getattr(writer, "hold", None)
        self._release: Callable[[], None] | None = getattr(writer, "release", None)
        self._on_message = on_message
        self._on_too_large = on_too_large
        self._reads: _PushedReads | None = None
        self._paused = False
        # Lines delivered on resume start their work in the reader's context,
        # as those delivered by the reader's callback do.
        self._context = contextvars.copy_context()
        self.ended: asyncio.Future[Exception] = self._loop.create_future()

    def start(self, reads: _PushedReads) -> None:
        """Begin with the reader's controls."""
        self._reads = reads

    def pause(self) -> None:
        """Deliver no more lines, and read no more, until `resume`."""
        self._paused = True
        if self._reads is not None:
            self._reads.pause()

    def resume(self) -> None:
        """Deliver the lines left and read again, from the next loop pass."""
        if self._paused:
            self._paused = False
            self._loop.call_soon(self._deliver, context=self._context)

    def data(self, data: bytes | Exception) -> None:
        """The reader's callback: a chunk, b"" at end of stream, or an error."""
        if isinstance(data, Exception):
            if isinstance(data, OSError):
                self._end(anyio.BrokenResourceError())
            else:
                self._end(data)
            return
        if not data:
            self._at_end()
            return
        self._lines.take(data)
        self._deliver()

    def _deliver(self) -> None:
        held = self._hold is not None and self._hold()
        try:
            while not self._paused and not self.ended.done():
                try:
                    line = self._lines.next_line()
                except LineTooLongError as exc:
                    self._on_too_large(exc)
                    continue
                if line is None:
                    if self._reads is not None:
                        self._reads.resume()
                    return
                self._on_message(line)
        finally:
            if held and self._release is not None:
                # After the first steps of the tasks just started.
                self._loop.call_soon(self._release)

    def _at_end(self) -> None:
        try:
            self._lines.end()
        except LineTooLongError as exc:
            self._on_too_large(exc)
        except TruncatedMessageError as exc:
            self._end(exc)
            return
        self._end(anyio.EndOfStream())

    def _end(self, why: Exception) -> None:
        if not self.ended.done():
            self.ended.set_result(why)

    def stop(self) -> None:
        """Read no more (the reader is closed by the transport)."""
        self._paused = True
        if self._reads is not None:
            self._reads.pause()
        self._end(anyio.ClosedResourceError())


class StdioTransport:
    """Newline-delimited JSON messages over two anyio byte streams.

    `stdio_server()` and `stdio_client()` build one; construct it directly to
    run the stdio framing over other byte streams (sockets, pipes).

    Args:
        reader: the stream messages arrive on.
        writer: the stream messages leave on.
        max_line_length: bytes one incoming line may hold, line ending
            excluded.
    """

    def __init__(
        self,
        reader: ByteReceiveStream,
        writer: ByteSendStream,
        *,
        max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    ) -> None:
        self._lines = LineReader(reader, max_line_length)
        self._reader = reader
        self._writer = writer
        self._send_lock = anyio.Lock(fast_acquire=True)
        # A writer that never interleaves concurrent sends needs no lock here.
        self._whole_messages: bool = getattr(writer, "sends_whole_messages", False)
        self._receive_guard = anyio.ResourceGuard("reading from")
        self._closed = False
        self._pushing: Pushing | None = None
        self._send_line: Callable[[bytes], Awaitable[None]] | None = getattr(
            writer, "send_line", None
        )

    @property
    def max_line_length(self) -> int:
        """Bytes one incoming line may hold."""
        return self._lines.max_line_length

    async def send(self, message: bytes) -> None:
        """Write one message and its newline.

        Raises:
            ValueError: the message contains a newline.
            anyio.ClosedResourceError: the transport is closed.
            anyio.BrokenResourceError: the peer no longer reads.
        """
        if b"\n" in message:
            raise ValueError("a stdio message cannot contain a newline")
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            if self._send_line is not None and self._whole_messages:
                await self._send_line(message)
                return
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc
        data = message + b"\n"
        try:
            if self._whole_messages:
                await self._writer.send(data)
                return
            async with self._send_lock:
                await self._writer.send(data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    async def receive(self) -> bytes:
        """Wait for the next message (one line, without its line ending).

        Raises:
            anyio.EndOfStream: the peer closed its side.
            anyio.ClosedResourceError: the transport is closed.
            LineTooLongError: the line exceeds `max_line_length` and is
                skipped.
            TruncatedMessageError: the stream ended inside a line.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        if self._pushing is not None:
            raise anyio.BusyResourceError("reading from")
        with self._receive_guard:
            return await self._lines.receive_line()

    def push(
        self,
        on_message: Callable[[bytes], None],
        on_too_large: Callable[[LineTooLongError], None],
    ) -> Pushing | None:
        """Hand each message to `on_message` as soon as it is read, from the
        reader's own callback (`on_too_large` for a line skipped as too
        long), instead of `receive`; None when the reader cannot push (not
        a pipe or socket on asyncio, or reading has begun): use `receive`.
        """
        start = getattr(self._reader, "push", None)
        if start is None or self._closed or self._lines.buffered:
            return None
        try:
            pushing = Pushing(self._lines, self._writer, on_message, on_too_large)
        except RuntimeError:  # no asyncio loop running
            return None
        reads = start(pushing.data)
        if reads is None:
            return None
        pushing.start(reads)
        self._pushing = pushing
        return pushing

    async def aclose(self) -> None:
        """Close both streams; the peer sees end of stream. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._pushing is not None:
            self._pushing.stop()
        try:
            await self._writer.aclose()
        finally:
            await self._reader.aclose()

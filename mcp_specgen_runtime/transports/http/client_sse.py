"""The HTTP client's SSE streams: a POST's SSE answer, resumed when it breaks,
and the legacy session's standalone GET stream.

- A legacy SSE answer that ends before the responses it owes is resumed with
  GET and `Last-Event-ID` when its events had ids (after the stream's `retry`
  delay, at most `MAX_RECONNECTS` times without progress); otherwise its
  requests fail with -32603. A 2026 answer is never resumed.
- The standalone GET stream is reopened when the server ends it (with
  `Last-Event-ID` when its events had ids), until it ends empty
  `MAX_RECONNECTS` + 1 times in a row.
- Events with empty data (priming events) are skipped; an event over
  `max_message_size` is dropped with a warning.

`StreamReader` reads and never writes: the transport that owns it gives it
the function opening a GET stream (with the session's headers) and the
callbacks passing messages on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx

from ...errors import MessageTooLargeError
from .client_bodies import chunks, close, read_body
from .client_messages import json_object, replies
from .headers import media_type
from .sse import EventTooLongError, SSEParser

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

    from anyio.abc import TaskGroup

    from mcp_specgen_runtime.jsonrpc.connection import RequestId

    from .client_messages import Post
    from .sse import Event

__all__ = ["DEFAULT_RETRY_MS", "MAX_RECONNECTS", "StreamReader"]

logger = logging.getLogger(__name__)

MAX_RECONNECTS: Final = 2
"""Reconnections of an SSE stream in a row that bring nothing, before giving up."""
DEFAULT_RETRY_MS: Final = 1000
"""Milliseconds before reconnecting when the stream set no `retry`."""
_JSON = "application/json"
_SSE = "text/event-stream"


@dataclass
class _Reader:
    """A background SSE reader: its cancel scope, and its request's era."""

    scope: anyio.CancelScope
    modern: bool


@dataclass
class _Cursor:
    """Where an SSE stream got to, for reconnecting."""

    last_id: str = ""
    retry_ms: int | None = None


class StreamReader:
    """Reads one transport's SSE streams in background tasks.

    Args:
        open_get: opens a GET stream resuming after an event id ("": from
            now); None when the server offers none.
        deliver: passes on a message of a stream, with the POST it answers
            and that POST's requests not answered yet (both None on the
            standalone stream).
        fail: answers requests with a synthesized error, for a reason.
        queue: passes on a message as it is.
        max_message_size: bytes one event may hold.
    """

    def __init__(
        self,
        *,
        open_get: Callable[[str], Awaitable[httpx.Response | None]],
        deliver: Callable[[Post | None, bytes, set[RequestId] | None], None],
        fail: Callable[[Iterable[RequestId], str], None],
        queue: Callable[[bytes], None],
        max_message_size: int,
    ) -> None:
        self._open_get = open_get
        self._deliver = deliver
        self._fail = fail
        self._queue = queue
        self.max_message_size = max_message_size
        self._readers: dict[RequestId, _Reader] = {}
        self._listening = False

    def modern(self, request_id: RequestId) -> bool | None:
        """Whether the stream answering `request_id` answers a 2026 request
        (None: no stream answers it)."""
        reader = self._readers.get(request_id)
        return None if reader is None else reader.modern

    def cancel(self, request_id: RequestId) -> None:
        """Stop reading the stream answering `request_id`, if any."""
        reader = self._readers.get(request_id)
        if reader is not None:
            reader.scope.cancel()

    # -- a POST's answer --

    def read_soon(self, tasks: TaskGroup, post: Post, response: httpx.Response) -> None:
        """Read the SSE answer to `post` in a task of `tasks` (which closes
        `response`)."""
        reader = _Reader(anyio.CancelScope(), modern=post.version is not None)
        for request_id in post.request_ids:
            self._readers[request_id] = reader
        tasks.start_soon(self._read_stream, post, response, reader)

    async def read_reply(self, response: httpx.Response) -> dict[str, Any] | None:
        """The JSON-RPC response in an answer the transport asked for itself
        (other messages in an SSE answer are passed on)."""
        if not response.is_success:
            return None
        kind = media_type(response.headers.get("content-type"))
        try:
            if kind == _JSON:
                return json_object(await read_body(response, self.max_message_size))
            if kind != _SSE:
                return None
            parser = SSEParser(self.max_message_size)
            async with chunks(response) as received:
                async for chunk in received:
                    for event in _feed(parser, chunk):
                        if event.event != "message" or not event.data.strip():
                            continue
                        if replies(event.data):
                            return json_object(event.data)
                        self._queue(event.data)
        except (httpx.HTTPError, MessageTooLargeError) as exc:
            logger.debug("reading an answer failed: %r", exc)
        return None

    async def _read_stream(
        self, post: Post, response: httpx.Response, reader: _Reader
    ) -> None:
        """Read a POST's SSE answer (resuming it when it breaks) until every
        request it carries is answered."""
        unanswered = set(post.request_ids)
        cursor = _Cursor()
        try:
            with reader.scope:
                try:
                    await self._consume(response, cursor, post, unanswered)
                finally:
                    await close(response)
                if post.version is None:
                    await self._resume(post, cursor, unanswered)
            if unanswered and not reader.scope.cancel_called:
                self._fail(
                    sorted(unanswered, key=str),
                    "the server ended the response stream before answering",
                )
        finally:
            for request_id in post.request_ids:
                if self._readers.get(request_id) is reader:
                    del self._readers[request_id]

    async def _resume(
        self, post: Post, cursor: _Cursor, unanswered: set[RequestId]
    ) -> None:
        failures = 0
        while unanswered and cursor.last_id and failures < MAX_RECONNECTS:
            failures += 1
            await anyio.sleep((cursor.retry_ms or DEFAULT_RETRY_MS) / 1000)
            response = await self._open_get(cursor.last_id)
            if response is None:
                return
            try:
                if await self._consume(response, cursor, post, unanswered):
                    failures = 0
            finally:
                await close(response)

    async def _consume(
        self,
        response: httpx.Response,
        cursor: _Cursor,
        post: Post | None,
        unanswered: set[RequestId] | None,
    ) -> bool:
        """Pass on the messages of an SSE stream until it ends (or answers
        every request of `post`); whether any event came."""
        parser = SSEParser(self.max_message_size)
        progressed = False
        try:
            async with chunks(response) as received:
                async for chunk in received:
                    for event in _feed(parser, chunk):
                        progressed = True
                        if event.event == "message" and event.data.strip():
                            self._deliver(post, event.data, unanswered)
                    cursor.last_id = parser.last_event_id or cursor.last_id
                    cursor.retry_ms = parser.retry_ms or cursor.retry_ms
                    if post is not None and post.request_ids and not unanswered:
                        break
        except httpx.HTTPError as exc:
            logger.debug("SSE stream broke: %r", exc)
        return progressed

    # -- the standalone GET stream --

    def listen_soon(self, tasks: TaskGroup) -> None:
        """Open the standalone GET stream in a task of `tasks`, unless it is
        open."""
        if self._listening:
            return
        self._listening = True
        tasks.start_soon(self._listen)

    async def _listen(self) -> None:
        """Keep the legacy session's GET stream open while the server offers it."""
        cursor = _Cursor()
        failures = 0
        try:
            while failures <= MAX_RECONNECTS:
                response = await self._open_get(cursor.last_id)
                if response is None:
                    return
                try:
                    got = await self._consume(response, cursor, None, None)
                finally:
                    await close(response)
                failures = 0 if got else failures + 1
                await anyio.sleep((cursor.retry_ms or DEFAULT_RETRY_MS) / 1000)
            logger.info("the GET stream keeps ending empty; not reopened")
        finally:
            self._listening = False


def _feed(parser: SSEParser, chunk: bytes) -> list[Event]:
    try:
        return parser.feed(chunk)
    except EventTooLongError as exc:
        logger.warning("%s", exc)
        return list(exc.events)

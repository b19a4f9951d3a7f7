"""Writing answers to the wire: a POST's JSON or SSE answer, the standalone GET
stream, a resumable stream's stored events, the health endpoint, and
`Refused` (an HTTP error answer raised to the request's top).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from ...errors import ErrorCode
from .asgi import respond, start_sse
from .headers import HttpError
from .resumable import Listener, StoredStream, sse_event
from .sse import encode_event

if TYPE_CHECKING:
    from collections.abc import (
        Callable,
        Mapping,
    )

    from mcp_specgen_runtime.jsonrpc.envelope import RequestId

    from .mux import ResponseStream


HEALTH_BODY = b'{"status":"ok"}'


class Refused(Exception):
    """An HTTP error answer, raised to unwind to the request's top."""

    def __init__(
        self,
        error: HttpError,
        headers: Mapping[str, str] | None = None,
        reply_id: RequestId | None = None,
    ):
        super().__init__(error.message)
        self.error = error
        self.headers = dict(headers or {})
        self.reply_id = reply_id


def refuse(status: int, message: str, code: int = ErrorCode.INVALID_REQUEST) -> Refused:
    return Refused(HttpError(status, message, code))


# --- writing responses -------------------------------------------------------------


async def answer_post(
    stream: ResponseStream,
    receive: Any,
    send: Any,
    extra: Mapping[str, str],
    *,
    on_disconnect: Callable[[], object] | None,
    error_status: Mapping[int, int] | None = None,
) -> None:
    """Answer a POST: JSON when its first message completes it, else SSE.

    With `on_disconnect`, the client going away calls it and ends the answer;
    without, the answer is written to the end. (A 2026 request is cancelled
    then; a legacy one goes on, served by its session's connection:
    disconnection is not cancellation there.) `error_status` gives the HTTP
    status of a JSON error answer by its code.
    """
    if on_disconnect is None:
        await write_answer(stream, send, extra, error_status)
        return
    # Most answers are one JSON message ready within milliseconds: watching
    # for a disconnect costs a task per POST, so only start once it lingers.
    first = await next_message_within(stream, QUICK_ANSWER_S)
    if first is None or (isinstance(first, bytes) and stream.completed_by(first)):
        await write_answer(stream, send, extra, error_status, first)
        return
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watch_disconnect, receive, on_disconnect, tasks.cancel_scope)
        await write_answer(stream, send, extra, error_status, first)
        tasks.cancel_scope.cancel()


async def watch_disconnect(
    receive: Any, on_disconnect: Callable[[], object], scope: anyio.CancelScope
) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    on_disconnect()
    scope.cancel()


class Unread:
    """The first message of an answer has not been read yet."""


UNREAD = Unread()
QUICK_ANSWER_S = 0.1
"""How long an answer may take before the client's disconnect is watched."""
PRIME_AFTER_S = 1.0
"""How long a legacy answer that primes (2025-11-25) may stay silent before
it turns into an SSE stream with a priming event, so that a client losing
the connection of a long request can resume it."""


async def write_answer(
    stream: ResponseStream,
    send: Any,
    extra: Mapping[str, str],
    error_status: Mapping[int, int] | None = None,
    read: bytes | Unread | None = UNREAD,
) -> None:
    first = await next_message(stream) if isinstance(read, Unread) else read
    if first is None:  # the session ended before anything was sent
        closed = HttpError(404, "Session not found (closed)")
        await respond(send, 404, closed.body(), "application/json")
        return
    if stream.completed_by(first):
        status = reply_status(first, error_status) if error_status else 200
        await respond(send, status, first, "application/json", extra)
        return
    await start_sse(send, extra)
    message: bytes | None = first
    while message is not None:
        done = stream.completed_by(message) if message is not first else False
        await send(
            {
                "type": "http.response.body",
                "body": sse_message(message),
                "more_body": not done,
            }
        )
        if done:
            return
        message = await next_message(stream)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def stream_events(
    stream: ResponseStream, receive: Any, send: Any, extra: Mapping[str, str]
) -> None:
    """The standalone GET stream: every message until the client leaves."""
    await start_sse(send, extra)
    await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watch_disconnect, receive, stream.close, tasks.cancel_scope)
        while (message := await next_message(stream)) is not None:
            await send(
                {
                    "type": "http.response.body",
                    "body": sse_message(message),
                    "more_body": True,
                }
            )
        tasks.cancel_scope.cancel()
    # Ended by the server (the session closed) or the client: complete the
    # response either way (a server ignores a send after a disconnect).
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def read_first(stream: ResponseStream, receive: Any) -> bytes | None:
    """The stream's first message; None when the client goes away first
    (the stream is then closed: nothing in it was promised to anyone)."""
    first: bytes | None = None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watch_disconnect, receive, stream.close, tasks.cancel_scope)
        first = await next_message(stream)
        tasks.cancel_scope.cancel()
    return first


async def write_stored(
    stored: StoredStream,
    listener: Listener,
    receive: Any,
    send: Any,
    extra: Mapping[str, str],
    head: bytes,
    skip: frozenset[str] = frozenset(),
) -> None:
    """Send a resumable stream's events to one connection: `head` (a priming
    event, or a replay), then what `listener` gets (but the ids in `skip`)
    until the stream ends, another connection takes it, or the client
    leaves (the stream then goes on without it)."""
    try:
        await _send_stored(stored, listener, receive, send, extra, head, skip)
    finally:
        listener.end()


async def _send_stored(
    stored: StoredStream,
    listener: Listener,
    receive: Any,
    send: Any,
    extra: Mapping[str, str],
    head: bytes,
    skip: frozenset[str],
) -> None:
    await start_sse(send, extra)
    if head:
        await send({"type": "http.response.body", "body": head, "more_body": True})
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(
            watch_disconnect,
            receive,
            lambda: stored.detach(listener),
            tasks.cancel_scope,
        )
        while (event := await listener.next()) is not None:
            if event[0] in skip:
                continue
            body = sse_event(*event)
            await send({"type": "http.response.body", "body": body, "more_body": True})
        tasks.cancel_scope.cancel()
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def serve_health(method: str, send: Any) -> None:
    if method in ("GET", "HEAD"):
        body = HEALTH_BODY if method == "GET" else b""
        await respond(
            send, 200, body, "application/json", {"cache-control": "no-store"}
        )
        return
    refused = HttpError(405, f"Method not allowed: {method}")
    await respond(send, 405, refused.body(), "application/json", {"allow": "GET, HEAD"})


def sse_message(message: bytes) -> bytes:
    return encode_event(message, event="message")


class _ErrorCode(msgspec.Struct):
    code: Any = None


class _Reply(msgspec.Struct):
    error: _ErrorCode | None = None


_reply_probe = msgspec.json.Decoder(_Reply)


def reply_status(reply: bytes, statuses: Mapping[int, int]) -> int:
    """The HTTP status of a JSON-RPC reply: 200 unless it is an error listed."""
    error = _reply_probe.decode(reply).error
    code = None if error is None else error.code
    return statuses.get(code, 200) if isinstance(code, int) else 200


async def next_message(stream: ResponseStream) -> bytes | None:
    """The stream's next message, or None once it is closed."""
    try:
        return await stream.messages.receive()
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        return None


async def next_message_within(
    stream: ResponseStream, seconds: float
) -> bytes | Unread | None:
    """`next_message`, or `UNREAD` when none came within `seconds`."""
    try:
        return await stream.messages.receive_within(seconds)
    except TimeoutError:
        return UNREAD
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        return None


PRIMING_VERSIONS = frozenset({"2025-11-25"})
"""The legacy revisions whose SSE streams start with a priming event (an id
and no data): earlier clients may take its empty data for a bad message."""

"""The pieces of serving legacy sessions across a cluster's instances:
relaying a forwarded POST's stored answer, the refusals stored in its
place, the messages that rebuild a session from its recorded state on
another instance, and the keys shared by every instance.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from msgspec import UnsetType

from mcp_specgen_runtime.jsonrpc.envelope import (
    BadMessage,
    Envelope,
)
from mcp_specgen_runtime.stores.events import parse_event_id
from mcp_specgen_runtime.stores.redis_events import END, REFUSAL

from .asgi import respond, start_sse
from .auth import HttpRequest
from .cluster import ForwardedRequest
from .headers import HttpError, HttpHeaders
from .messages import (
    read_messages,
    request_id,
)
from .mux import ResponseStream, SessionMux
from .resumable import sse_event

if TYPE_CHECKING:
    from collections.abc import (
        AsyncIterator,
        Awaitable,
        Mapping,
    )

    from mcp_specgen_runtime.stores.events import Replay
    from mcp_specgen_runtime.stores.redis_events import Tailed
    from mcp_specgen_runtime.stores.redis_sessions import SessionState

from .answers import Refused, next_message

logger = logging.getLogger(__name__)


CLOSE_TIMEOUT_S = 5.0
"""Seconds `McpHttpApp.aclose` waits for its sessions' tasks to finish."""
TOUCH_EVERY_S = 5.0
"""How often an instance renews the record of a session it serves."""
MOVES = 3
"""How often a forwarded POST follows its session to another instance."""
REBUILD_STEP_S = 10.0
"""How long a rebuild waits for one logged request's answer."""
RETRY = MappingProxyType({"retry-after": "1"})
TAKE_BLOCKS = 6
"""How many block periods (half leases) a forwarded POST waits for its live
home to take it before answering `NOT_TAKEN`."""
NOT_TAKEN = "the session's server instance did not take the request; send it again"


class Moved(Exception):
    """The home of a forwarded POST left before serving it: look again."""


class RefusalRecord(msgspec.Struct, omit_defaults=True, array_like=True):
    """A refusal stored in place of a forwarded POST's answer."""

    status: int
    message: str
    code: int
    reply_id: int | str | None = None
    moved: bool = False
    data: Any = None
    """The JSON-RPC error's `data` (None: no data member)."""
    www_authenticate: str | None = None
    """An authentication challenge's header."""


encode_record = msgspec.json.Encoder().encode
_decode_record = msgspec.json.Decoder(RefusalRecord).decode


def _refusal_headers(challenge: str | None, status: int) -> dict[str, str] | None:
    """The headers of a refusal relayed from the home: its challenge, and
    `Retry-After` on a 503."""
    headers: dict[str, str] = {}
    if challenge is not None:
        headers["www-authenticate"] = challenge
    if status == 503:
        headers.update(RETRY)
    return headers or None


def _outcome(value: bytes) -> Refused | Moved:
    record = _decode_record(value)
    if record.moved:
        return Moved()
    challenge = record.www_authenticate
    return Refused(
        HttpError(record.status, record.message, record.code, record.data),
        _refusal_headers(challenge, record.status),
        reply_id=record.reply_id,
    )


async def relay_entries(
    entries: AsyncIterator[Tailed],
    probe: ResponseStream,
    send: Any,
    extra: Mapping[str, str],
    retry_ms: int | None,
) -> Refused | Moved | None:
    """Write a forwarded POST's answer from its entries (see
    `McpHttpApp._relay_answer`); a refusal is returned, to raise."""
    streaming = False
    async for entry in entries:
        if entry.kind == REFUSAL:
            return _outcome(entry.value)
        if entry.kind == END:
            break
        if entry.kind == "p":
            body = sse_event(entry.id, None, retry_ms)
        elif entry.kind == "m":
            if probe.completed_by(entry.value) and not streaming:
                await respond(send, 200, entry.value, "application/json", extra)
                return None
            body = sse_event(entry.id, entry.value)
        else:
            continue
        if not streaming:
            await start_sse(send, extra)
            streaming = True
        await send({"type": "http.response.body", "body": body, "more_body": True})
    if not streaming:  # ended before any message: the session closed
        closed = HttpError(404, "Session not found (closed)")
        await respond(send, 404, closed.body(), "application/json", extra)
        return None
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    return None


def do_nothing() -> None:
    pass


async def quietly(work: Awaitable[object]) -> None:
    """Run `work`, logging (not raising) a failure: background upkeep."""
    try:
        await work
    except Exception as error:
        logger.warning("cluster upkeep failed: %s", error)


def forwarded_request(request: HttpRequest | None) -> ForwardedRequest | None:
    """The request being served, as a forwarded op carries it."""
    if request is None:
        return None
    return ForwardedRequest(
        request.method,
        request.path,
        list(request.headers),
        request.client,
        request.query,
        request.scheme,
    )


def received_request(forwarded: ForwardedRequest) -> HttpRequest:
    """A forwarded request, as the home's `authenticate` hook sees it."""
    return HttpRequest(
        forwarded.method,
        forwarded.path,
        HttpHeaders(forwarded.headers),
        forwarded.client,
        forwarded.query,
        forwarded.scheme,
    )


def session_key(session_id: str) -> str:
    """The key of a session's connection (the owner of its anonymous tasks),
    the same on every instance."""
    digest = hashlib.sha256(b"mcp-session-key\0" + session_id.encode()).digest()
    return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")


def encode_alone(item: Envelope) -> bytes:
    """One request or notification, encoded alone."""
    parts = [b'{"jsonrpc":"2.0"']
    if not isinstance(item.id, UnsetType):
        parts.append(b',"id":' + msgspec.json.encode(item.id))
    parts.append(b',"method":' + msgspec.json.encode(item.method))
    if len(item.params):
        parts.append(b',"params":' + bytes(item.params))
    return b"".join(parts) + b"}"


class _Uri(msgspec.Struct):
    uri: str


_CHANGES = {
    "notifications/initialized": "initialized",
    "logging/setLevel": "level",
    "resources/subscribe": "subscribe",
    "resources/unsubscribe": "unsubscribe",
}


def effect_of(method: str, params: bytes | None) -> tuple[str, bytes]:
    """The change to a session's recorded state (`RedisSessions.record`) of
    a message that succeeded (one of `protocol.session.LASTING`)."""
    change = _CHANGES[method]
    if change == "level":
        return change, params or b"{}"
    if change == "initialized":
        return change, b""
    return change, msgspec.json.decode(params or b"{}", type=_Uri).uri.encode()


def state_messages(state: SessionState) -> list[bytes]:
    """The messages that rebuild a session's `state` on a fresh connection:
    its `initialize`, `notifications/initialized`, its last
    `logging/setLevel`, a `resources/subscribe` per URI."""
    found = [state.initialize]
    if state.initialized:
        found.append(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    requests = [("logging/setLevel", state.level)] if state.level is not None else []
    requests += [
        ("resources/subscribe", msgspec.json.encode({"uri": uri}))
        for uri in state.subscriptions
    ]
    for number, (method, params) in enumerate(requests):
        found.append(
            b'{"jsonrpc":"2.0","id":"rebuild-%d","method":%b,"params":%b}'
            % (number, msgspec.json.encode(method), params)
        )
    return found


async def replay_state(mux: SessionMux, raw: bytes) -> None:
    """Feed one message of a session being rebuilt; a request's answer is
    awaited, then dropped."""
    try:
        message = read_messages(raw)
    except BadMessage:
        return
    if not isinstance(message, Envelope):
        return
    the_id = request_id(message)
    if the_id is None:
        mux.feed(raw, None)
        return
    stream = ResponseStream(frozenset({the_id}))
    mux.feed(raw, stream)
    try:
        with anyio.move_on_after(REBUILD_STEP_S):
            await next_message(stream)
    finally:
        mux.forget(stream)


def resume_after(last_event_id: str, replay: Replay) -> str:
    """The stream position a resume goes on from: its last replayed event,
    else the client's."""
    newest = replay.events[-1].id if replay.events else last_event_id
    parsed = parse_event_id(newest)
    return "0-0" if parsed is None else parsed[1]

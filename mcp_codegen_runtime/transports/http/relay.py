"""The pieces of serving legacy sessions across a cluster's instances: the
state messages logged per session, relaying a forwarded POST's stored
answer, the refusals stored in its place, replaying a session's log on the
instance rebuilding it, and the keys shared by every instance.
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

from mcp_codegen_runtime.jsonrpc.envelope import (
    BadMessage,
    Envelope,
    RequestId,
    error_reply,
)
from mcp_codegen_runtime.protocol.request_state import (
    principal_binding,
    principal_digest,
)
from mcp_codegen_runtime.stores.events import parse_event_id
from mcp_codegen_runtime.stores.redis_events import END, REFUSAL

from ...errors import ErrorCode, RpcError
from .asgi import respond, start_sse
from .headers import HttpError
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

    from mcp_codegen_runtime.stores.events import Replay
    from mcp_codegen_runtime.stores.redis_events import Tailed

from .answers import Refused, next_message

logger = logging.getLogger(__name__)


CLOSE_TIMEOUT_S = 5.0
"""Seconds `McpHttpApp.aclose` waits for its sessions' tasks to finish."""
STATE_METHODS = frozenset(
    {
        "notifications/initialized",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)
"""The messages that change a legacy session's state, kept in its log."""
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
ABANDONED = (
    "the server instance serving this request stopped before answering; send it again"
)


class Moved(Exception):
    """The home of a forwarded POST left before serving it: look again."""


class RefusalRecord(msgspec.Struct, omit_defaults=True, array_like=True):
    """A refusal stored in place of a forwarded POST's answer."""

    status: int
    message: str
    code: int
    reply_id: int | str | None = None
    moved: bool = False


encode_record = msgspec.json.Encoder().encode
_decode_record = msgspec.json.Decoder(RefusalRecord).decode


def _outcome(value: bytes) -> Refused | Moved:
    record = _decode_record(value)
    if record.moved:
        return Moved()
    return Refused(
        HttpError(record.status, record.message, record.code),
        RETRY if record.status == 503 else None,
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


def abandoned_reply(request: RequestId) -> bytes:
    return error_reply(request, RpcError(ErrorCode.INTERNAL_ERROR, ABANDONED))


def do_nothing() -> None:
    pass


async def quietly(work: Awaitable[object]) -> None:
    """Run `work`, logging (not raising) a failure: background upkeep."""
    try:
        await work
    except Exception as error:
        logger.warning("cluster upkeep failed: %s", error)


def owner_digest(principal: object) -> bytes:
    return principal_digest(principal)


def portable_principal(principal: object) -> Any:
    """The principal's binding as builtins, to send to another instance
    (None when it has none such)."""
    try:
        return msgspec.to_builtins(principal_binding(principal))
    except TypeError:
        return None


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


async def replay_state(mux: SessionMux, raw: bytes) -> None:
    """Feed one logged message to a session being rebuilt; a request's
    answer is awaited, then dropped."""
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

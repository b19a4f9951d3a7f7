"""A POST body's JSON-RPC messages, read by the engine's own rules.

Both HTTP apps classify a body with `_envelope.decode_envelope`, as the stdio
engine does each line: no JSON is -32700 with id null; JSON that breaks the
envelope's rules (invalid UTF-8 in its members or nesting too deep included)
is -32600 with the request's id when one is usable; params stay raw, so
params that cannot be decoded reach the handler, which answers -32602. The
apps only turn a `BadMessage` into a 400 carrying its reply.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UnsetType

from mcp_specgen_runtime.jsonrpc.connection import CANCELLED
from mcp_specgen_runtime.jsonrpc.envelope import (
    UNREADABLE,
    BadMessage,
    CancelParams,
    Envelope,
    RequestId,
    decode_envelope,
    decode_item,
    message_decoder,
)

from .headers import HttpError

__all__ = [
    "INITIALIZE",
    "Batch",
    "cancelled_ids",
    "params_of",
    "read_messages",
    "refusal",
    "request_id",
]

INITIALIZE = "initialize"


@dataclass(frozen=True)
class Batch:
    """A JSON-RPC batch: each item decoded, or why it is no valid message."""

    items: list[Envelope | BadMessage]

    @property
    def request_ids(self) -> frozenset[RequestId]:
        """The ids its answer carries: of its requests, valid or not."""
        found: set[RequestId] = set()
        for item in self.items:
            found_id = (
                item.reply_id if isinstance(item, BadMessage) else request_id(item)
            )
            if found_id is not None:
                found.add(found_id)
        return frozenset(found)

    def replies(self) -> list[bytes]:
        """The error replies of its invalid items."""
        return [item.reply() for item in self.items if isinstance(item, BadMessage)]


def read_messages(body: bytes) -> Envelope | Batch:
    """The message, or batch, of a POST body.

    Raises:
        BadMessage: the body is no JSON-RPC message nor batch.
    """
    message = decode_envelope(body, message_decoder)
    if isinstance(message, Envelope):
        return message
    items: list[Envelope | BadMessage] = []
    for raw in message:
        try:
            items.append(decode_item(raw))
        except BadMessage as bad:
            items.append(bad)
    return Batch(items)


def refusal(bad: BadMessage) -> HttpError:
    """The 400 answering a message that is no valid JSON-RPC."""
    return HttpError(400, bad.message, bad.code)


def request_id(message: Envelope) -> RequestId | None:
    """The id of a request (None for a notification or a response)."""
    if isinstance(message.method, UnsetType) or isinstance(message.id, UnsetType):
        return None
    return message.id


def params_of(message: Envelope) -> dict[str, Any]:
    """The params as a JSON object: {} when absent, no object, or unreadable
    (the handler then reports them, as over stdio)."""
    if not len(message.params):
        return {}
    try:
        found: object = msgspec.json.decode(message.params)
    except UNREADABLE:
        return {}
    return typing.cast("dict[str, Any]", found) if isinstance(found, dict) else {}


_cancel_decoder = msgspec.json.Decoder(CancelParams)


def cancelled_ids(message: Envelope | Batch) -> list[RequestId]:
    """The request ids named by the `notifications/cancelled` of a body."""
    items = message.items if isinstance(message, Batch) else [message]
    found: list[RequestId] = []
    for item in items:
        if (
            isinstance(item, Envelope)
            and item.method == CANCELLED
            and isinstance(item.id, UnsetType)
            and len(item.params)
        ):
            try:
                cancel = _cancel_decoder.decode(item.params)
            except UNREADABLE:
                continue
            if not isinstance(cancel.request_id, UnsetType):
                found.append(cancel.request_id)
    return found


def initialize_of(message: Envelope | Batch) -> Envelope | None:
    """`message` when it is an `initialize` (request or not)."""
    if isinstance(message, Envelope) and message.method == INITIALIZE:
        return message
    return None


def answer_ids(message: Envelope | Batch) -> frozenset[RequestId]:
    """The ids the answer to a POST carries (those of its requests)."""
    if isinstance(message, Batch):
        return message.request_ids
    found = request_id(message)
    return frozenset() if found is None else frozenset({found})

"""What the HTTP client reads off the messages it carries, free of any I/O.

The client transport never decodes a message fully: `describe` reads what a
POST needs from an outgoing message (its method, request ids, the 2026
protocol version of its envelope and the standard 2026 request headers, the
tool a `tools/call` names, the request a `notifications/cancelled` names);
`replies` and `error_object` read what came back. Anything these cannot
read is passed on as it is, for the session to judge.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcp_specgen_runtime.protocol.meta import ENVELOPE_KEYS, META_PROTOCOL_VERSION

from .headers import request_headers

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_specgen_runtime.jsonrpc.connection import RequestId

__all__ = [
    "CANCELLED",
    "INITIALIZE",
    "INITIALIZED",
    "TOOLS_CALL",
    "TOOLS_LIST",
    "Post",
    "ReplyProbe",
    "cancel_notice",
    "describe",
    "envelope_of",
    "error_object",
    "excerpt",
    "is_id",
    "json_object",
    "negotiated_version",
    "replies",
    "reply_with",
]

INITIALIZE: Final = "initialize"
INITIALIZED: Final = "notifications/initialized"
CANCELLED: Final = "notifications/cancelled"
TOOLS_LIST: Final = "tools/list"
TOOLS_CALL: Final = "tools/call"


class _MetaProbe(msgspec.Struct):
    version: Any = msgspec.field(default=None, name=META_PROTOCOL_VERSION)


class _ParamsProbe(msgspec.Struct):
    meta: _MetaProbe | None = msgspec.field(default=None, name="_meta")
    name: Any = None
    uri: Any = None
    task_id: Any = msgspec.field(default=None, name="taskId")
    arguments: msgspec.Raw = msgspec.Raw(b"")
    request_id: Any = msgspec.field(default=None, name="requestId")


class _MessageProbe(msgspec.Struct):
    id: Any = None
    method: Any = None
    params: msgspec.Raw = msgspec.Raw(b"")


class ReplyProbe(msgspec.Struct):
    """A message read as a response: its id, and its result left raw."""

    id: Any = None
    method: Any = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: Any = None


class _InitializeProbe(msgspec.Struct):
    protocol_version: Any = msgspec.field(default=None, name="protocolVersion")


_message_probe = msgspec.json.Decoder(_MessageProbe)
_batch_probe = msgspec.json.Decoder(list[_MessageProbe])
_reply_probe = msgspec.json.Decoder(ReplyProbe)
_replies_probe = msgspec.json.Decoder(list[ReplyProbe])


def is_id(value: object) -> bool:
    """Whether `value` can be a JSON-RPC request id."""
    return isinstance(value, int | str) and not isinstance(value, bool)


@dataclass
class Post:
    """One outgoing message and what the transport needs to know of it."""

    body: bytes
    method: str | None = None
    """The method of a single request or notification (None: response, batch)."""
    request_ids: frozenset[RequestId] = frozenset()
    version: str | None = None
    """The 2026 protocol version of the envelope (None: a legacy message)."""
    headers: dict[str, str] = field(default_factory=dict[str, str])
    """The 2026 standard request headers."""
    tool: str | None = None
    arguments: msgspec.Raw = field(default_factory=lambda: msgspec.Raw(b""))
    params: msgspec.Raw = field(default_factory=lambda: msgspec.Raw(b""))
    cancels: RequestId | None = None
    """The request a `notifications/cancelled` names."""

    @property
    def label(self) -> str:
        """How logs name the message."""
        return self.method or ("a batch" if self.body.startswith(b"[") else "a reply")


def describe(message: bytes) -> Post:
    """Read what the transport needs from an outgoing message."""
    try:
        if message.lstrip().startswith(b"["):
            items = _batch_probe.decode(message)
            ids = frozenset(i.id for i in items if i.method is not None and is_id(i.id))
            return Post(message, None, ids)
        probe = _message_probe.decode(message)
    except msgspec.DecodeError:
        return Post(message)
    if not isinstance(probe.method, str):
        return Post(message)
    method: str = probe.method
    post = Post(message, method)
    if is_id(probe.id):
        post.request_ids = frozenset({probe.id})
    try:
        params = msgspec.json.decode(bytes(probe.params) or b"{}", type=_ParamsProbe)
    except msgspec.DecodeError:
        return post
    if method == CANCELLED and is_id(params.request_id):
        post.cancels = params.request_id
    version = params.meta.version if params.meta is not None else None
    if not isinstance(version, str):
        return post
    post.version = version
    shown: dict[str, Any] = {"_meta": {META_PROTOCOL_VERSION: version}}
    for member, wire in (("name", "name"), ("uri", "uri"), ("task_id", "taskId")):
        value: Any = getattr(params, member)
        if isinstance(value, str):
            shown[wire] = value
    post.headers = request_headers({"method": method, "params": shown})
    if method == TOOLS_CALL and isinstance(params.name, str):
        post.tool = params.name
        post.arguments = params.arguments
    post.params = probe.params
    return post


def envelope_of(params: msgspec.Raw) -> dict[str, Any]:
    """The envelope keys of a 2026 request's `_meta`."""
    try:
        decoded: Any = msgspec.json.decode(params)
    except msgspec.DecodeError:
        return {}
    meta: Any = typing.cast("dict[str, Any]", decoded).get("_meta")
    if not isinstance(meta, dict):
        return {}
    members = typing.cast("dict[str, Any]", meta)
    return {k: v for k, v in members.items() if k in ENVELOPE_KEYS}


def replies(message: bytes) -> list[ReplyProbe]:
    """The responses in an incoming message (a batch's included)."""
    try:
        if message.lstrip().startswith(b"["):
            found = _replies_probe.decode(message)
        else:
            found = [_reply_probe.decode(message)]
    except msgspec.DecodeError:
        return []
    return [reply for reply in found if reply.method is None]


def negotiated_version(found: list[ReplyProbe]) -> str | None:
    """The `protocolVersion` an `initialize` result among `found` names."""
    version: str | None = None
    for reply in found:
        if not len(reply.result):
            continue
        try:
            result = msgspec.json.decode(reply.result, type=_InitializeProbe)
        except msgspec.DecodeError:
            continue
        if isinstance(result.protocol_version, str):
            version = result.protocol_version
    return version


def error_object(body: bytes) -> dict[str, Any] | None:
    """The `error` of a JSON-RPC error reply in `body`, if it is one."""
    try:
        decoded: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not isinstance(decoded, dict):
        return None
    error: Any = typing.cast("dict[str, Any]", decoded).get("error")
    if not isinstance(error, dict):
        return None
    found = typing.cast("dict[str, Any]", error)
    code = found.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    if not isinstance(found.get("message"), str):
        found = {**found, "message": ""}
    return found


def reply_with(request_id: RequestId, error: Mapping[str, Any]) -> bytes:
    """An error reply to `request_id` carrying `error` as it is."""
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def cancel_notice(request_id: RequestId) -> bytes:
    """The `notifications/cancelled` for `request_id`."""
    params = {"requestId": request_id, "reason": "cancelled"}
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "method": CANCELLED, "params": params}
    )


def json_object(body: bytes) -> dict[str, Any] | None:
    """`body` decoded, when it is a JSON object."""
    try:
        decoded: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    return typing.cast("dict[str, Any]", decoded) if isinstance(decoded, dict) else None


def excerpt(body: bytes, limit: int = 200) -> str:
    """The start of `body` as text, for a log line or an error message."""
    text = body[: limit * 4].decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."

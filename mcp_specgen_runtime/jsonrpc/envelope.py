"""JSON-RPC 2.0 envelopes: decoding incoming messages, encoding outgoing ones.

An incoming message is decoded in one msgspec pass into `Envelope`, whose
`params`, `result` and `error.data` stay raw JSON; `check` applies the rules
msgspec cannot (exactly one of result/error, an id for requests...), raising
`BadMessage`, which knows the error reply to send.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcp_specgen_runtime.codec.wire import encode
from mcp_specgen_runtime.errors import ErrorCode, RpcError

from .id_scan import SCAN_WINDOW, Located, scan_id

logger = logging.getLogger("mcp_specgen_runtime.jsonrpc")

RequestId: TypeAlias = int | str

NONE = Raw()
"""An absent raw member (a present one is never empty)."""


class ErrorObject(msgspec.Struct, frozen=True, omit_defaults=True):
    code: int
    message: str
    data: Raw = NONE


class Envelope(msgspec.Struct, frozen=True):
    """Any single JSON-RPC message, as read; `check` enforces the rules."""

    jsonrpc: Literal["2.0"]
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: Raw = NONE
    result: Raw = NONE
    error: ErrorObject | UnsetType = UNSET


# Outgoing messages: the tag writes `"jsonrpc":"2.0"` first on every message.
class Out(msgspec.Struct, tag_field="jsonrpc", tag="2.0", omit_defaults=True):
    pass


class OutRequest(Out, tag="2.0"):
    id: int
    method: str
    params: Raw = NONE


class OutNotification(Out, tag="2.0"):
    method: str
    params: Raw = NONE


class OutResult(Out, tag="2.0"):
    id: RequestId
    result: Raw


class OutError(Out, tag="2.0"):
    id: RequestId | None
    error: ErrorObject


class Meta(msgspec.Struct):
    progress_token: RequestId | UnsetType = msgspec.field(
        default=UNSET, name="progressToken"
    )


class ParamsMeta(msgspec.Struct):
    meta: Meta | UnsetType = msgspec.field(default=UNSET, name="_meta")


class CancelParams(msgspec.Struct):
    request_id: RequestId | UnsetType = msgspec.field(default=UNSET, name="requestId")
    reason: str | UnsetType = UNSET


UNREADABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
"""What decoding untrusted JSON with msgspec may raise: a `DecodeError` (or
`ValidationError`), or, for invalid UTF-8 in a string and for nesting past the
interpreter's recursion limit, Python's own errors."""

message_decoder = msgspec.json.Decoder(Envelope | list[Raw])
envelope_decoder = msgspec.json.Decoder(Envelope)
encoder = msgspec.json.Encoder()


class BadMessage(Exception):
    """An incoming message to answer with an error (and nothing else)."""

    def __init__(
        self, code: int, message: str, reply_id: RequestId | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reply_id = reply_id
        self.response_id: RequestId | None = None
        """Set for a malformed response: the id of our request it answers."""

    def reply(self) -> bytes:
        error = ErrorObject(code=self.code, message=self.message)
        return encoder.encode(OutError(id=self.reply_id, error=error))


def error_reply(request_id: RequestId | None, exc: RpcError) -> bytes:
    data = NONE
    if exc.data is not None:
        try:
            data = Raw(encode(exc.data))
        except (TypeError, msgspec.EncodeError):
            logger.warning("dropped the data of %r: not JSON", exc, exc_info=True)
    error = ErrorObject(code=exc.code, message=exc.message, data=data)
    return encoder.encode(OutError(id=request_id, error=error))


def internal_error(request_id: RequestId) -> bytes:
    error = ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="Internal error")
    return encoder.encode(OutError(id=request_id, error=error))


def invalid(reason: str, reply_id: RequestId | None = None) -> BadMessage:
    return BadMessage(ErrorCode.INVALID_REQUEST, f"Invalid Request: {reason}", reply_id)


def explain(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    if "`$.jsonrpc`" in text or "field `jsonrpc`" in text:
        return 'member "jsonrpc" must be exactly "2.0"'
    if "`$.id`" in text:
        return "id must be a string or an integer"
    return text


def decode_envelope(
    data: bytes | Raw, decoder: msgspec.json.Decoder[Any]
) -> Envelope | list[Raw]:
    """One strict pass; on failure a lenient look recovers the id for the reply.

    Raises:
        BadMessage: whatever the input, if it is no valid message (never
            msgspec's or the interpreter's own errors).
    """
    try:
        message: Envelope | list[Raw] = decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise _unfit(data, explain(exc)) from None
    except msgspec.DecodeError as exc:
        raise _parse_error(exc) from None
    except UnicodeDecodeError:
        raise _unfit(data, "a string is not valid UTF-8") from None
    except RecursionError:
        raise _too_deep(data) from None
    if isinstance(message, Envelope):
        check(message)
    return message


def decode_item(item: Raw) -> Envelope:
    """Decode one element of a batch (a nested array is an invalid request)."""
    message = decode_envelope(item, envelope_decoder)
    assert isinstance(message, Envelope)
    return message


class _Members(msgspec.Struct):
    """The members that tell who a message is for, left raw: reading them
    never fails on what the others hold."""

    id: Raw = NONE
    method: Raw = NONE
    result: Raw = NONE
    error: Raw = NONE


_members_decoder = msgspec.json.Decoder(_Members)
_json_decoder = msgspec.json.Decoder(Raw)
_id_decoder = msgspec.json.Decoder(RequestId)


def _parse_error(exc: msgspec.DecodeError) -> BadMessage:
    return BadMessage(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")


def _unfit(data: bytes | Raw, reason: str) -> BadMessage:
    """-32600 (with the id, when usable) for JSON that is no valid message;
    -32700 when it is no JSON after all."""
    bad = invalid(reason)
    try:
        members = _members_decoder.decode(data)
    except msgspec.ValidationError:  # JSON, or not, but no object
        try:
            _json_decoder.decode(data)
        except msgspec.DecodeError as exc:
            return _parse_error(exc)
        return bad
    except msgspec.DecodeError as exc:
        return _parse_error(exc)
    except RecursionError:
        return _too_deep(data)
    response = not len(members.method) and bool(
        len(members.result) or len(members.error)
    )
    locate(bad, Located(_usable_id(members.id), response))
    return bad


def _usable_id(raw: Raw) -> RequestId | None:
    if not len(raw):
        return None
    try:
        found: RequestId = _id_decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return found


def _too_deep(data: bytes | Raw) -> BadMessage:
    """-32600 for a message nested beyond what can be decoded, with the id
    when a look at its ends finds one."""
    view = memoryview(data)
    bad = invalid("nested too deeply")
    locate(bad, scan_id(bytes(view[:SCAN_WINDOW]), bytes(view[-SCAN_WINDOW:])))
    return bad


def locate(bad: BadMessage, found: Located) -> None:
    """Address the reply to `bad` by the id found: the peer's request's, or,
    for a response, the id of our request it answers (never replied to)."""
    if found.id is None:
        return
    if found.response:
        bad.response_id = found.id
    else:
        bad.reply_id = found.id


def check(env: Envelope) -> None:
    """Reject envelopes that decode but break JSON-RPC's rules."""
    has_result = len(env.result) > 0
    has_error = env.error is not UNSET
    if env.method is not UNSET:
        if env.id is None:
            raise invalid("id must be a string or an integer, not null")
        reply_id = None if env.id is UNSET else env.id
        if has_result or has_error:
            raise invalid("a request cannot carry result or error", reply_id)
        if len(env.params) and memoryview(env.params)[0] not in b"{[":
            raise invalid("params must be an object or an array", reply_id)
        return
    if not has_result and not has_error:
        reply_id = None if env.id is UNSET else env.id
        raise invalid('"method" is missing', reply_id)
    if env.id is UNSET:
        raise invalid('a response needs an "id"')
    if has_result and has_error:
        bad = invalid("a response cannot carry both result and error")
        bad.response_id = env.id
        raise bad
    if has_result and env.id is None:
        raise invalid("the id of a result cannot be null")

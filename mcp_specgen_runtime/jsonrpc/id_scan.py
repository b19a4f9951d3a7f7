"""Find the id of a JSON-RPC message that cannot be decoded whole.

A message over the size limit is skipped by the transport, and one nested too
deeply is beyond msgspec; either may still be a request awaiting an answer, or
the response to one of ours. `scan_id` reads only the first and last few KiB:
the top-level members in the head (left to right, up to the first value cut
off) and in the tail (right to left, scalar values only). That finds the id
wherever peers put it: the official SDKs write it first (Python) or last
(TypeScript: `{result, jsonrpc, id}`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

import msgspec

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["SCAN_WINDOW", "Located", "scan_id"]

SCAN_WINDOW = 4096
"""Bytes of the head, and of the tail, worth keeping for `scan_id`."""

_WS = b" \t\r\n"
_TOKEN = re.compile(
    rb'[ \t\r\n]*(?:("(?:[^"\\]|\\.)*")'  # a string
    rb"|([-0-9][-+.0-9eE]*|true|false|null)"  # another scalar
    rb"|([][{}:,]))",  # punctuation
    re.DOTALL,
)
_SCALAR_TAIL = re.compile(rb"(?:-?[0-9][-+.0-9eE]*|true|false|null)\Z")
_scalar = msgspec.json.Decoder(int | str | float | bool | None)


class Located(NamedTuple):
    """What the scan found: a usable id (int or str) and whether the message
    is a response (it has `result` or `error` and no `method`)."""

    id: int | str | None
    response: bool


def scan_id(head: bytes, tail: bytes) -> Located:
    """The id of the message whose first bytes are `head` and last `tail`
    (`tail` empty when the end is unknown)."""
    members = _forward(head) + _backward(tail)
    keys = {key for key, _ in members}
    found: int | str | None = None
    for key, value in members:
        if key == "id":
            found = None
            if isinstance(value, int | str) and not isinstance(value, bool):
                found = value
    response = "method" not in keys and bool(keys & {"result", "error"})
    return Located(found, response)


def _decode(token: bytes) -> object:
    try:
        return _scalar.decode(token)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def _forward(head: bytes) -> list[tuple[str, object]]:
    """The top-level members of an object, left to right (value None when
    it is not a scalar), as far as `head` goes."""
    members: list[tuple[str, object]] = []
    tokens = _tokens(head)
    first = next(tokens, None)
    if first is None or first.group(3) != b"{":
        return members
    while True:
        key = next(tokens, None)
        colon = next(tokens, None)
        value = next(tokens, None)
        if key is None or colon is None or value is None:
            return members
        name = _decode(key.group(1) or b"")
        if not isinstance(name, str) or colon.group(3) != b":":
            return members
        if value.group(3) in (b"{", b"["):
            if not _skip_nested(tokens):
                members.append((name, None))
                return members
            members.append((name, None))
        else:
            members.append((name, _decode(value.group(1) or value.group(2) or b"")))
        after = next(tokens, None)
        if after is None or after.group(3) != b",":
            return members


def _tokens(head: bytes) -> Iterator[re.Match[bytes]]:
    """The JSON tokens of `head` from its start, up to the first that is not one."""
    pos = 0
    while (token := _TOKEN.match(head, pos)) is not None:
        yield token
        pos = token.end()


def _skip_nested(tokens: Iterator[re.Match[bytes]]) -> bool:
    """Skip to the end of the object or array just opened; False when the
    head ends first."""
    depth = 1
    for token in tokens:
        bracket = token.group(3)
        if bracket in (b"{", b"["):
            depth += 1
        elif bracket in (b"}", b"]"):
            depth -= 1
            if depth == 0:
                return True
    return False


def _backward(tail: bytes) -> list[tuple[str, object]]:
    """The last top-level members of an object with scalar values, in order,
    read from the end of `tail`."""
    end = len(tail.rstrip(_WS))
    if not end or tail[end - 1 : end] != b"}":
        return []
    members: list[tuple[str, object]] = []
    pos = end - 1
    while True:
        value_start = _scalar_start(tail, pos)
        if value_start is None:
            break
        value = _decode(tail[value_start:pos])
        colon = len(tail[:value_start].rstrip(_WS)) - 1
        if colon < 0 or tail[colon : colon + 1] != b":":
            break
        key_end = len(tail[:colon].rstrip(_WS))
        key_start = _string_start(tail, key_end)
        if key_start is None:
            break
        name = _decode(tail[key_start:key_end])
        if not isinstance(name, str):
            break
        members.append((name, value))
        before = len(tail[:key_start].rstrip(_WS)) - 1
        if before < 0 or tail[before : before + 1] != b",":
            break
        pos = before
    members.reverse()
    return members


def _scalar_start(tail: bytes, end: int) -> int | None:
    """Where the scalar value ending just before `end` (whitespace aside)
    starts; None for an object or array, or when `tail` holds too little."""
    stop = len(tail[:end].rstrip(_WS))
    if tail[stop - 1 : stop] == b'"':
        return _string_start(tail, stop)
    found = _SCALAR_TAIL.search(tail, 0, stop)
    return None if found is None else found.start()


def _string_start(tail: bytes, end: int) -> int | None:
    """The opening quote of the string whose closing quote ends at `end`."""
    if end < 2 or tail[end - 1 : end] != b'"':
        return None
    pos = end - 1
    while True:
        pos = tail.rfind(b'"', 0, pos)
        if pos < 0:
            return None
        backslashes = pos - len(tail[:pos].rstrip(b"\\"))
        if backslashes % 2 == 0:
            return pos

"""Pick some top-level members out of a large JSON object without decoding it.

A probe decoded with msgspec skips every member it does not want byte by byte;
for params carrying a 1 MB string that skip costs as much as decoding the
string. `pick_members` walks the top level instead, jumping over strings with
`bytes.find` (memchr speed) and over nested values by their brackets, and
returns a small object holding only the wanted members, byte for byte, for
the probe to decode. It gives up (None) on whatever it is not sure of: no
object, a malformed top level, or more than `budget` steps (many small
tokens, where msgspec is the faster reader anyway).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from collections.abc import Container

__all__ = ["pick_members"]

_WS = re.compile(rb"[ \t\r\n]*")
_NESTED = re.compile(rb'["\[\]{}]')
_SCALAR_END = re.compile(rb"[ \t\r\n,}\]]")


class _GiveUp(Exception):
    """The walk met something it does not read; the caller decodes instead."""


def pick_members(doc: bytes, wanted: Container[str], budget: int = 256) -> bytes | None:
    """A JSON object of the members of the object `doc` whose names are in
    `wanted`, in their order and as written; None when `doc` is no object
    this walk reads within `budget` steps."""
    try:
        return _Walk(doc, budget).pick(wanted)
    except (_GiveUp, IndexError, UnicodeDecodeError, msgspec.DecodeError):
        return None


class _Walk:
    def __init__(self, doc: bytes, budget: int) -> None:
        self.doc = doc
        self.steps = budget

    def _step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _GiveUp

    def _ws(self, at: int) -> int:
        found = _WS.match(self.doc, at)
        assert found is not None  # the pattern matches the empty string
        return found.end()

    def _expect(self, at: int, char: int) -> int:
        at = self._ws(at)
        if self.doc[at] != char:
            raise _GiveUp
        return at + 1

    def _string_end(self, at: int) -> int:
        """The index past the string whose opening quote is at `at`."""
        doc = self.doc
        end = at
        while True:
            self._step()
            end = doc.find(b'"', end + 1)
            if end < 0:
                raise _GiveUp
            back = end - 1
            while doc[back] == 0x5C:  # a backslash
                back -= 1
            if (end - 1 - back) % 2 == 0:  # not itself escaped
                return end + 1

    def _value_end(self, at: int) -> int:
        doc = self.doc
        first = doc[at]
        if first == 0x22:  # '"'
            return self._string_end(at)
        if first not in b"[{":
            found = _SCALAR_END.search(doc, at)
            if found is None or found.start() == at:
                raise _GiveUp
            return found.start()
        depth, cursor = 0, at
        while True:
            self._step()
            found = _NESTED.search(doc, cursor)
            if found is None:
                raise _GiveUp
            char, cursor = doc[found.start()], found.start() + 1
            if char == 0x22:
                cursor = self._string_end(found.start())
            elif char in b"[{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return cursor

    def pick(self, wanted: Container[str]) -> bytes:
        doc = self.doc
        at = self._expect(0, 0x7B)  # '{'
        kept: list[bytes] = []
        at = self._ws(at)
        if doc[at] == 0x7D:  # '}'
            return b"{}"
        while True:
            self._step()
            at = self._ws(at)
            if doc[at] != 0x22:
                raise _GiveUp
            key_end = self._string_end(at)
            key = doc[at:key_end]
            name = (
                msgspec.json.decode(key, type=str)
                if b"\\" in key
                else key[1:-1].decode()
            )
            value_at = self._ws(self._expect(key_end, 0x3A))  # ':'
            value_end = self._value_end(value_at)
            if name in wanted:
                kept.append(doc[at:value_end])
            at = self._ws(value_end)
            if doc[at] == 0x7D:
                if self._ws(at + 1) != len(doc):
                    raise _GiveUp
                return b"{" + b",".join(kept) + b"}"
            if doc[at] != 0x2C:  # ','
                raise _GiveUp
            at += 1

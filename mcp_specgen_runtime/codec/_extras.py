"""Unknown keys kept on objects, and the count of objects that keep any."""

from __future__ import annotations

import typing
import weakref
from typing import Any

if typing.TYPE_CHECKING:
    import msgspec

EXTRA_ATTR = "_mcp_extra"


class Token:
    """Held by each object a conversion gave unknown keys, so that the token
    lives as long as any of them does."""

    __slots__ = ("__weakref__",)


class _LiveExtras:
    """Counts live tokens; at zero no object carries unknown keys and `encode`
    skips the search."""

    def __init__(self) -> None:
        self.refs: set[weakref.ref[Token]] = set()

    @property
    def count(self) -> int:
        return len(self.refs)

    def token(self) -> Token:
        token = Token()
        self.refs.add(weakref.ref(token, self.refs.discard))
        return token


live_extras = _LiveExtras()
TOKEN_ATTR = "_mcp_token"


def attach(obj: msgspec.Struct, properties: dict[str, Any]) -> None:
    """Keep `properties` (if any) on `obj`, which then holds a live token."""
    if properties:
        state = vars(obj)
        state[EXTRA_ATTR] = properties
        if TOKEN_ATTR not in state:
            state[TOKEN_ATTR] = live_extras.token()

"""What `list_all_*` gathered, kept while the server allows: for a 2026
result's `ttlMs`, or, on a legacy server that declared `listChanged`, until it
says the list changed."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["LIST_CHANGED", "ListCache"]

LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
"""Each list_changed notification and the kind of list it makes stale."""

_KINDS: dict[str, tuple[str, ...]] = {
    "resources": ("resources", "templates"),
    "tools": ("tools", "task_support"),
}
"""The listings a list_changed makes stale, where they are more than its own."""


class ListCache:
    """Listings by kind ("tools", "prompts", "resources", "templates", and
    "task_support": each tool's 2025-11-25 `execution.taskSupport`)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[float, list[Any]]] = {}

    def get(self, kind: str) -> list[Any] | None:
        """The listing still fresh, else None."""
        kept = self._kept.get(kind)
        if kept is None or time.monotonic() >= kept[0]:
            return None
        return list(kept[1])

    def put(self, kind: str, items: list[Any], seconds: float) -> None:
        """Keep `items` for `seconds` (nothing for 0)."""
        if seconds > 0:
            self._kept[kind] = (time.monotonic() + seconds, list(items))

    def invalidate(self, kind: str) -> None:
        """Drop the listings a list_changed of `kind` makes stale."""
        for stale in _KINDS.get(kind, (kind,)):
            self._kept.pop(stale, None)

"""OAuth scopes: the space-separated `scope` string (RFC 6749 section 3.3)
to and from sets."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["format_scope", "parse_scope"]


def parse_scope(value: object) -> frozenset[str]:
    """The scopes of a `scope` claim: a space-separated string, or a list of
    strings (the `scp` claim some issuers send); empty for anything else."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        items = typing.cast("Iterable[object]", value)
        return frozenset(item for item in items if isinstance(item, str) and item)
    return frozenset()


def format_scope(scopes: Iterable[str]) -> str:
    """Scopes as one `scope` string, sorted so that it reads the same each time."""
    return " ".join(sorted(set(scopes)))

"""Scopes per tool, resource, template and prompt: who may see and call what.

An app registers the OAuth scopes each item needs (`@app.tool(scopes=[...])`).
The caller's scopes are those of the request's principal (its `scopes`, as
the auth layer's `Principal` has them). A request with no principal, one
served over stdio or by an HTTP server without authorization, is not
restricted: scopes are enforced where a transport authenticates its callers.

Lists show a caller only the items its scopes allow; a call, read or get of
an item it lacks the scopes of is refused. Over HTTP with an auth layer,
the server refuses such a request first, with 403 `insufficient_scope`
(`scopes_for` tells it what a request needs); `refuse` is the error a
handler raises when that check did not run.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

from mcp_specgen_runtime.jsonrpc.connection import request_in_progress

from ..errors import ErrorCode, RpcError

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

__all__ = ["ScopeTable", "caller_scopes", "insufficient_scope"]


def caller_scopes() -> frozenset[str] | None:
    """The scopes of the request being served; None when it is unrestricted
    (no principal)."""
    context = request_in_progress()
    principal = None if context is None else context.principal
    if principal is None:
        return None
    scopes: object = getattr(principal, "scopes", None)
    if not isinstance(scopes, set | frozenset):
        return frozenset()
    members = typing.cast("Iterable[object]", scopes)
    return frozenset(scope for scope in members if isinstance(scope, str))


def insufficient_scope(kind: str, name: str, needed: Collection[str]) -> RpcError:
    """The error of a request for an item the caller lacks the scopes of."""
    wanted = " ".join(sorted(needed))
    return RpcError(
        ErrorCode.INVALID_PARAMS,
        f"Insufficient scope: {kind} {name!r} needs scope {wanted!r}",
        {"requiredScopes": sorted(needed)},
    )


class ScopeTable:
    """The scopes each registered item needs, by kind ("tool", "resource",
    "template", "prompt") and name (a URI or URI template for resources)."""

    def __init__(self) -> None:
        self._needed: dict[tuple[str, str], frozenset[str]] = {}

    def set(self, kind: str, name: str, scopes: Iterable[str]) -> None:
        """Record what `name` needs (nothing: forget it)."""
        needed = frozenset(scopes)
        if needed:
            self._needed[kind, name] = needed
        else:
            self._needed.pop((kind, name), None)

    def needed(self, kind: str, name: str) -> frozenset[str]:
        """The scopes `name` needs (empty: none)."""
        return self._needed.get((kind, name), frozenset())

    def allows(self, kind: str, name: str) -> bool:
        """Whether the request being served may see and use `name`."""
        return self.holds(self._needed.get((kind, name), frozenset()))

    @staticmethod
    def holds(needed: frozenset[str]) -> bool:
        """Whether the request being served holds `needed` (unrestricted
        requests hold everything)."""
        if not needed:
            return True
        held = caller_scopes()
        return held is None or needed <= held

    def check(self, kind: str, name: str) -> None:
        """Refuse (`insufficient_scope`) a use the caller's scopes do not allow.

        Raises:
            RpcError: -32602 naming the scopes needed.
        """
        # Most apps restrict nothing: no lookup then.
        if self._needed and not self.allows(kind, name):
            raise insufficient_scope(kind, name, self.needed(kind, name))

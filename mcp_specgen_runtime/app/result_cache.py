"""`ResultCache`: keeps the results of read-only methods, as the 2026 hints say.

    app = App("demo", middleware=[ResultCache(ttl_ms=30_000)])

The methods cached (`CACHEABLE`) are those whose 2026-07-28 results carry
the `CacheableResult` hints: the four lists and `resources/read`. A result
is kept for `ttlMs` milliseconds, and its `cacheScope` says who may be
served it: "public" results are shared by every caller, "private" ones only
by the same caller (`Call.caller`: the principal, else the session, else the
address or connection), as the schema requires ("Caches MUST NOT be shared
across authorization contexts").

Whose word counts: a 2026 result that promises something (`ttlMs` > 0)
is kept no longer than it says, and never shared when it says "private"
(the cache's `ttl_ms` and `scope` may only be stricter). A result that
promises nothing (`ttlMs: 0`, what an `App`'s handlers say since its
registry may change; or a legacy result, which has no hints) is kept as the
cache's own policy says: `ttl_ms` (None: not at all) and `scope` ("private"
unless told). 2026 results served by a cache with `ttl_ms` tell the client
the same: `ttlMs` (what is left of it) and `cacheScope`.

The key is the method, the revision, the params without `_meta` (which
holds the 2026 client envelope) and, for a private result, the caller.
Errors are never cached. The cache forgets a list when the app's list
changes, and a resource's reads when `notify_resource_updated` names it.
"""

from __future__ import annotations

import time
import typing
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from .middleware import Result

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .middleware import Call, CallNext

__all__ = ["CACHEABLE", "ResultCache"]

CACHEABLE = frozenset(
    {
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
"""The methods whose 2026 results are `CacheableResult`s."""

Scope = Literal["private", "public"]

_LISTS = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list", "resources/read"),
}


class _Hints(msgspec.Struct):
    ttl_ms: Any = msgspec.field(default=None, name="ttlMs")
    cache_scope: Any = msgspec.field(default=None, name="cacheScope")


class _Entry:
    __slots__ = ("expires", "method", "modern", "raw", "scope", "uri")

    def __init__(
        self,
        raw: bytes,
        expires: float,
        scope: Scope,
        method: str,
        uri: str | None,
        modern: bool,
    ) -> None:
        self.raw = raw
        self.expires = expires
        self.scope = scope
        self.method = method
        self.uri = uri
        self.modern = modern


class ResultCache:
    """Middleware keeping read-only results (see the module docstring).

    Args:
        ttl_ms: how long a result that promises nothing is kept, and the
            longest any is (None: only as long as a 2026 result says).
        scope: who may be served a kept result that promises nothing
            (None: "private"); "private" keeps every result private.
            "public" only for results that are the same for every caller:
            not for an app whose items need `scopes=` (its lists and
            reads depend on the caller).
        methods: the methods cached (a subset of `CACHEABLE`).
        max_entries: results kept at most; the least recently used go first.
        clock: monotonic seconds (tests pass their own).

    Raises:
        ValueError: a negative `ttl_ms`, an unknown scope, or a method
            that is not read-only.
    """

    def __init__(
        self,
        ttl_ms: int | None = None,
        *,
        scope: Scope | None = None,
        methods: Iterable[str] = CACHEABLE,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_ms is not None and ttl_ms < 0:
            raise ValueError("ttl_ms must not be negative")
        if scope not in (None, "private", "public"):
            raise ValueError(f"scope must be 'private' or 'public': {scope!r}")
        chosen = frozenset(methods)
        if not chosen <= CACHEABLE:
            raise ValueError(f"not read-only: {sorted(chosen - CACHEABLE)}")
        self.ttl_ms = ttl_ms
        self.scope: Scope | None = scope
        self.methods = chosen
        self.hits = 0
        """Results served from the cache."""
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if call.method not in self.methods or call.notification:
            return await call_next(call)
        shared = (call.method, call.protocol_version, _params_key(call.raw_params))
        now = self._clock()
        for key in (shared, (*shared, call.caller)):
            entry = self._entries.get(key)
            if entry is None:
                continue
            if entry.expires <= now:
                del self._entries[key]
                continue
            self._entries.move_to_end(key)
            self.hits += 1
            return Result(self._told(entry.raw, entry, now))
        result = await call_next(call)
        if not isinstance(result, Result):
            return result  # an inner middleware's own answer: not ours to keep
        modern = call.era == "modern"
        hints = _hints(result.raw) if modern else _Hints()
        ttl_ms, scope = self._policy(hints)
        if not ttl_ms:
            return result
        entry = _Entry(
            result.raw, now + ttl_ms / 1000, scope, call.method, call.target, modern
        )
        key = shared if scope == "public" else (*shared, call.caller)
        self._entries[key] = entry
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        if modern and self.ttl_ms is not None:
            return Result(self._told(result.raw, entry, now))
        return result

    def _policy(self, hints: _Hints) -> tuple[int, Scope]:
        """How long to keep a result, and for whom: a result promising
        something (`ttlMs` > 0) is kept no longer than it says, and never
        shared when it says "private"; one promising nothing (no hints, or
        `ttlMs: 0`) is kept as the cache's own policy says."""
        told = hints.ttl_ms
        if not isinstance(told, int) or told <= 0:
            return self.ttl_ms or 0, self.scope or "private"
        ttl = told if self.ttl_ms is None else min(told, self.ttl_ms)
        private = "private" in (hints.cache_scope, self.scope)
        return ttl, "private" if private else "public"

    def _told(self, raw: bytes, entry: _Entry, now: float) -> bytes:
        """A 2026 result saying the cache's hints (what is left of its ttl)."""
        if not entry.modern or self.ttl_ms is None:
            return raw
        body: dict[str, Any] = msgspec.json.decode(raw, type=dict[str, Any])
        body["ttlMs"] = max(0, int((entry.expires - now) * 1000))
        body["cacheScope"] = entry.scope
        return msgspec.json.encode(body)

    def changed(self, kind: str, uri: str | None = None) -> None:
        """Forget what a change made stale: a list ("tools", "prompts",
        "resources") and the reads it covers, or one resource's reads."""
        if kind == "resource":
            stale = [
                key
                for key, entry in self._entries.items()
                if entry.method == "resources/read" and entry.uri == uri
            ]
        else:
            methods = _LISTS.get(kind, ())
            stale = [k for k, e in self._entries.items() if e.method in methods]
        for key in stale:
            del self._entries[key]

    def clear(self) -> None:
        """Forget every result."""
        self._entries.clear()


def _params_key(raw: bytes | None) -> bytes:
    """The params without `_meta`, in a canonical form."""
    if not raw:
        return b""
    try:
        params: Any = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw
    if isinstance(params, dict):
        body = typing.cast("dict[str, Any]", params)
        body.pop("_meta", None)
        return msgspec.json.encode(body, order="sorted")
    return raw


def _hints(raw: bytes) -> _Hints:
    try:
        return msgspec.json.decode(raw, type=_Hints)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _Hints()

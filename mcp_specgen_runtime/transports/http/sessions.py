"""Sessions of the legacy Streamable HTTP transport (2025-03-26 to 2025-11-25).

A server may give a session id in the `Mcp-Session-Id` header of its
`initialize` response; the client then sends it with every request. 2026-07-28
has no sessions: its requests carry no id and get none.

- Ids come from `secrets.token_urlsafe(32)`: 256 random bits in 43 characters
  of ``[A-Za-z0-9_-]``, inside the visible ASCII (0x21 to 0x7E) the spec
  requires.
- An incoming id is validated (visible ASCII, at most `MAX_SESSION_ID_LENGTH`
  characters) before any lookup; an invalid one is simply not found, which
  the spec answers with 404 as it does an expired or closed session.
- A session expires after `idle_timeout_s` seconds without use. Expired
  sessions are removed lazily (by `create` and `get`) or by `sweep`; each is
  passed to `on_expire`, whichever call removed it, so its owner can close it.
  A session held with `use` (a request or stream in flight) never expires.
- At most `max_sessions` live at once; `create` then raises
  `SessionLimitError`, which a server answers with 503 (as the Python SDK
  does), leaving existing sessions alone.
- A session belongs to its `owner` (who opened it: the server's authenticated
  principal, None for anonymous, so all anonymous clients are one owner).
  Only an equal (`==`) owner finds it; to any other, it is unknown. An owner
  with a `binding` (`principal_binding`) is compared by that.
- At most `max_sessions_per_owner` live per owner: an owner at its cap loses
  its own least recently used session not in use (passed to `on_expire`), so
  one flooding client cannot lock the others out; when all of them are in
  use, `create` raises `SessionLimitError` for that owner only.
- The defaults follow the Python SDK: 30 minutes idle, 10 000 sessions; no
  cap per owner (servers set theirs).
- Time comes from `clock` (`time.monotonic` unless told), so tests control it.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic, TypeVar

from mcp_specgen_runtime.protocol.request_state import principal_binding

from ...errors import McpError

if TYPE_CHECKING:
    import asyncio

    from mcp_specgen_runtime.jsonrpc.connection import Connection
    from mcp_specgen_runtime.protocol.session import ServerConnection

    from .mux import SessionMux
    from .resumable import StoredStream

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

__all__ = [
    "ANY_OWNER",
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_MAX_SESSIONS_PER_PRINCIPAL",
    "MAX_SESSION_ID_LENGTH",
    "SESSION_ID_HEADER",
    "SessionLimitError",
    "SessionRegistry",
    "first_request_id",
    "is_valid_session_id",
    "new_session_id",
]

SESSION_ID_HEADER: Final = "Mcp-Session-Id"
MAX_SESSION_ID_LENGTH: Final = 256
"""Characters an incoming session id may hold (ours have 43)."""
DEFAULT_IDLE_TIMEOUT_S: Final = 30 * 60.0
DEFAULT_MAX_SESSIONS: Final = 10_000
DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: Final = 100
"""The servers' cap per owner (anonymous clients: one owner)."""

T = TypeVar("T")


ANY_OWNER: Final = object()
"""Given as the owner to `SessionRegistry.use`: whoever owns the session
(the caller was checked elsewhere, as for a stream another instance relays)."""


def new_session_id() -> str:
    """A fresh, cryptographically random session id."""
    return secrets.token_urlsafe(32)


FIRST_REQUEST_IDS: Final = 2**53 - 2**32
"""A session's first request id to its client is below this: it counts up
from there, every id an exact JSON number in JavaScript (< 2**53)."""


def first_request_id() -> int:
    """A random first id for a session's requests to its client, so that two
    processes serving one session in turn (a moved one) do not share ids."""
    return 1 + secrets.randbelow(FIRST_REQUEST_IDS)


_SESSION_ID = re.compile(rf"[\x21-\x7e]{{1,{MAX_SESSION_ID_LENGTH}}}\Z")


def is_valid_session_id(value: str) -> bool:
    """Whether `value` can be a session id: 1 to `MAX_SESSION_ID_LENGTH`
    characters of visible ASCII."""
    return _SESSION_ID.match(value) is not None


class SessionLimitError(McpError):
    """No session was created: `max_sessions` are live (answer 503)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"too many sessions: {limit} are open")
        self.limit = limit


@dataclass(slots=True)
class _Entry(Generic[T]):
    value: T
    last_used: float
    owner: _Owner
    users: int = 0


class _Owner:
    """An owner as a dict key: equal owners are equal keys, hashable or not."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: object) -> None:
        value = principal_binding(value)
        self.value = value
        try:
            self._hash = hash(value)
        except TypeError:  # unhashable (a dict of claims): equality alone decides
            self._hash = 0

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Owner) and (
            self.value is other.value or bool(self.value == other.value)
        )


class SessionRegistry(Generic[T]):
    """Live sessions by id, each holding a value of the server's choice.

    Args:
        idle_timeout_s: seconds without use before a session expires; None
            for never.
        max_sessions: sessions live at once; None for no limit.
        max_sessions_per_owner: sessions live at once per owner; None for no
            limit.
        on_expire: called with (id, value) for each expired or evicted
            session removed.
        clock: the current time in seconds (monotonic).
    """

    def __init__(
        self,
        *,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        max_sessions: int | None = DEFAULT_MAX_SESSIONS,
        max_sessions_per_owner: int | None = None,
        on_expire: Callable[[str, T], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if idle_timeout_s is not None and not idle_timeout_s > 0:
            raise ValueError(f"idle_timeout_s must be positive: {idle_timeout_s}")
        for name, cap in (
            ("max_sessions", max_sessions),
            ("max_sessions_per_owner", max_sessions_per_owner),
        ):
            if cap is not None and cap < 1:
                raise ValueError(f"{name} must be positive: {cap}")
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self.max_sessions_per_owner = max_sessions_per_owner
        self._on_expire = on_expire
        self._clock = clock
        # Least recently used first, so expired sessions are found at the front.
        self._entries: OrderedDict[str, _Entry[T]] = OrderedDict()
        self._owned: dict[_Owner, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._entries

    def create(self, value: T, owner: object = None) -> str:
        """Register a session of `owner` holding `value`; its new id.

        Raises:
            SessionLimitError: `max_sessions` are live, even after expiry, or
                `max_sessions_per_owner` of `owner`'s, all in use.
        """
        session_id = new_session_id()
        while session_id in self._entries:  # pragma: no cover - 2**-256
            session_id = new_session_id()
        self._insert(session_id, value, owner)
        return session_id

    def _insert(self, session_id: str, value: T, owner: object) -> None:
        """Register `value` under `session_id`, making room (or refusing)
        within the limits."""
        now = self._clock()
        self.sweep(now)
        key = _Owner(owner)
        cap = self.max_sessions_per_owner
        if cap is not None and self._owned.get(key, 0) >= cap:
            self._evict(key, cap)
        if self.max_sessions is not None and len(self._entries) >= self.max_sessions:
            raise SessionLimitError(self.max_sessions)
        self._entries[session_id] = _Entry(value, now, key)
        self._owned[key] = self._owned.get(key, 0) + 1

    def _evict(self, owner: _Owner, cap: int) -> None:
        """Remove the least recently used session of `owner` not in use."""
        for sid, entry in self._entries.items():
            if entry.owner == owner and not entry.users:
                self._remove(sid)
                if self._on_expire is not None:
                    self._on_expire(sid, entry.value)
                return
        raise SessionLimitError(cap)

    def adopt(self, session_id: str, value: T, owner: object = None) -> None:
        """Register a session under an id given elsewhere (a session of a
        cluster rebuilt on this instance), as `create` does.

        Raises:
            SessionLimitError: as `create`.
            ValueError: the id is invalid or already registered.
        """
        if not is_valid_session_id(session_id) or session_id in self._entries:
            raise ValueError(f"cannot adopt session {session_id[:80]!r}")
        self._insert(session_id, value, owner)

    def find(self, session_id: str) -> T | None:
        """The session's value whoever owns it, its idle time restarting
        (for work whose caller was checked elsewhere); None when unknown."""
        now = self._clock()
        self.sweep(now)
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        self._touch(session_id, entry, now)
        return entry.value

    def discard(self, session_id: str) -> T | None:
        """Remove a session whoever owns it; its value, if there was one."""
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        self._remove(session_id)
        return entry.value

    def ids(self) -> list[str]:
        """The ids of the live sessions."""
        return list(self._entries)

    def get(self, session_id: str, owner: object = None) -> T | None:
        """The session's value, its idle time restarting; None when the id is
        invalid, unknown, closed, expired or another owner's."""
        now = self._clock()
        self.sweep(now)
        entry = self._lookup(session_id, owner)
        if entry is None:
            return None
        self._touch(session_id, entry, now)
        return entry.value

    @contextmanager
    def use(self, session_id: str, owner: object = None) -> Generator[T | None]:
        """Hold a session while a request or stream is in flight: it cannot
        expire (nor be evicted) meanwhile, and its idle time restarts at the
        end. Yields what `get` returns."""
        now = self._clock()
        self.sweep(now)
        entry = self._lookup(session_id, owner)
        if entry is not None:
            entry.users += 1
            self._touch(session_id, entry, now)
        try:
            yield None if entry is None else entry.value
        finally:
            if entry is not None:
                entry.users -= 1
                if self._entries.get(session_id) is entry:
                    self._touch(session_id, entry, self._clock())

    def close(self, session_id: str, owner: object = None) -> T | None:
        """Remove a session of `owner`; its value, or None when there was none."""
        entry = self._lookup(session_id, owner)
        if entry is None:
            return None
        self._remove(session_id)
        return entry.value

    def close_all(self) -> list[tuple[str, T]]:
        """Remove every session (at shutdown); the (id, value) pairs."""
        removed = [(sid, entry.value) for sid, entry in self._entries.items()]
        self._entries.clear()
        self._owned.clear()
        return removed

    def sweep(self, now: float | None = None) -> list[tuple[str, T]]:
        """Remove the sessions idle for `idle_timeout_s` at `now` (default:
        the clock's time); the (id, value) pairs, each also passed to
        `on_expire`."""
        if self.idle_timeout_s is None:
            return []
        deadline = (self._clock() if now is None else now) - self.idle_timeout_s
        expired: list[tuple[str, T]] = []
        held: list[str] = []
        for sid, entry in self._entries.items():
            if entry.last_used > deadline:
                break
            if entry.users:
                held.append(sid)
            else:
                expired.append((sid, entry.value))
        for sid, _ in expired:
            self._remove(sid)
        for sid in held:  # in use: checked again once released
            self._entries.move_to_end(sid)
        if self._on_expire is not None:
            for sid, value in expired:
                self._on_expire(sid, value)
        return expired

    def _lookup(self, session_id: str, owner: object) -> _Entry[T] | None:
        if not is_valid_session_id(session_id):
            return None
        entry = self._entries.get(session_id)
        if entry is None or (owner is not ANY_OWNER and entry.owner != _Owner(owner)):
            return None
        return entry

    def _remove(self, session_id: str) -> None:
        entry = self._entries.pop(session_id)
        left = self._owned[entry.owner] - 1
        if left:
            self._owned[entry.owner] = left
        else:
            del self._owned[entry.owner]

    def _touch(self, session_id: str, entry: _Entry[T], now: float) -> None:
        entry.last_used = max(entry.last_used, now)
        self._entries.move_to_end(session_id)


@dataclass
class LegacySession:
    """A legacy session served by this instance: its mux, connection and task."""

    mux: SessionMux
    connection: Connection
    handler: ServerConnection
    task: asyncio.Task[None] | None = None
    session_id: str = ""
    standalone: StoredStream | None = None
    """The GET stream, when streams are resumable (attached or not)."""

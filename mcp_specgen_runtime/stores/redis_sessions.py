"""`RedisSessions`: the legacy HTTP sessions of several server instances
sharing one Redis, each served by one instance, its home.

Keys, under one prefix (default `mcp:`):

- `session:<id>`, a hash: `owner` (a digest of the principal binding that
  opened it, `protocol.request_state.principal_digest`, empty for anonymous),
  `home` (the id of the instance holding its live state; empty once that
  instance released it), and what another instance needs to rebuild the
  session: `init` (its `initialize` request), `initialized` (present once
  `notifications/initialized` came) and `level` (the params of its last
  successful `logging/setLevel`);
- `session:<id>:subs`, a set: the URIs it is subscribed to
  (`resources/subscribe` adds, `resources/unsubscribe` removes).

The state is the effect of those messages, not their history: it does not
grow with the messages a session sends. Both keys expire after the idle
timeout (none without one: the session's home deletes them when it ends),
renewed as the session is used. To a caller of another owner a session is
unknown, exactly as a missing one. Each operation is one Lua script
(atomic, one round trip): `route` looks a session up, checks its home is
alive (`<alive prefix><home>` exists) and claims it (compare-and-set of
`home`) when it is not. On Redis Cluster give
the prefix a hash tag (`{mcp}:`): the scripts touch the liveness keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from .redis_scripts import LuaScript, RedisClient

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

__all__ = ["DEFAULT_PREFIX", "RedisSessions", "Route", "SessionState"]

DEFAULT_PREFIX: Final = "mcp:"

_OPEN = """
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'home', ARGV[2], 'init', ARGV[4])
if ARGV[3] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
"""
"""KEYS: session, subscriptions. ARGV: owner, home, TTL (ms; 0: none), the
initialize message."""

_RECORD = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] == 'initialized' then
  redis.call('HSET', KEYS[1], 'initialized', '1')
elseif ARGV[2] == 'level' then
  redis.call('HSET', KEYS[1], 'level', ARGV[3])
elseif ARGV[2] == 'subscribe' then
  redis.call('SADD', KEYS[2], ARGV[3])
elseif ARGV[2] == 'unsubscribe' then
  redis.call('SREM', KEYS[2], ARGV[3])
end
if ARGV[1] ~= '0' then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return 1
"""
"""KEYS: session, subscriptions. ARGV: TTL (ms; 0: none), what changed
("initialized", "level", "subscribe", "unsubscribe"), its value (the
level's params, the URI). 0: no such session."""

_ROUTE = """
local found = redis.call('HMGET', KEYS[1], 'owner', 'home')
if not found[1] or found[1] ~= ARGV[1] then return {0} end
if ARGV[3] ~= '0' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
local home = found[2] or ''
if home ~= '' and home ~= ARGV[2] and redis.call('EXISTS', ARGV[4] .. home) == 1 then
  return {1, home}
end
if ARGV[5] == '0' then return {2, home} end
redis.call('HSET', KEYS[1], 'home', ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'init', 'initialized', 'level')
return {3, home, state[1] or '', state[2] or '', state[3] or '',
        redis.call('SMEMBERS', KEYS[2])}
"""
"""KEYS: session, subscriptions. ARGV: owner, this instance, TTL (ms; 0:
none), liveness prefix, '1' to claim. {0}: unknown (or another owner's);
{1, home}: served by a live home; {2, home}: no live home, not claimed;
{3, old home, init, initialized, level, URIs}: claimed, rebuild it from
that state."""

_RELEASE = """
if redis.call('HGET', KEYS[1], 'home') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'home', '')
return 1
"""
"""KEYS: session. ARGV: this instance. Releases the session if ours."""

_RELEASE_ALL = """
local released = 0
for _, key in ipairs(KEYS) do
  if redis.call('HGET', key, 'home') == ARGV[1] then
    redis.call('HSET', key, 'home', '')
    released = released + 1
  end
end
return released
"""
"""KEYS: sessions. ARGV: this instance. Releases those that are ours."""

_TOUCH = """
if ARGV[1] == '0' then return 1 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return redis.call('HGET', KEYS[1], 'home') or ''
"""
"""KEYS: session, log. ARGV: TTL (ms). Its home ('' when none or gone)."""


@dataclass(frozen=True, slots=True)
class SessionState:
    """What rebuilding a session takes: its `initialize` request, whether
    `notifications/initialized` came, the params of its last
    `logging/setLevel` (None: never set), the URIs it is subscribed to."""

    initialize: bytes = b""
    initialized: bool = False
    level: bytes | None = None
    subscriptions: list[str] = field(default_factory=lambda: list[str]())


@dataclass(frozen=True, slots=True)
class Route:
    """Where a session is served, as `RedisSessions.route` found it.

    `kind`: "unknown" (no such session of this owner), "remote" (its live
    home is `home`), "homeless" (no live home; not claimed) or "claimed"
    (this instance is its home now: rebuild it from `state`)."""

    kind: Literal["unknown", "remote", "homeless", "claimed"]
    home: str = ""
    state: SessionState = field(default_factory=SessionState)


_Kind = Literal["unknown", "remote", "homeless", "claimed"]
_KINDS: Final[tuple[_Kind, ...]] = ("unknown", "remote", "homeless", "claimed")


class RedisSessions:
    """The shared registry of legacy sessions (see the module docstring).

    Args:
        client: how to reach Redis (called for the client on each use).
        prefix: put before every key.
        alive_prefix: the liveness keys of instances are this plus their id.
        ttl_s: how long a session outlives its last use (None: for ever;
            its home deletes it when it ends).
    """

    def __init__(
        self,
        client: Callable[[], Awaitable[RedisClient]],
        *,
        prefix: str = DEFAULT_PREFIX,
        alive_prefix: bytes = b"",
        ttl_s: float | None = 1800.0,
    ) -> None:
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"ttl_s must be positive: {ttl_s}")
        self._client = client
        self.prefix = prefix.encode()
        self.alive_prefix = alive_prefix or self.prefix + b"instance:"
        self.ttl_ms = 0 if ttl_s is None else max(1, int(ttl_s * 1000))
        self._open = LuaScript(_OPEN)
        self._record = LuaScript(_RECORD)
        self._route = LuaScript(_ROUTE)
        self._release = LuaScript(_RELEASE)
        self._release_all = LuaScript(_RELEASE_ALL)
        self._touch = LuaScript(_TOUCH)

    def keys(self, session_id: str) -> list[bytes]:
        """The session's hash and subscription set."""
        key = self.prefix + b"session:" + session_id.encode()
        return [key, key + b":subs"]

    async def open(
        self, session_id: str, owner: bytes, home: str, initialize: bytes
    ) -> None:
        """Record a new session of `owner` served by `home`, its state
        starting with its `initialize` request."""
        args: list[Any] = [owner, home, self.ttl_ms, initialize]
        await self._open(await self._client(), self.keys(session_id), args)

    async def record(self, session_id: str, change: str, value: bytes = b"") -> bool:
        """Keep a change of the session's state: "initialized", "level"
        (`value` its params), "subscribe" or "unsubscribe" (`value` the URI);
        False when the session is gone."""
        args: list[Any] = [self.ttl_ms, change, value]
        found = await self._record(await self._client(), self.keys(session_id), args)
        return bool(found)

    async def route(
        self, session_id: str, owner: bytes, me: str, *, claim: bool = True
    ) -> Route:
        """Where the session is served, claimed by `me` when it has no live
        home and `claim`; renews its TTL."""
        args: list[Any] = [owner, me, self.ttl_ms, self.alive_prefix, int(claim)]
        found = cast(
            "list[Any]",
            await self._route(await self._client(), self.keys(session_id), args),
        )
        kind = _KINDS[int(found[0])]
        home = found[1].decode() if len(found) > 1 else ""
        if len(found) < 6:
            return Route(kind, home)
        uris = cast("list[bytes]", found[5])
        state = SessionState(
            found[2],
            bool(found[3]),
            found[4] or None,
            sorted(uri.decode() for uri in uris),
        )
        return Route(kind, home, state)

    async def release(self, session_id: str, me: str) -> bool:
        """Give up being the session's home (the next request rebuilds it
        elsewhere); whether `me` was."""
        found = await self._release(
            await self._client(), self.keys(session_id)[:1], [me]
        )
        return bool(found)

    async def release_all(self, session_ids: Sequence[str], me: str) -> int:
        """`release` each of `session_ids` that `me` holds, in one round
        trip (a shutdown with a slow Redis waits once, not per session);
        how many were released."""
        if not session_ids:
            return 0
        keys = [self.keys(session_id)[0] for session_id in session_ids]
        return int(await self._release_all(await self._client(), keys, [me]))

    async def touch(self, session_id: str) -> str:
        """Renew the session's TTL; its home ('' when none, or no record)."""
        found = await self._touch(
            await self._client(), self.keys(session_id), [self.ttl_ms]
        )
        return found.decode() if isinstance(found, bytes) else str(found or "")

    async def delete(self, session_id: str) -> None:
        """Forget the session at once."""
        await (await self._client()).execute_command("DEL", *self.keys(session_id))

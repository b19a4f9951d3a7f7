"""`RedisSessions`: the legacy HTTP sessions of several server instances
sharing one Redis, each served by one instance, its home.

Keys, under one prefix (default `mcp:`):

- `session:<id>`, a hash: `owner` (a digest of the principal binding that
  opened it, `protocol.request_state.principal_digest`, empty for anonymous)
  and `home` (the id of the instance holding its live state; empty once that
  instance released it);
- `session:<id>:log`, a list: the messages that changed the session's state
  (its `initialize`, `notifications/initialized`, `logging/setLevel`,
  `resources/(un)subscribe`), each alone, so another instance rebuilds the
  session by replaying them.

Both expire after the idle timeout, renewed as the session is used. To a
caller of another owner a session is unknown, exactly as a missing one.
Each operation is one Lua script (atomic, one round trip): `route` looks a
session up, checks its home is alive (`<alive prefix><home>` exists) and
claims it (compare-and-set of `home`) when it is not. On Redis Cluster give
the prefix a hash tag (`{mcp}:`): the scripts touch the liveness keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from .redis_scripts import LuaScript, RedisClient

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

__all__ = ["DEFAULT_PREFIX", "RedisSessions", "Route"]

DEFAULT_PREFIX: Final = "mcp:"

_OPEN = """
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'home', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""
"""KEYS: session, log. ARGV: owner, home, TTL (ms), the initialize message."""

_LOG = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
"""
"""KEYS: session, log. ARGV: TTL (ms), the message. 0: no such session."""

_ROUTE = """
local found = redis.call('HMGET', KEYS[1], 'owner', 'home')
if not found[1] or found[1] ~= ARGV[1] then return {0} end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local home = found[2] or ''
if home ~= '' and home ~= ARGV[2] and redis.call('EXISTS', ARGV[4] .. home) == 1 then
  return {1, home}
end
if ARGV[5] == '0' then return {2, home} end
redis.call('HSET', KEYS[1], 'home', ARGV[2])
return {3, home, redis.call('LRANGE', KEYS[2], 0, -1)}
"""
"""KEYS: session, log. ARGV: owner, this instance, TTL (ms), liveness
prefix, '1' to claim. {0}: unknown (or another owner's); {1, home}: served
by a live home; {2, home}: no live home, not claimed; {3, old home, log}:
claimed, rebuild it from the log."""

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
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return redis.call('HGET', KEYS[1], 'home') or ''
"""
"""KEYS: session, log. ARGV: TTL (ms). Its home ('' when none or gone)."""


@dataclass(frozen=True, slots=True)
class Route:
    """Where a session is served, as `RedisSessions.route` found it.

    `kind`: "unknown" (no such session of this owner), "remote" (its live
    home is `home`), "homeless" (no live home; not claimed) or "claimed"
    (this instance is its home now: rebuild it from `log`)."""

    kind: Literal["unknown", "remote", "homeless", "claimed"]
    home: str = ""
    log: list[bytes] = field(default_factory=lambda: list[bytes]())


_Kind = Literal["unknown", "remote", "homeless", "claimed"]
_KINDS: Final[tuple[_Kind, ...]] = ("unknown", "remote", "homeless", "claimed")


class RedisSessions:
    """The shared registry of legacy sessions (see the module docstring).

    Args:
        client: how to reach Redis (called for the client on each use).
        prefix: put before every key.
        alive_prefix: the liveness keys of instances are this plus their id.
        ttl_s: how long a session outlives its last use.
    """

    def __init__(
        self,
        client: Callable[[], Awaitable[RedisClient]],
        *,
        prefix: str = DEFAULT_PREFIX,
        alive_prefix: bytes = b"",
        ttl_s: float = 1800.0,
    ) -> None:
        if not ttl_s > 0:
            raise ValueError(f"ttl_s must be positive: {ttl_s}")
        self._client = client
        self.prefix = prefix.encode()
        self.alive_prefix = alive_prefix or self.prefix + b"instance:"
        self.ttl_ms = max(1, int(ttl_s * 1000))
        self._open = LuaScript(_OPEN)
        self._log = LuaScript(_LOG)
        self._route = LuaScript(_ROUTE)
        self._release = LuaScript(_RELEASE)
        self._release_all = LuaScript(_RELEASE_ALL)
        self._touch = LuaScript(_TOUCH)

    def keys(self, session_id: str) -> list[bytes]:
        """The session's hash and state log."""
        key = self.prefix + b"session:" + session_id.encode()
        return [key, key + b":log"]

    async def open(
        self, session_id: str, owner: bytes, home: str, initialize: bytes
    ) -> None:
        """Record a new session of `owner` served by `home`, its log
        starting with its `initialize` request."""
        args: list[Any] = [owner, home, self.ttl_ms, initialize]
        await self._open(await self._client(), self.keys(session_id), args)

    async def log(self, session_id: str, message: bytes) -> bool:
        """Append a state-changing message to the session's log; False when
        the session is gone."""
        args: list[Any] = [self.ttl_ms, message]
        return bool(await self._log(await self._client(), self.keys(session_id), args))

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
        log = cast("list[bytes]", found[2]) if len(found) > 2 else []
        return Route(kind, home, log)

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

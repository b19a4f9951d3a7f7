"""`RedisTaskStore`: tasks in Redis, shared by every server using that Redis.

Keys, all under one prefix (default `mcp:tasks:`):

- `task:<id>`, a hash: each `TaskRecord` field as JSON (so a value is never
  re-encoded by Redis's Lua, whose cjson keeps 14 digits of a number), plus
  `_index` and `_entry` (where the task sits in its owner's index) and
  `_expires` (its expiry, Unix seconds). Its Redis TTL is the time it has
  left, `created_at + ttl_ms` less now (`PEXPIRE`), so Redis deletes an
  expired task itself.
- `owner:<owner>` (`owner` for None), a sorted set per owner used for `list`.
  Every member has score 0 and is `created_at` as 8 order-preserving bytes
  followed by the id, so the set's byte order is (creation, id), and a page
  is one `ZRANGE ... BYLEX` from an exclusive cursor: no ranks to shift when
  members come and go. The set's own TTL is its latest task's expiry (none
  while it holds a task without one); members whose task is gone are
  removed when a listing meets them, or by `purge_expired`.
- `expiry`, a sorted set of the tasks with a TTL by expiry time, so
  `purge_expired` finds the expired ones (those Redis has not deleted yet,
  and the index members of those it has).

Why Lua scripts and not WATCH/MULTI: `create`, `update`, `list` and the
purge each run as one script, which Redis runs atomically in one round trip.
Sticky terminal states need a check-then-write; under WATCH/MULTI that is at
least three round trips, and racing workers abort and retry each other's
transactions (the more workers finish one task, the more retries), whereas a
script never retries: the first to run wins and the others read a terminal
status. `create` is SET NX's rule (an id is taken while its task lives) in a
script, because the hash, its TTL and its index members must appear together
(an expired task's id may be reused). The scripts touch keys they do not
declare (a task's owner index), so on Redis Cluster give the prefix a hash
tag (`{mcp}:tasks:`) to keep every key in one slot.

Expiry follows the store's clock (`clock`), as in the other stores: a task
is hidden from the moment its TTL has passed by that clock. The Redis TTL is
relative (the time left, not `PEXPIREAT` of an absolute time) so that a Redis
host whose clock is off by minutes neither drops tasks early nor keeps them
late; only the servers' own clocks need to agree.

Runs on asyncio only (redis-py's asyncio client); needs Redis 7.0 or newer.
"""

from __future__ import annotations

import math
import os
import struct
import time
from typing import TYPE_CHECKING, Any

import msgspec

from .redis_scripts import DEFAULT_TIMEOUT_S, LuaScript, RedisClient, RedisLink
from .tasks import ACTIVE_STATUSES, TaskExistsError, TaskRecord, check_changes

if TYPE_CHECKING:
    from collections.abc import Callable

    from redis.asyncio import Redis

__all__ = ["DEFAULT_PREFIX", "RedisTaskStore"]

DEFAULT_PREFIX = "mcp:tasks:"
"""The key prefix when none is given."""

_encode = msgspec.json.Encoder().encode
_decode_record = msgspec.json.Decoder(TaskRecord).decode
_FIELDS = tuple(f.encode() for f in TaskRecord.__struct_fields__)

# A task is live while `_expires` is absent or after now (ARGV[1]).
_LIVE = "(not {exp} or tonumber({exp}) > tonumber(ARGV[1]))"

# The record as one JSON object, joined from the fields' JSON in Lua: one
# bulk string per task for redis-py to parse, not a reply of 26 (its parser
# is pure Python without hiredis, and per item it dominated `list`).
_AS_JSON = """
local FIELDS = {{{names}}}
local function as_json(key)
  local values = redis.call('HMGET', key, unpack(FIELDS))
  local parts = {{}}
  for i, name in ipairs(FIELDS) do
    parts[i] = '"' .. name .. '":' .. values[i]
  end
  return '{{' .. table.concat(parts, ',') .. '}}'
end
""".format(names=", ".join(f"'{name}'" for name in TaskRecord.__struct_fields__))

_CREATE = f"""
local old = redis.call('HMGET', KEYS[1], '_index', '_entry', '_expires', '_token')
if old[1] then
  if old[4] == ARGV[5] then return 1 end
  if {_LIVE.format(exp="old[3]")} then return 0 end
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', old[1], old[2])
  redis.call('ZREM', KEYS[3], #old[1] .. ':' .. old[1] .. old[2])
end
redis.call('HSET', KEYS[1], '_token', ARGV[5], unpack(ARGV, 6))
local fresh = redis.call('EXISTS', KEYS[2]) == 0
redis.call('ZADD', KEYS[2], 0, ARGV[4])
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[3], #KEYS[2] .. ':' .. KEYS[2] .. ARGV[4])
  if fresh then
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
  else
    redis.call('PEXPIRE', KEYS[2], ARGV[2], 'GT')
  end
end
return 1
"""
"""KEYS: task, owner index, expiry. ARGV: now, ms left to live or '', expiry
(Unix seconds) or '', index entry, the call's token, then the hash's
field/value pairs. 1 when created (by this call, replayed or not)."""

_ACTIVE_CHECK = " or ".join(
    f"rec[1] == '{_encode(s).decode()}'" for s in sorted(ACTIVE_STATUSES)
)
_GET = _AS_JSON + f"""
local rec = redis.call('HMGET', KEYS[1], 'status', '_expires')
if not rec[1] or not {_LIVE.format(exp="rec[2]")} then return false end
return as_json(KEYS[1])
"""
"""KEYS: task. ARGV: now. The record's JSON, or nil when gone or expired."""

_UPDATE = _AS_JSON + f"""
local rec = redis.call('HMGET', KEYS[1], 'status', '_expires', '_token')
if not rec[1] then return false end
if rec[3] == ARGV[2] then return as_json(KEYS[1]) end
if not ({_ACTIVE_CHECK}) then return false end
if not {_LIVE.format(exp="rec[2]")} then return false end
redis.call('HSET', KEYS[1], '_token', ARGV[2], unpack(ARGV, 3))
return as_json(KEYS[1])
"""
"""KEYS: task. ARGV: now, the call's token, then field/value pairs. The
record's JSON after, or nil."""

_LIST = _AS_JSON + f"""
local start = '-'
if ARGV[3] ~= '' then
  local key = ARGV[2] .. ARGV[3]
  local after = redis.call('HMGET', key, '_index', '_entry', '_expires')
  if after[1] ~= KEYS[1] or not {_LIVE.format(exp="after[3]")} then return {{}} end
  start = '(' .. after[2]
end
local want = tonumber(ARGV[4])
local found = {{}}
while #found < want do
  local need = want - #found
  local entries = redis.call('ZRANGE', KEYS[1], start, '+', 'BYLEX', 'LIMIT', 0, need)
  for _, entry in ipairs(entries) do
    local key = ARGV[2] .. string.sub(entry, 9)
    local rec = redis.call('HMGET', key, '_index', '_entry', '_expires')
    if rec[1] == KEYS[1] and rec[2] == entry and {_LIVE.format(exp="rec[3]")} then
      found[#found + 1] = as_json(key)
    else
      redis.call('ZREM', KEYS[1], entry)
    end
  end
  if #entries < need then break end
  start = '(' .. entries[#entries]
end
return found
"""
"""KEYS: owner index. ARGV: now, task key prefix, after id or '', limit.
The live tasks' JSON, in order; members of gone tasks are removed."""

_PURGE = f"""
local due = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0,
  tonumber(ARGV[2]))
local deleted = 0
for _, member in ipairs(due) do
  local colon = string.find(member, ':', 1, true)
  local size = tonumber(string.sub(member, 1, colon - 1))
  local index = string.sub(member, colon + 1, colon + size)
  local entry = string.sub(member, colon + size + 1)
  local key = ARGV[3] .. string.sub(entry, 9)
  local rec = redis.call('HMGET', key, '_entry', '_expires')
  if rec[1] == entry and not {_LIVE.format(exp="rec[2]")} then
    deleted = deleted + redis.call('DEL', key)
  end
  if rec[1] ~= entry or not {_LIVE.format(exp="rec[2]")} then
    redis.call('ZREM', index, entry)
  end
  redis.call('ZREM', KEYS[1], member)
end
return {{deleted, #due}}
"""
"""KEYS: expiry. ARGV: now, batch size, task key prefix. Deletes the expired
tasks of one batch; [how many deleted, how many looked at]."""

_PURGE_BATCH = 500


def _order_key(created_at: float) -> bytes:
    """8 bytes whose byte order is the numeric order of `created_at`."""
    (bits,) = struct.unpack(">Q", struct.pack(">d", created_at))
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | 1 << 63
    return struct.pack(">Q", bits)


def _token() -> bytes:
    """A write's own mark: redis-py sends a command again when the connection
    drops before the reply, and a script that finds its own mark knows it
    already ran (a replayed create must not fail as a taken id, nor a
    replayed finish lose as if another had won)."""
    return os.urandom(12)


def _number(value: float) -> str:
    """A float as text Redis and Lua parse back to the same double."""
    return repr(float(value))


class RedisTaskStore:
    """Tasks in Redis: durable as the Redis is, shared by every server on it.

    Args:
        target: a `redis://` URL (the store makes its client on first use
            and closes it in `aclose`) or a `redis.asyncio.Redis` client
            (left open: the caller owns it). A client must not decode
            responses (`decode_responses=False`, the default).
        prefix: put before every key, to share one Redis among stores.
        clock: Unix seconds now (tests pass their own).
        timeout_s: the socket timeouts of a client made from a URL.

    A Redis out of reach (refused, reset, no reply within the timeout) makes
    an operation raise `StoreUnreachableError` (an `RpcError`, -32603, whose
    message names the store and the URL), never hang.
    """

    def __init__(
        self,
        target: str | Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._link = RedisLink(target, "RedisTaskStore", "task", timeout_s=timeout_s)
        self.prefix = prefix.encode()
        self._clock = clock
        self._create = LuaScript(_CREATE)
        self._get = LuaScript(_GET)
        self._update = LuaScript(_UPDATE)
        self._list = LuaScript(_LIST)
        self._purge = LuaScript(_PURGE)

    def task_key(self, task_id: str) -> bytes:
        """The hash holding task `task_id`."""
        return self.prefix + b"task:" + task_id.encode()

    def index_key(self, owner: str | None) -> bytes:
        """The sorted set listing `owner`'s tasks."""
        if owner is None:
            return self.prefix + b"owner"
        return self.prefix + b"owner:" + owner.encode()

    @property
    def expiry_key(self) -> bytes:
        """The sorted set of tasks with a TTL, by expiry time."""
        return self.prefix + b"expiry"

    async def create(self, record: TaskRecord) -> None:
        index = self.index_key(record.owner)
        entry = _order_key(record.created_at) + record.task_id.encode()
        fields: list[Any] = []
        for name in _FIELDS:
            fields += [name, _encode(getattr(record, name.decode()))]
        fields += [b"_index", index, b"_entry", entry]
        now = self._clock()
        expires_at = record.expires_at
        at_ms = at_s = ""
        if expires_at is not None:
            at_s = _number(expires_at)
            at_ms = str(math.ceil((expires_at - now) * 1000))
            fields += [b"_expires", at_s]
        keys = [self.task_key(record.task_id), index, self.expiry_key]
        args = [_number(now), at_ms, at_s, entry, _token(), *fields]
        with self._link.guard():
            created = await self._create(await self._redis(), keys, args)
        if not created:
            raise TaskExistsError(record.task_id)

    async def get(self, task_id: str) -> TaskRecord | None:
        args = [_number(self._clock())]
        with self._link.guard():
            found = await self._get(await self._redis(), [self.task_key(task_id)], args)
        return None if found is None else _decode_record(found)

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        check_changes(changes)
        args: list[Any] = [_number(self._clock()), _token()]
        for name, value in changes.items():
            args += [name, _encode(value)]
        with self._link.guard():
            client = await self._redis()
            found = await self._update(client, [self.task_key(task_id)], args)
        return None if found is None else _decode_record(found)

    async def list(
        self, owner: str | None, *, after: str | None = None, limit: int = 50
    ) -> list[TaskRecord]:
        if limit <= 0:
            return []
        args = [
            _number(self._clock()),
            self.prefix + b"task:",
            b"" if after is None else after.encode(),
            limit,
        ]
        with self._link.guard():
            found = await self._list(await self._redis(), [self.index_key(owner)], args)
        return [_decode_record(item) for item in found]

    async def purge_expired(self) -> int:
        client = await self._redis()
        deleted = 0
        while True:
            args = [_number(self._clock()), _PURGE_BATCH, self.prefix + b"task:"]
            with self._link.guard():
                gone, seen = await self._purge(client, [self.expiry_key], args)
            deleted += int(gone)
            if int(seen) < _PURGE_BATCH:
                return deleted

    async def aclose(self) -> None:
        """Close the client the store made (not one it was given). Later
        calls raise RuntimeError."""
        await self._link.aclose()

    async def _redis(self) -> RedisClient:
        return await self._link.client()

"""`RedisEventStore`: the events of resumable SSE streams in Redis, shared by
every server using that Redis (a client may resume on another instance).

Keys, all under one prefix (default `mcp:events:`):

- `stream:<id>`, a Redis Stream: one entry per event, field `m` holding the
  message, or field `p` for a priming event (stored, never replayed). A
  position is the entry id (`1700000000000-0`), so the event id is
  `<id>.1700000000000-0` and a replay is one `XRANGE` from an exclusive id.
- `meta:<id>`, a hash: `owner` (only that owner may replay; another owner's
  stream is answered as unknown), `start` (positions of this stream are
  above it) and `evicted` (the newest event trimmed away, `0-0` while none).
- `owner:<owner>`, a set of the owner's streams, for `drop_owner`.

For streams read by other server instances (`tail`), `meta` also names the
`writer` instance and the `requests` the stream answers, and an entry of
field `e` ends the stream (`end`; `ended` set in `meta`, later appends not
kept), after an optional entry `r` (a refusal answering in place of it).

Every key has a TTL (`stream_ttl_s`), renewed by each append, so streams of
a server that died or a session never closed vanish by themselves.

Why the store trims exactly (`XTRIM MAXLEN n`, not `XADD ... MAXLEN ~ n`):
a replay from a cursor the stream no longer holds must fail, never leave a
silent gap, yet one from the newest trimmed event is still whole. That needs
the id of the newest trimmed event, and Redis records none when trimming
(`max-deleted-entry-id` moves on `XDEL` only), so the append script reads
the entry it is about to trim. Approximate trimming would also keep whole
radix nodes (100 entries by default) past a small bound.

Each operation is one Lua script (atomic, one round trip). The scripts touch
keys they do not declare (the owner set; the streams of `drop_owner`), so on
Redis Cluster give the prefix a hash tag (`{mcp}:events:`). Runs on asyncio
only (redis-py's asyncio client); needs Redis 7.0 or newer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final, NamedTuple, cast

import msgspec

from .events import (
    DEFAULT_MAX_EVENTS_PER_STREAM,
    EventsEvictedError,
    Replay,
    StoredEvent,
    UnknownEventError,
    event_id,
    new_stream_id,
    parse_event_id,
)
from .redis_scripts import LuaScript, RedisClient, RedisLink, blocking

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable, Collection

    from redis.asyncio import Redis

__all__ = [
    "ACCEPTED",
    "DEFAULT_PREFIX",
    "DEFAULT_STREAM_TTL_S",
    "END",
    "REFUSAL",
    "RedisEventStore",
    "Tailed",
    "entry_field",
]

DEFAULT_PREFIX: Final = "mcp:events:"
"""The key prefix when none is given."""
DEFAULT_STREAM_TTL_S: Final = 3_600
"""How long a stream outlives its last append, when not told."""

RequestId = int | str
_POSITION = re.compile(r"([0-9]{1,20})-([0-9]{1,20})\Z")
_U64 = 1 << 64

# Compares two entry ids without leading zeros, as text: Lua's numbers are
# doubles, which cannot hold every 64-bit sequence number.
_LESS = """
local function parts(id)
  local dash = string.find(id, '-', 1, true)
  return string.sub(id, 1, dash - 1), string.sub(id, dash + 1)
end
local function less_num(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function less(a, b)
  local am, as = parts(a)
  local bm, bs = parts(b)
  if am ~= bm then return less_num(am, bm) end
  return less_num(as, bs)
end
"""

_CREATE = """
local start = redis.call('XADD', KEYS[1], 'MAXLEN', '0', '*', 'p', '')
redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'start', start, 'evicted', '0-0',
  'writer', ARGV[4], 'requests', ARGV[5])
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return start
"""
"""KEYS: stream, meta, owner set. ARGV: owner, stream id, TTL (s), writer
instance, the requests it answers (a JSON array). Makes
an empty stream (an entry added and trimmed at once, so the stream exists
and its later entries are above `start`); `start`."""

_APPEND = """
local meta = redis.call('HMGET', KEYS[2], 'owner', 'ended')
local owner = meta[1]
if not owner or meta[2] then
  local now = redis.call('TIME')
  return now[1] .. string.format('%06d', tonumber(now[2])):sub(1, 3) .. '-0'
end
local id = redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[2])
local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  local gone = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)
  redis.call('HSET', KEYS[2], 'evicted', gone[#gone][1])
  redis.call('XTRIM', KEYS[1], 'MAXLEN', ARGV[3])
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('EXPIRE', ARGV[5] .. owner, ARGV[4])
return id
"""
"""KEYS: stream, meta. ARGV: field (`m` or `p`), message, bound, TTL (s),
owner set prefix. The new entry's id (for a dropped or ended stream, an id
of now and nothing stored)."""

_FINISH = """
local meta = redis.call('HMGET', KEYS[2], 'owner', 'ended')
if not meta[1] or meta[2] then return 0 end
if ARGV[1] ~= '' then
  local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #newest > 0 and newest[1][1] ~= ARGV[1] then return 1 end
end
for i = 3, #ARGV, 2 do
  redis.call('XADD', KEYS[1], '*', ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[2], 'ended', '1')
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 2
"""
"""KEYS: stream, meta. ARGV: the newest entry id expected ('' for any),
TTL (s), then field, value pairs to add. Ends the stream with those entries,
once: 0 when it is unknown or already ended, 1 when its newest entry is not
the one expected (read it again), 2 when done."""

_ACCEPT = """
local meta = redis.call('HMGET', KEYS[2], 'owner', 'ended')
if not meta[1] or meta[2] then return 0 end
redis.call('XADD', KEYS[1], '*', ARGV[1], '')
return 1
"""
"""KEYS: stream, meta. ARGV: the mark's kind. Marks a stream taken by its
writer; 0 when it is unknown or already ended (its reader gave up)."""

_WATCH = """
local meta = redis.call('HMGET', KEYS[1], 'owner', 'ended', 'writer')
if not meta[1] then return 0 end
if meta[2] or not meta[3] or meta[3] == '' then return 1 end
if redis.call('EXISTS', ARGV[1] .. meta[3]) == 1 then return 1 end
return 2
"""
"""KEYS: meta. ARGV: the liveness key prefix of instances. 0: no such
stream; 1: ended, or its writer alive; 2: its writer is gone, unended."""

_WATCH_MANY = """
local states = {}
for i, key in ipairs(KEYS) do
  local meta = redis.call('HMGET', key, 'owner', 'ended', 'writer')
  if not meta[1] then
    states[i] = 0
  elseif meta[2] or not meta[3] or meta[3] == '' then
    states[i] = 1
  elseif redis.call('EXISTS', ARGV[1] .. meta[3]) == 1 then
    states[i] = 1
  else
    states[i] = 2
  end
end
return states
"""
"""`_WATCH` for each of KEYS (metas), in one step: their states, in order."""

_REPLAY = _LESS + """
local meta = redis.call('HMGET', KEYS[2], 'owner', 'start', 'evicted')
if not meta[1] or meta[1] ~= ARGV[1] then return 0 end
local at = ARGV[2]
if at == '' or not less(meta[2], at) then return 1 end
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local last = meta[2]
if #newest > 0 then last = newest[1][1] end
if less(last, at) then return 1 end
if less(at, meta[3]) then return 2 end
local found = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], '(' .. at, '+')) do
  if entry[2][1] == 'm' then
    found[#found + 1] = entry[1]
    found[#found + 1] = entry[2][2]
  end
end
return found
"""
"""KEYS: stream, meta. ARGV: owner, position ('' when malformed). 0: no
stream of this owner; 1: no event of it; 2: events after it trimmed; else
the messages after it, flat: id, message, id, message..."""

_DROP_OWNER = """
for _, stream in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('DEL', ARGV[1] .. stream, ARGV[2] .. stream)
end
redis.call('DEL', KEYS[1])
return 1
"""
"""KEYS: owner set. ARGV: stream key prefix, meta key prefix."""


END: Final = "e"
"""The kind of the entry ending a stream (no more will be kept)."""
REFUSAL: Final = "r"
"""The kind of an entry answering in place of the stream (a refusal)."""
ACCEPTED: Final = "a"
"""The kind of the mark of a writer that took the stream's work (`accept`)."""


class Tailed(NamedTuple):
    """One entry read by `tail`: its kind (`m` a message, `p` a priming
    event, `r` a refusal, `e` the end), its event id and its value."""

    kind: str
    id: str
    value: bytes


class _Reply(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None


_replies: msgspec.json.Decoder[_Reply | list[_Reply]] = msgspec.json.Decoder(
    _Reply | list[_Reply]
)


def _answered(message: bytes) -> list[RequestId]:
    """The ids of the responses in a stored message."""
    try:
        found = _replies.decode(message)
    except msgspec.DecodeError:
        return []
    items: list[_Reply] = found if isinstance(found, list) else [found]
    return [r.id for r in items if r.method is None and r.id is not None]


def entry_field(fields: Any) -> tuple[str, bytes]:
    """The one (field, value) of a stream entry as redis-py gives it (a
    dict, or a flat list without its response callbacks)."""
    if isinstance(fields, dict):
        name, value = next(iter(cast("dict[bytes, bytes]", fields).items()))
    else:
        name, value = cast("list[bytes]", fields)[:2]
    return name.decode(), value


def _position(text: str) -> str:
    """An entry id as Redis writes it, or '' when `text` is none."""
    found = _POSITION.match(text)
    if found is None:
        return ""
    ms, seq = int(found[1]), int(found[2])
    return f"{ms}-{seq}" if ms < _U64 and seq < _U64 else ""


class RedisEventStore:
    """An `EventStore` in Redis: one Redis Stream per SSE stream.

    Args:
        target: a `redis://` URL (the store makes its client on first use
            and closes it in `aclose`) or a `redis.asyncio.Redis` client
            (left open: the caller owns it), not decoding responses, or the
            `RedisLink` of another store (shared; `aclose` closes it).
        prefix: put before every key, to share one Redis among stores.
        max_events_per_stream: a stream over it loses its oldest events.
        stream_ttl_s: seconds a stream (and its owner's set) outlives its
            last append.
    """

    def __init__(
        self,
        target: str | Redis | RedisLink,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        stream_ttl_s: int = DEFAULT_STREAM_TTL_S,
    ) -> None:
        if max_events_per_stream < 1:
            raise ValueError(
                f"max_events_per_stream must be positive: {max_events_per_stream}"
            )
        if stream_ttl_s < 1:
            raise ValueError(f"stream_ttl_s must be positive: {stream_ttl_s}")
        self._link = (
            target
            if isinstance(target, RedisLink)
            else RedisLink(target, "RedisEventStore", "event")
        )
        self.prefix = prefix.encode()
        self.max_events_per_stream = max_events_per_stream
        self.stream_ttl_s = stream_ttl_s
        self._create = LuaScript(_CREATE)
        self._append = LuaScript(_APPEND)
        self._replay = LuaScript(_REPLAY)
        self._drop_owner = LuaScript(_DROP_OWNER)
        self._finish = LuaScript(_FINISH)
        self._watch = LuaScript(_WATCH)
        self._watch_many = LuaScript(_WATCH_MANY)
        self._accept = LuaScript(_ACCEPT)

    def stream_key(self, stream: str) -> bytes:
        """The Redis Stream holding the events of `stream`."""
        return self.prefix + b"stream:" + stream.encode()

    def meta_key(self, stream: str) -> bytes:
        """The hash naming the owner and bounds of `stream`."""
        return self.prefix + b"meta:" + stream.encode()

    def owner_key(self, owner: str) -> bytes:
        """The set of `owner`'s streams."""
        return self.prefix + b"owner:" + owner.encode()

    async def create_stream(
        self,
        owner: str,
        *,
        writer: str = "",
        requests: Collection[RequestId] = (),
    ) -> str:
        """A new, empty stream of `owner`; its id. `writer` names the server
        instance that will append to it and `requests` the ids of the
        requests it answers, so that a `tail` can end it for them when that
        writer dies first."""
        stream = new_stream_id()
        keys = [self.stream_key(stream), self.meta_key(stream), self.owner_key(owner)]
        args: list[Any] = [
            owner,
            stream,
            self.stream_ttl_s,
            writer,
            msgspec.json.encode(sorted(requests, key=repr)),
        ]
        await self._create(await self._redis(), keys, args)
        return stream

    async def append(self, stream: str, message: bytes | None) -> str:
        """Store one event at the end of `stream`; its event id."""
        field, value = (b"p", b"") if message is None else (b"m", message)
        args: list[Any] = [
            field,
            value,
            self.max_events_per_stream,
            self.stream_ttl_s,
            self.prefix + b"owner:",
        ]
        keys = [self.stream_key(stream), self.meta_key(stream)]
        position = await self._append(await self._redis(), keys, args)
        return event_id(stream, position.decode())

    async def replay(self, last_event_id: str, owner: str) -> Replay:
        """The events of the stream of `last_event_id` that followed it."""
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            raise UnknownEventError(
                f"Last-Event-ID {last_event_id[:80]!r} names no stream of this session"
            )
        stream, text = parsed
        keys = [self.stream_key(stream), self.meta_key(stream)]
        found = await self._replay(await self._redis(), keys, [owner, _position(text)])
        if found == 0:
            raise UnknownEventError(
                f"Last-Event-ID {last_event_id[:80]!r} names no stream of this session"
            )
        if found == 1:
            raise UnknownEventError(
                f"Last-Event-ID {last_event_id[:80]!r} names no event of its stream"
            )
        if found == 2:
            raise EventsEvictedError(
                f"events after Last-Event-ID {last_event_id!r} are no longer kept"
            )
        items = cast("list[bytes]", found)
        events = [
            StoredEvent(event_id(stream, items[i].decode()), items[i + 1])
            for i in range(0, len(items), 2)
        ]
        return Replay(stream, events)

    async def end(
        self,
        stream: str,
        record: bytes | None = None,
        *,
        messages: Collection[bytes] = (),
    ) -> bool:
        """Append `messages`, then the end marker to `stream`, in one step,
        after `record` (an entry of kind `REFUSAL`: what answers in place of
        the stream) when given; later appends are not kept. Whether this
        call ended it (False: unknown or already ended)."""
        pairs: list[Any] = [] if record is None else [REFUSAL, record]
        for message in messages:
            pairs += [b"m", message]
        return await self._end(stream, "", pairs) == 2

    async def accept(self, stream: str) -> bool:
        """Mark `stream` taken by its writer (an entry of kind `ACCEPTED`),
        unless it ended (`end_untouched`: its reader gave up); whether it
        was marked."""
        keys = [self.stream_key(stream), self.meta_key(stream)]
        return bool(await self._accept(await self._redis(), keys, [ACCEPTED]))

    async def end_untouched(self, stream: str, record: bytes) -> bool:
        """End `stream` with `record` (a `REFUSAL`), in one step, only if
        nothing was ever stored in it: the writer has not taken it, and no
        `accept` will succeed after. Whether this call ended it."""
        pairs: list[Any] = [REFUSAL, record]
        return await self._end(stream, "0-0", pairs) == 2

    async def _end(self, stream: str, newest: str, pairs: list[Any]) -> int:
        keys = [self.stream_key(stream), self.meta_key(stream)]
        args: list[Any] = [newest, self.stream_ttl_s, *pairs, END, b""]
        return int(await self._finish(await self._redis(), keys, args))

    async def tail(
        self,
        stream: str,
        after: str = "0-0",
        *,
        alive_prefix: bytes,
        block_s: float = 1.0,
        abandoned: Callable[[RequestId], bytes] | None = None,
    ) -> AsyncGenerator[Tailed]:
        """The entries of `stream` after position `after`, as they come,
        until its end marker (included), then stops; stops at once when the
        stream is unknown (expired, dropped).

        While no entry comes, every `block_s` it checks that the stream's
        writer is alive (its key `alive_prefix + writer` exists); when it is
        gone before the end marker, the stream is ended (atomically, once,
        by whichever reader gets there first) with `abandoned(id)`, an
        error response, for each of its requests not yet answered.
        """
        key = self.stream_key(stream)
        block_ms = max(1, int(block_s * 1000))
        while True:
            client = await self._redis()
            found = await blocking(
                client, "XREAD", "COUNT", 100, "BLOCK", block_ms, "STREAMS", key, after
            )
            if not found:
                state = await self._watch(
                    client, [self.meta_key(stream)], [alive_prefix]
                )
                if state == 0:
                    return
                if state == 2:
                    await self.abandon(stream, abandoned)
                continue
            for entry_id, fields in cast("list[Any]", found)[0][1]:
                after = entry_id.decode()
                kind, value = entry_field(fields)
                yield Tailed(kind, event_id(stream, after), value)
                if kind == END:
                    return

    async def watch(self, streams: list[str], alive_prefix: bytes) -> list[int]:
        """Whether each of `streams` is gone (0), ended or written by a live
        instance (1), or unended with its writer dead (2: `abandon` it); one
        round trip."""
        if not streams:
            return []
        keys = [self.meta_key(stream) for stream in streams]
        found = await self._watch_many(await self._redis(), keys, [alive_prefix])
        return [int(state) for state in cast("list[Any]", found)]

    async def abandon(
        self, stream: str, abandoned: Callable[[RequestId], bytes] | None
    ) -> None:
        """End the stream of a dead writer (atomically, once, whoever gets
        there first), after `abandoned(id)` for each request it still owed."""
        client = await self._redis()
        while True:
            meta = await client.execute_command(
                "HGET", self.meta_key(stream), "requests"
            )
            entries = await client.execute_command(
                "XRANGE", self.stream_key(stream), "-", "+"
            )
            pending: set[RequestId] = set(
                msgspec.json.decode(meta or b"[]", type=list[int | str])
            )
            newest = ""
            for entry_id, fields in entries:
                newest = entry_id.decode()
                kind, value = entry_field(fields)
                if kind == "m":
                    pending.difference_update(_answered(value))
            pairs: list[Any] = []
            if abandoned is not None:
                for request in sorted(pending, key=repr):
                    pairs += [b"m", abandoned(request)]
            if await self._end(stream, newest, pairs) != 1:
                return

    async def drop_owner(self, owner: str) -> None:
        """Forget every stream of `owner`."""
        args = [self.prefix + b"stream:", self.prefix + b"meta:"]
        await self._drop_owner(await self._redis(), [self.owner_key(owner)], args)

    async def aclose(self) -> None:
        """Close the client the store made (not one it was given). Later
        calls raise RuntimeError."""
        await self._link.aclose()

    async def _redis(self) -> RedisClient:
        return await self._link.client()

"""`TailHub`: every stream of a `RedisEventStore` one process follows, read
by one blocking `XREAD` on one connection, whatever their number.

A follower (`Tail`) gets the entries of its stream after a position, in
order, to the end marker included, as `RedisEventStore.tail` gives them; the
hub's reader task reads every followed stream at once (`XREAD BLOCK` over
all their keys, at most 100 entries of each per read) and hands each entry
to its followers' queues. A follower added while the reader blocks is taken
in at once: the reader also reads a wake-up stream of its own
(`<prefix>tails:<id>`), which `follow` appends to.

What a follower gets, besides its entries:

- the end: its stream's end marker (after which it stops), or the stream
  being gone (expired, dropped: it stops at once);
- a dead writer: a stream that brought nothing for `block_s` is checked (one
  script for all of them); one whose writer instance is gone before its end
  marker is ended with `abandoned(id)` for each request it still owed;
- bounds: at most `max_tails` followers in all and `max_tails_per_owner` per
  owner (`open` raises `TailLimitError`); a follower whose queue holds
  `queue_size` entries not taken is ended (`OVERFLOW`: it gets what is
  queued, then stops; its client resumes from the last event it got);
- replacement: a follower opened with `replaces=stream` ends the owner's
  other follower of that stream (`REPLACED`, at once).

Runs on asyncio only, as the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final, cast

from .events import event_id
from .redis_events import END, Tailed, entry_field
from .redis_scripts import blocking

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from .redis_events import RedisEventStore, RequestId
    from .redis_scripts import RedisLink

__all__ = [
    "DEFAULT_MAX_TAILS",
    "DEFAULT_MAX_TAILS_PER_OWNER",
    "DEFAULT_QUEUE_SIZE",
    "ENDED",
    "GONE",
    "OVERFLOW",
    "REPLACED",
    "Tail",
    "TailHub",
    "TailLimitError",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_TAILS: Final = 1_000
"""Followers of one hub, when not told."""
DEFAULT_MAX_TAILS_PER_OWNER: Final = 32
"""Followers of one owner (a session) in one hub, when not told."""
DEFAULT_QUEUE_SIZE: Final = 256
"""Entries a follower may leave untaken before it is ended."""
READ_COUNT: Final = 100
"""Entries of each stream one read takes at most."""
WAKE_TTL_MS: Final = 60_000

ENDED: Final = "ended"
"""Why a follower stopped: its stream's end marker."""
GONE: Final = "gone"
"""Why a follower stopped: its stream is unknown (expired, dropped)."""
OVERFLOW: Final = "overflow"
"""Why a follower stopped: it left `queue_size` entries untaken."""
REPLACED: Final = "replaced"
"""Why a follower stopped: another follower of its stream replaced it."""
CLOSED: Final = "closed"
"""Why a follower stopped: it was closed (or the hub was)."""


class TailLimitError(Exception):
    """A hub at one of its limits: `which` ("max_tails" or
    "max_tails_per_owner") and its value."""

    def __init__(self, which: str, limit: int) -> None:
        super().__init__(f"{which}={limit} reached")
        self.which = which
        self.limit = limit


def _position(entry: str) -> tuple[int, int]:
    ms, _, seq = entry.partition("-")
    return int(ms), int(seq or 0)


class Tail:
    """One follower of a stream (see the module docstring): iterate it, or
    call `next`; close it (a `with` block) to free its place."""

    def __init__(self, hub: TailHub, owner: str, queue_size: int) -> None:
        self.owner = owner
        self.stream: str | None = None
        self.after = "0-0"
        self.stopped: str | None = None
        """Why it stopped (`ENDED`, `GONE`, `OVERFLOW`, `REPLACED`, `CLOSED`),
        None while it follows."""
        self.generation = 0
        self._hub = hub
        self._queue_size = queue_size
        self._entries: deque[Tailed] = deque()
        self._ready = asyncio.Event()
        self._error: BaseException | None = None

    def __enter__(self) -> Tail:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def __aiter__(self) -> Tail:
        return self

    async def __anext__(self) -> Tailed:
        entry = await self.next()
        if entry is None:
            raise StopAsyncIteration
        return entry

    async def next(self) -> Tailed | None:
        """The next entry, waiting for it; None once stopped and drained.

        Raises:
            the error that stopped the hub's reader (Redis unreachable).
        """
        while not self._entries:
            if self._error is not None:
                raise self._error
            if self.stopped is not None:
                return None
            self._ready.clear()
            await self._ready.wait()
        return self._entries.popleft()

    def close(self) -> None:
        """Stop following and free this follower's place."""
        self.stop(CLOSED)
        self._hub.release(self)

    def put(self, entry: Tailed) -> bool:
        """Queue `entry` (the hub does); False when the queue is full (it
        then stops, `OVERFLOW`)."""
        if len(self._entries) >= self._queue_size:
            self.stop(OVERFLOW)
            return False
        self._entries.append(entry)
        self.after = entry.id.rpartition(".")[2]
        self._ready.set()
        return True

    def stop(self, why: str, error: BaseException | None = None) -> None:
        """Stop following (the hub does), for `why`; queued entries are
        still given unless `REPLACED`, then `error` is raised if given."""
        if self.stopped is None:
            self.stopped = why
        if why == REPLACED:
            self._entries.clear()
        if error is not None:
            self._error = error
        self._ready.set()


class TailHub:
    """The followers of one process's streams, read by one reader task on
    one connection of `link` (see the module docstring).

    Args:
        store: the event store whose streams are followed, on `link`.
        link: where the reader's connection comes from (give a link of its
            own: the reader holds one connection while followers remain,
            and its checks and wake-ups take one more briefly).
        alive_prefix: the liveness key prefix of writer instances.
        block_s: how long one read blocks, and how long a stream may bring
            nothing before its writer is checked.
        abandoned: the error response for a request a dead writer owed.
        max_tails, max_tails_per_owner: the followers allowed in all, and
            per owner.
        queue_size: the entries a follower may leave untaken.
    """

    def __init__(
        self,
        store: RedisEventStore,
        link: RedisLink,
        *,
        alive_prefix: bytes,
        block_s: float,
        abandoned: Callable[[RequestId], bytes] | None = None,
        max_tails: int = DEFAULT_MAX_TAILS,
        max_tails_per_owner: int = DEFAULT_MAX_TAILS_PER_OWNER,
        queue_size: int = DEFAULT_QUEUE_SIZE,
    ) -> None:
        for name, value in (
            ("max_tails", max_tails),
            ("max_tails_per_owner", max_tails_per_owner),
            ("queue_size", queue_size),
        ):
            if value < 1:
                raise ValueError(f"{name} must be positive: {value}")
        self.store = store
        self.link = link
        self.alive_prefix = alive_prefix
        self.block_s = block_s
        self.abandoned = abandoned
        self.max_tails = max_tails
        self.max_tails_per_owner = max_tails_per_owner
        self.queue_size = queue_size
        self.wake_key = store.prefix + b"tails:" + secrets.token_hex(8).encode()
        self._open: set[Tail] = set()
        self._per_owner: dict[str, int] = {}
        self._by_key: dict[bytes, list[Tail]] = {}
        self._quiet_since: dict[bytes, float] = {}
        self._generation = 0
        self._armed = -1  # the generation the blocking read was built at
        self._wake_after = b"0-0"
        self._reader: asyncio.Task[None] | None = None
        self._waker: asyncio.Task[None] | None = None
        self._followed = asyncio.Event()
        self._closed = False

    @property
    def count(self) -> int:
        """The open followers."""
        return len(self._open)

    def open(self, owner: str, *, replaces: str | None = None) -> Tail:
        """A new follower of `owner`, taking its place now (so that a caller
        refused here has done nothing yet); `follow` starts it. With
        `replaces`, the owner's follower of that stream is ended first.

        Raises:
            TailLimitError: `max_tails` or `max_tails_per_owner` reached.
        """
        if self._closed:
            raise RuntimeError("the tail hub is closed")
        if replaces is not None:
            key = self.store.stream_key(replaces)
            for old in list(self._by_key.get(key, ())):
                if old.owner == owner:
                    old.stop(REPLACED)
                    self.release(old)
        if len(self._open) >= self.max_tails:
            raise TailLimitError("max_tails", self.max_tails)
        if self._per_owner.get(owner, 0) >= self.max_tails_per_owner:
            raise TailLimitError("max_tails_per_owner", self.max_tails_per_owner)
        tail = Tail(self, owner, self.queue_size)
        self._open.add(tail)
        self._per_owner[owner] = self._per_owner.get(owner, 0) + 1
        return tail

    def follow(self, tail: Tail, stream: str, after: str = "0-0") -> None:
        """Start `tail` on the entries of `stream` after position `after`."""
        if tail not in self._open or tail.stream is not None:
            raise RuntimeError("follow an open tail, once")
        key = self.store.stream_key(stream)
        self._generation += 1
        tail.stream, tail.after, tail.generation = stream, after, self._generation
        self._by_key.setdefault(key, []).append(tail)
        self._quiet_since.setdefault(key, time.monotonic())
        self._followed.set()
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())
        elif self._armed >= 0 and (self._waker is None or self._waker.done()):
            self._waker = asyncio.get_running_loop().create_task(self._wake())

    def release(self, tail: Tail) -> None:
        """Forget `tail` (its place is free)."""
        if tail not in self._open:
            return
        self._open.discard(tail)
        left = self._per_owner.get(tail.owner, 1) - 1
        if left:
            self._per_owner[tail.owner] = left
        else:
            self._per_owner.pop(tail.owner, None)
        self._unfollow(tail)

    def _unfollow(self, tail: Tail) -> None:
        if tail.stream is None:
            return
        key = self.store.stream_key(tail.stream)
        followers = self._by_key.get(key)
        if followers is not None and tail in followers:
            followers.remove(tail)
            if not followers:
                del self._by_key[key]
                self._quiet_since.pop(key, None)

    async def _wake(self) -> None:
        """Make the blocked read start again with the followers added since
        it was built: an entry in the wake-up stream it also reads."""
        try:
            while 0 <= self._armed < self._generation:
                target = self._generation
                client = await self.link.client()
                await client.execute_command(
                    "XADD", self.wake_key, "MAXLEN", "~", 16, "*", "w", b""
                )
                await client.execute_command("PEXPIRE", self.wake_key, WAKE_TTL_MS)
                if self._generation == target:
                    return
        except Exception as error:  # the read ends within block_s anyway
            logger.warning("could not wake the tail reader: %s", error)

    async def _read(self) -> None:
        """The reader: while any follower remains, read them all at once."""
        block_ms = max(1, int(self.block_s * 1000))
        last_watch = time.monotonic()
        while not self._closed:
            if not self._by_key:
                self._followed.clear()
                await self._followed.wait()
                continue
            self._armed = self._generation
            keys = list(self._by_key)
            cursors = [self._cursor(key) for key in keys]
            try:
                client = await self.link.client()
                found = await blocking(
                    client,
                    "XREAD",
                    "COUNT",
                    READ_COUNT,
                    "BLOCK",
                    block_ms,
                    "STREAMS",
                    self.wake_key,
                    *keys,
                    self._wake_after,
                    *cursors,
                )
                armed, self._armed = self._armed, -1
                self._dispatch(cast("list[Any]", found or []), armed)
                if time.monotonic() - last_watch >= self.block_s:
                    last_watch = time.monotonic()
                    await self._watch()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self._armed = -1
                logger.warning("the tail reader failed: %s", error)
                self._fail(error)

    def _cursor(self, key: bytes) -> bytes:
        """Where the read of `key` starts: its least advanced follower."""
        after = min((tail.after for tail in self._by_key[key]), key=_position)
        return after.encode()

    def _dispatch(self, found: list[Any], armed: int) -> None:
        now = time.monotonic()
        for key, entries in found:
            if key == self.wake_key:
                self._wake_after = entries[-1][0]
                continue
            followers = [
                tail
                for tail in self._by_key.get(key, ())
                if tail.generation <= armed  # the read started at its cursor
            ]
            if entries:
                self._quiet_since[key] = now
            for raw_id, fields in entries:
                position = raw_id.decode()
                kind, value = entry_field(fields)
                for tail in followers:
                    if tail.stopped is not None:
                        continue
                    if _position(position) <= _position(tail.after):
                        continue
                    assert tail.stream is not None
                    entry = Tailed(kind, event_id(tail.stream, position), value)
                    if not tail.put(entry) or kind == END:
                        if kind == END:
                            tail.stop(ENDED)
                        self._unfollow(tail)

    async def _watch(self) -> None:
        """Check the streams that brought nothing for `block_s`: a gone
        stream stops its followers, a dead writer's is abandoned."""
        now = time.monotonic()
        quiet = [
            key
            for key, since in self._quiet_since.items()
            if now - since >= self.block_s and key in self._by_key
        ]
        streams: list[str] = []
        for key in quiet:
            stream = self._by_key[key][0].stream
            assert stream is not None
            streams.append(stream)
        states = await self.store.watch(streams, self.alive_prefix)
        for key, stream, state in zip(quiet, streams, states, strict=True):
            self._quiet_since[key] = now
            if state == 0:
                for tail in list(self._by_key.get(key, ())):
                    tail.stop(GONE)
                    self._unfollow(tail)
            elif state == 2:
                await self.store.abandon(stream, self.abandoned)

    def _fail(self, error: BaseException) -> None:
        """Redis failed the read: every follower stops with `error`."""
        for followers in list(self._by_key.values()):
            for tail in list(followers):
                tail.stop(CLOSED, error)
                self._unfollow(tail)

    async def aclose(self) -> None:
        """Stop the reader; every follower stops (`CLOSED`). Makes no Redis
        call (a Redis that stopped answering does not hold it)."""
        self._closed = True
        for tail in list(self._open):
            tail.stop(CLOSED)
            self.release(tail)
        for task in (self._reader, self._waker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._reader = self._waker = None
        # The wake-up stream is left to its TTL: no Redis call at shutdown.

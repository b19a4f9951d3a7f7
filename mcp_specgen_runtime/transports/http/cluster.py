"""`Cluster`: several `McpHttpApp` instances on one Redis serving as one server.

A legacy (2025) session lives on one instance, its home (the one that
answered its `initialize`); any other instance taking one of its requests
forwards it there and relays what the home stores in the shared event store
(see `McpHttpApp`). This module is the Redis side of that:

- identity and liveness: each instance has a random id and a key
  `<prefix>instance:<id>` set with a lease (`lease_s`), renewed every
  lease/3 while it runs (each beat given at most lease/3), over a
  connection no request shares (as is the inbox reader's); an instance
  whose key is gone is dead, and one finding at a beat that its own lease
  lapsed drops its local sessions (others may have claimed them);
- an inbox per instance, the Redis Stream `<prefix>inbox:<id>`: `send`
  XADDs an `Op` to another instance's (refused, `InboxFullError`, when it
  holds `inbox_max` unread ops: none is ever trimmed unread), one reader
  task per instance (XREAD BLOCK) hands each op of its own to the app in
  order, then trims what it read;
- the session registry (`RedisSessions`, keys `<prefix>session:...`) and
  the event store (`RedisEventStore`, keys `<prefix>events:...`);
- the streams this instance relays (`tails`, a `TailHub`): all read by one
  blocking read on a connection of their own, capped in all
  (`max_relayed_streams`) and per session (`max_relayed_streams_per_session`).

Connections (a client made from a URL): requests share a pool of at most
`max_connections`, waiting at most `pool_timeout_s` for one (then a
`ConnectionError` that `pool_exhausted` tells, answered 503); the heartbeat
and inbox reader have two of their own, the relayed streams two more (one
read, one wake-up). Every connection is named `mcp-<instance id>` (as
`CLIENT LIST` shows). Every Redis call has a timeout: socket timeouts
(`timeout_s`; blocking reads wait at most lease/2 beyond it). A client
given is used as it is (the relayed streams then take one connection of it
at a time).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from mcp_specgen_runtime.jsonrpc.envelope import RequestId, error_reply
from mcp_specgen_runtime.stores.redis_events import RedisEventStore, entry_field
from mcp_specgen_runtime.stores.redis_scripts import (
    LuaScript,
    RedisClient,
    RedisLink,
    blocking,
)
from mcp_specgen_runtime.stores.redis_sessions import RedisSessions
from mcp_specgen_runtime.stores.redis_tails import (
    DEFAULT_MAX_TAILS,
    DEFAULT_MAX_TAILS_PER_OWNER,
    TailHub,
)

from ...errors import ErrorCode, RpcError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = [
    "ABANDONED",
    "DEFAULT_LEASE_S",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_POOL_TIMEOUT_S",
    "DEFAULT_PREFIX",
    "Cluster",
    "ForwardedRequest",
    "InboxFullError",
    "Op",
    "abandoned_reply",
    "pool_exhausted",
    "unreachable",
]

logger = logging.getLogger(__name__)

DEFAULT_PREFIX: Final = "mcp:"
DEFAULT_LEASE_S: Final = 10.0
"""How long an instance counts as alive after its last heartbeat."""
DEFAULT_TIMEOUT_S: Final = 5.0
INBOX_MAXLEN: Final = 10_000
DEFAULT_MAX_CONNECTIONS: Final = 64
"""The connections requests share (a client made from a URL)."""
DEFAULT_POOL_TIMEOUT_S: Final = 2.0
"""How long a request waits for one of them before it is refused (503)."""
ABANDONED: Final = (
    "the server instance serving this request stopped before answering; send it again"
)


_SEND = """
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('XADD', KEYS[1], '*', 'o', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
"""KEYS: inbox. ARGV: its bound, the op, its TTL (ms): an inbox no one
reads (its instance gone) vanishes. 0: the inbox is full (nothing added:
an op is never trimmed unread)."""


class InboxFullError(Exception):
    """The inbox of the instance an op was sent to holds `inbox_max` ops
    it has not read yet: it is not keeping up (try again later)."""


class ForwardedRequest(msgspec.Struct, array_like=True):
    """What a forwarded request's `authenticate` hook needs of it (the home
    authenticates it again: its principal is an object, not data)."""

    method: str
    path: str
    headers: list[tuple[str, str]]
    client: tuple[str, int] | None = None
    query: bytes = b""
    scheme: str = "http"


class Op(msgspec.Struct, omit_defaults=True):
    """What an instance asks a session's home to do.

    `op`: "post" (feed `body`; answer its requests into `stream`), "notify"
    (feed `body`, which has no requests), "get" (open the standalone stream
    into `stream`), "detach" (the client of the stream `stream` left: the
    home holds the session for it no longer) or "delete" (end the
    session)."""

    op: str
    session: str
    stream: str = ""
    body: bytes = b""
    version: str | None = None
    """The request's `MCP-Protocol-Version` header."""
    request: ForwardedRequest | None = None
    """The request as its instance received it (a "post")."""


_encode_op = msgspec.msgpack.Encoder().encode
_decode_op = msgspec.msgpack.Decoder(Op).decode


def abandoned_reply(request: RequestId) -> bytes:
    """The answer to a request whose instance died before answering it."""
    return error_reply(request, RpcError(ErrorCode.INTERNAL_ERROR, ABANDONED))


def pool_exhausted(error: BaseException) -> bool:
    """Whether `error` says no pooled connection came in time (all busy)."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    return isinstance(error, RedisConnectionError) and isinstance(
        error.__cause__, asyncio.TimeoutError
    )


def unreachable(error: BaseException) -> bool:
    """Whether `error` says Redis cannot be reached (or timed out)."""
    from redis.exceptions import (
        ConnectionError as RedisConnectionError,
        TimeoutError as RedisTimeoutError,
    )

    return isinstance(
        error, RedisConnectionError | RedisTimeoutError | OSError | asyncio.TimeoutError
    )


class Cluster:
    """One instance's membership in a cluster of `McpHttpApp`s (see the
    module docstring); give it to `McpHttpApp(cluster=...)`, whose event
    store is then `events`.

    Args:
        target: a `redis://` URL (the client is made on first use and
            closed by `aclose`), a `redis.asyncio.Redis` client (not decoding
            responses; left open) or a `RedisLink`.
        prefix: put before every key (give every instance the same).
        lease_s: how long an instance counts as alive after a heartbeat.
        timeout_s: the socket timeout of a client made from a URL.
        inbox_max: how many unread ops an inbox holds before `send` to it
            is refused.
        max_connections: the connections requests share (a URL's client).
        pool_timeout_s: how long a request waits for one of them.
        max_relayed_streams: the streams this instance relays at once
            (forwarded POST answers and GET streams, resumes of streams
            written elsewhere); one more is refused (503).
        max_relayed_streams_per_session: the same, per session.
    """

    def __init__(
        self,
        target: str | RedisClient | RedisLink | Any,
        *,
        prefix: str = DEFAULT_PREFIX,
        lease_s: float = DEFAULT_LEASE_S,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        inbox_max: int = INBOX_MAXLEN,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pool_timeout_s: float = DEFAULT_POOL_TIMEOUT_S,
        max_relayed_streams: int = DEFAULT_MAX_TAILS,
        max_relayed_streams_per_session: int = DEFAULT_MAX_TAILS_PER_OWNER,
    ) -> None:
        if inbox_max < 1:
            raise ValueError(f"inbox_max must be positive: {inbox_max}")
        if max_connections < 1:
            raise ValueError(f"max_connections must be positive: {max_connections}")
        if not pool_timeout_s > 0:
            raise ValueError(f"pool_timeout_s must be positive: {pool_timeout_s}")
        if not lease_s > 0:
            raise ValueError(f"lease_s must be positive: {lease_s}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive: {timeout_s}")
        self.lease_s = lease_s
        self.timeout_s = timeout_s
        self.inbox_max = inbox_max
        self.max_connections = max_connections
        self.pool_timeout_s = pool_timeout_s
        self.instance_id = secrets.token_hex(8)
        options = {
            "socket_timeout": timeout_s + lease_s / 2,
            "socket_connect_timeout": timeout_s,
            "client_name": "mcp-" + self.instance_id,
        }
        self._owns_link = not isinstance(target, RedisLink)
        self.link = (
            target
            if isinstance(target, RedisLink)
            else RedisLink(
                target,
                "Cluster",
                "session",
                {**options, "max_connections": max_connections},
                pool_timeout_s=pool_timeout_s,
            )
        )
        # The heartbeat and the inbox reader get connections of their own
        # (a URL's client only), so that no request traffic starves them;
        # so do the relayed streams' reader and its wake-ups.
        self.control, tails_link = (
            (
                RedisLink(
                    target, "Cluster", "session", {**options, "max_connections": 2}
                ),
                RedisLink(
                    target,
                    "Cluster",
                    "session",
                    {**options, "max_connections": 2},
                    pool_timeout_s=timeout_s,
                ),
            )
            if isinstance(target, str)
            else (self.link, self.link)
        )
        self.prefix = prefix.encode()
        self.alive_prefix = self.prefix + b"instance:"
        self.events = RedisEventStore(self.link, prefix=prefix + "events:")
        # The reader checks and ends streams on its own connections too.
        self.tails = TailHub(
            RedisEventStore(tails_link, prefix=prefix + "events:"),
            tails_link,
            alive_prefix=self.alive_prefix,
            # Half a block: a quiet stream is checked between one and two of
            # its periods after its last entry, so within a block as before.
            block_s=self.block_s / 2,
            abandoned=abandoned_reply,
            max_tails=max_relayed_streams,
            max_tails_per_owner=max_relayed_streams_per_session,
        )
        self.sessions = RedisSessions(
            self.link.client, prefix=prefix, alive_prefix=self.alive_prefix
        )
        self._send = LuaScript(_SEND)
        self._tasks: list[asyncio.Task[None]] = []
        self._reader: asyncio.Task[None] | None = None
        self._lapsed: Callable[[], None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._last_read: bytes = b"0-0"
        self.closed = False

    def limit_relayed(self, total: int | None, per_session: int | None) -> None:
        """Set `max_relayed_streams` (`total`) and
        `max_relayed_streams_per_session` (`per_session`) when given."""
        for name, value in (
            ("max_relayed_streams", total),
            ("max_relayed_streams_per_session", per_session),
        ):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be positive: {value}")
        if total is not None:
            self.tails.max_tails = total
        if per_session is not None:
            self.tails.max_tails_per_owner = per_session

    @classmethod
    def from_url(
        cls, url: str, *, prefix: str = DEFAULT_PREFIX, **options: Any
    ) -> Cluster:
        """A cluster member on the Redis at `url` (see the class for options)."""
        return cls(url, prefix=prefix, **options)

    @property
    def block_s(self) -> float:
        """How long a blocking read waits before checking liveness."""
        return self.lease_s / 2

    def instance_key(self, instance: str) -> bytes:
        """The liveness key of `instance`."""
        return self.alive_prefix + instance.encode()

    def inbox_key(self, instance: str) -> bytes:
        """The inbox stream of `instance`."""
        return self.prefix + b"inbox:" + instance.encode()

    async def client(self) -> RedisClient:
        """The Redis client."""
        return await self.link.client()

    async def start(
        self,
        serve: Callable[[Op], Awaitable[None]],
        lapsed: Callable[[], None] | None = None,
    ) -> None:
        """Announce this instance (its first heartbeat, awaited) and start
        its heartbeat and inbox reader; `serve` gets each op of the inbox,
        in order (it should not wait long: start tasks for long work).
        `lapsed()` is called when a beat finds the lease had lapsed (other
        instances may have claimed this one's sessions meanwhile).
        Later calls wait for the first to finish."""
        if self._started is not None:
            await asyncio.shield(self._started)
            return
        self._lapsed = lapsed
        self._started = asyncio.get_running_loop().create_future()
        try:
            await self.beat()
        except BaseException as error:
            started, self._started = self._started, None
            started.set_exception(error)
            started.exception()  # read: the caller gets it raised
            raise
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._heartbeat()))
        self._reader = loop.create_task(self._read(serve))
        self._started.set_result(None)

    @property
    def started(self) -> bool:
        """Whether `start` has announced this instance."""
        return self._started is not None and self._started.done()

    async def beat(self) -> bool:
        """Renew this instance's lease; whether it still held it (False: it
        had lapsed, or this is the first beat)."""
        ms = max(1, int(self.lease_s * 1000))
        client = await self.control.client()
        previous = await client.execute_command(
            "SET", self.instance_key(self.instance_id), b"1", "PX", ms, "GET"
        )
        return previous is not None

    async def alive(self, instance: str) -> bool:
        """Whether `instance` holds its lease."""
        if not instance:
            return False
        client = await self.client()
        return bool(await client.execute_command("EXISTS", self.instance_key(instance)))

    async def send(self, instance: str, op: Op) -> None:
        """Put `op` in the inbox of `instance` (one round trip).

        Raises:
            InboxFullError: that inbox holds `inbox_max` unread ops.
        """
        args: list[Any] = [self.inbox_max, _encode_op(op), int(self.lease_s * 3000)]
        key = self.inbox_key(instance)
        if not await self._send(await self.client(), [key], args):
            raise InboxFullError(instance)

    async def _heartbeat(self) -> None:
        # Not `while True`: a cancellation landing as a beat times out can
        # come back as an error (redis-py's own timeouts), and the loop would
        # then outlive `aclose`, which awaits it.
        while not self.closed:
            await asyncio.sleep(self.lease_s / 3)
            try:
                # Time-boxed: a late beat must not delay the next one.
                async with asyncio.timeout(self.lease_s / 3):
                    held = await self.beat()
                if not held and self._lapsed is not None:
                    logger.warning("cluster lease lapsed: dropping local sessions")
                    self._lapsed()
            except Exception as error:  # keep beating: Redis may come back
                logger.warning("cluster heartbeat failed: %s", error)

    async def _read(self, serve: Callable[[Op], Awaitable[None]]) -> None:
        key = self.inbox_key(self.instance_id)
        block_ms = max(1, int(self.block_s * 1000))
        while True:
            try:
                client = await self.control.client()
                found = await blocking(
                    client,
                    "XREAD",
                    "COUNT",
                    100,
                    "BLOCK",
                    block_ms,
                    "STREAMS",
                    key,
                    self._last_read,
                )
            except asyncio.CancelledError:
                raise
            except Exception as error:
                logger.warning("cluster inbox read failed: %s", error)
                await asyncio.sleep(self.block_s)
                continue
            entries = cast(
                "list[tuple[bytes, list[bytes]]]", found[0][1] if found else []
            )
            for entry_id, fields in entries:
                self._last_read = entry_id
                await self._serve_one(serve, fields)
            if entries:
                await self._trim(client, key)

    async def _trim(self, client: RedisClient, key: bytes) -> None:
        """Drop the ops read (they count against `inbox_max`)."""
        ms, _, seq = self._last_read.partition(b"-")
        after = ms + b"-" + str(int(seq) + 1).encode()
        try:
            await client.execute_command("XTRIM", key, "MINID", after)
        except Exception as error:  # the next batch trims them
            logger.warning("cluster inbox trim failed: %s", error)

    async def _serve_one(
        self, serve: Callable[[Op], Awaitable[None]], fields: Any
    ) -> None:
        try:
            op = _decode_op(entry_field(fields)[1])
        except (msgspec.DecodeError, IndexError, StopIteration):
            logger.warning("cluster inbox: an unreadable op was dropped")
            return
        try:
            await serve(op)
        except Exception:
            logger.exception("cluster inbox: serving a %s op failed", op.op)

    async def stop_reading(self) -> list[Op]:
        """Stop the inbox reader; the ops still unread, to hand back."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.wait([reader])  # a cancelled caller stays cancelled
        if not self.started:
            return []
        client = await self.client()
        found = await client.execute_command(
            "XRANGE", self.inbox_key(self.instance_id), b"(" + self._last_read, "+"
        )
        ops: list[Op] = []
        for _, fields in cast("list[tuple[bytes, Any]]", found or []):
            with contextlib.suppress(msgspec.DecodeError, IndexError, StopIteration):
                ops.append(_decode_op(entry_field(fields)[1]))
        return ops

    async def aclose(self, *, timeout_s: float | None = None) -> None:
        """Leave the cluster: stop the heartbeat, delete the liveness key
        and the inbox (giving up after `timeout_s`: the lease and the
        inbox's TTL then expire them), close the client made here."""
        self.closed = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.wait([reader])
        if self.started:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(
                    None if timeout_s is None else max(timeout_s, 0.0)
                ):
                    client = await self.client()
                    await client.execute_command(
                        "DEL",
                        self.instance_key(self.instance_id),
                        self.inbox_key(self.instance_id),
                    )
        await self.tails.aclose()
        if self.tails.link is not self.link:
            await self.tails.link.aclose()
        if self.control is not self.link:
            await self.control.aclose()
        if self._owns_link:
            await self.link.aclose()

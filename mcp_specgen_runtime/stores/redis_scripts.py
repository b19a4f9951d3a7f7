"""What the Redis stores share: their connection (`RedisLink`), the typed slice
of a redis-py client they use, Lua scripts run by EVALSHA (each store
operation is one atomic script), and the error of a Redis out of reach.

Every client a link makes has socket timeouts (`DEFAULT_TIMEOUT_S`, or the
URL's own `socket_timeout` / `socket_connect_timeout` query parameters), so a
Redis that stops answering fails a call instead of hanging it."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..errors import ErrorCode, RpcError

if TYPE_CHECKING:
    from collections.abc import Generator

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "LuaScript",
    "RedisClient",
    "RedisLink",
    "StoreUnreachableError",
    "blocking",
    "redacted",
]

DEFAULT_TIMEOUT_S = 5.0
"""Seconds a link's client waits to connect, and for each reply."""


class StoreUnreachableError(RpcError):
    """A store could not reach its Redis: answered -32603 with a message
    saying so (the cause, without credentials, is in the message)."""

    def __init__(self, kind: str, url: str, cause: BaseException) -> None:
        detail = str(cause) or type(cause).__name__
        self.detail = detail
        """What went wrong (the client's words)."""
        super().__init__(
            ErrorCode.INTERNAL_ERROR,
            f"the {kind} store is unreachable (Redis at {redacted(url)}): {detail}",
        )
        self.url = url


def redacted(url: str) -> str:
    """`url` without its password (`redis://user:***@host`)."""
    return re.sub(r"^([a-z+]+://[^:/@]*):[^@/]*@", r"\1:***@", url)


class RedisClient(Protocol):
    """What the stores use of `redis.asyncio.Redis` (typed: redis-py's
    `execute_command` is not)."""

    async def execute_command(self, *args: Any) -> Any: ...

    async def aclose(self) -> None: ...


async def blocking(client: RedisClient, *args: Any) -> Any:
    """Run a blocking command (`XREAD BLOCK`) in a task of its own, which a
    cancelled caller leaves to finish: redis-py cancelled mid-read can hang
    its connection pool; a blocking read returns within its BLOCK time."""
    task = asyncio.ensure_future(client.execute_command(*args))
    task.add_done_callback(_retrieve)
    return await asyncio.shield(task)


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # read, so a failure no one awaits is not logged


class LuaScript:
    """A Lua script run by EVALSHA, loaded again when Redis lost it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(
        self, client: RedisClient, keys: list[Any], args: list[Any]
    ) -> Any:
        from redis.exceptions import NoScriptError

        try:
            return await client.execute_command(
                "EVALSHA", self.sha, len(keys), *keys, *args
            )
        except NoScriptError:
            return await client.execute_command(
                "EVAL", self.source, len(keys), *keys, *args
            )


class RedisLink:
    """A store's client: made on first use from a `redis://` URL, inside the
    running loop (closed by `aclose`), or the `redis.asyncio.Redis` given
    (left open: its caller owns it).

    Args:
        target: the URL or the client.
        options: for a client made from the URL (`socket_timeout`...).
        store: the store's name, for errors ("RedisTaskStore").
        kind: what the store keeps, for errors ("task").
        timeout_s: the socket timeouts of a client made here (the URL's
            query parameters win, and `options` over them); None waits
            forever.
        pool_timeout_s: with it, the client's pool holds at most its
            `max_connections` (an option) and a call waits at most this long
            for a free one (redis-py's `BlockingConnectionPool`; past it,
            `ConnectionError("No connection available.")`); without it, the
            pool opens one more connection whenever all are busy.
    """

    def __init__(
        self,
        target: Any,
        store: str,
        kind: str,
        options: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        pool_timeout_s: float | None = None,
    ) -> None:
        self._options = dict(options or {})
        self.pool_timeout_s = pool_timeout_s
        self._url: str | None = target if isinstance(target, str) else None
        self.timeout_s = timeout_s
        self._client: RedisClient | None = (
            None if isinstance(target, str) else cast("RedisClient", target)
        )
        self._store = store
        self._kind = kind
        self._closed = False

    async def client(self) -> RedisClient:
        """The client, made now if need be.

        Raises:
            RuntimeError: the store is closed, or not running on asyncio.
        """
        if self._closed:
            raise RuntimeError(f"the {self._kind} store is closed")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{self._store} runs on asyncio only (redis-py's asyncio client)"
            ) from None
        if self._client is None:
            from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
            from redis.asyncio.connection import parse_url

            assert self._url is not None
            settings: dict[str, Any] = {
                "socket_timeout": self.timeout_s,
                "socket_connect_timeout": self.timeout_s,
            }
            settings.update(parse_url(self._url))
            settings.update(self._options)
            if self.pool_timeout_s is None:
                pool = ConnectionPool(**settings)
            else:
                pool = BlockingConnectionPool(timeout=self.pool_timeout_s, **settings)
            client = Redis.from_pool(pool)  # closing the client closes the pool
            self._client = cast("RedisClient", client)
        return self._client

    @property
    def url(self) -> str:
        """The URL, or the given client's own address, for messages."""
        if self._url is not None:
            return self._url
        pool: Any = getattr(self._client, "connection_pool", None)
        kwargs: Any = getattr(pool, "connection_kwargs", {})
        return f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"

    @contextlib.contextmanager
    def guard(self) -> Generator[None]:
        """Turn a failure to reach Redis (refused, reset, timed out) into
        `StoreUnreachableError`."""
        from redis.exceptions import (
            ConnectionError as RedisConnectionError,
            TimeoutError as RedisTimeoutError,
        )

        try:
            yield
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise StoreUnreachableError(self._kind, self.url, exc) from exc

    async def aclose(self) -> None:
        """Close the client made here (not one given); later calls fail."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None and self._url is not None:
            await client.aclose()

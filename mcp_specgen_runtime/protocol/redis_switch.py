"""The session side of the Redis switch: what a `ServerSession` shares with
every other instance on one Redis.

`share_redis(session, url)` makes the session keep its tasks in a
`RedisTaskStore` (when its `TaskManager` still has the in-memory store it
made) and, at start-up (`ServerSession.on_start`), take its `requestState`
key and its `tasks/list` cursor key from the secret shared through Redis
(`stores.redis_keys`). The HTTP transport adds the cluster (shared event
store, sessions across instances); `App` adds its list-cursor key.

Which Redis: `resolve_redis_url` applies the one rule every entry point
follows. A URL given wins; `None` given means no Redis, whatever the
environment says; nothing given (`FROM_ENV`) means `$MCP_REDIS_URL`, when
set and not empty. The prefix follows the same rule (`resolve_redis_prefix`,
`$MCP_REDIS_PREFIX`, else "mcp:"), which is how `serve_workers` hands it to
its worker processes.
"""

from __future__ import annotations

import enum
import os
from typing import TYPE_CHECKING, Final

from mcp_specgen_runtime.stores.redis_keys import (
    DEFAULT_PREFIX,
    REQUEST_STATE,
    TASK_CURSOR,
    RedisKeys,
)
from mcp_specgen_runtime.stores.redis_scripts import StoreUnreachableError, redacted

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .session import ServerSession

__all__ = [
    "DEFAULT_PREFIX",
    "FROM_ENV",
    "REDIS_PREFIX_ENV",
    "REDIS_URL_ENV",
    "FromEnv",
    "check_redis",
    "resolve_redis_prefix",
    "resolve_redis_url",
    "share_redis",
]

REDIS_URL_ENV = "MCP_REDIS_URL"
"""The environment variable naming the Redis when no URL is given."""

REDIS_PREFIX_ENV = "MCP_REDIS_PREFIX"
"""The environment variable naming the key prefix when none is given."""


class FromEnv(enum.Enum):
    """The type of `FROM_ENV`."""

    FROM_ENV = "from-env"


FROM_ENV: Final = FromEnv.FROM_ENV
"""A `redis=` left out: take `$MCP_REDIS_URL`."""


def resolve_redis_url(redis: str | FromEnv | None = FROM_ENV) -> str | None:
    """The Redis to use: `redis` when a URL, none when None, else
    `$MCP_REDIS_URL` (an empty value is none)."""
    if redis is FROM_ENV:
        return os.environ.get(REDIS_URL_ENV) or None
    return redis or None


def resolve_redis_prefix(prefix: str | FromEnv = FROM_ENV) -> str:
    """The key prefix to use: `prefix` when given, else `$MCP_REDIS_PREFIX`
    when set and not empty, else `DEFAULT_PREFIX`."""
    if prefix is FROM_ENV:
        return os.environ.get(REDIS_PREFIX_ENV) or DEFAULT_PREFIX
    return prefix


def share_redis(
    session: ServerSession,
    url: str,
    *,
    prefix: str = DEFAULT_PREFIX,
    also: Callable[[RedisKeys], Awaitable[None]] | None = None,
) -> RedisKeys:
    """Make `session` share its keys and tasks through the Redis at `url`
    (see the module docstring); `also(keys)` runs at start-up too, before
    the keys' client is closed. A session already sharing is left alone.

    Keys live under `<prefix>keys:`, tasks under `<prefix>tasks:`.
    """
    if session.redis_keys is not None:
        return session.redis_keys
    keys = RedisKeys(url, prefix=prefix)
    session.redis_keys = keys
    manager = session.tasks
    if manager is not None and manager.default_store:
        from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore

        manager.use_store(RedisTaskStore(url, prefix=prefix + "tasks:"))

    async def load() -> None:
        session.use_state_key(await keys.key(REQUEST_STATE))
        if manager is not None:
            manager.cursor_key = await keys.key(TASK_CURSOR)
        if also is not None:
            await also(keys)
        await keys.aclose()  # the keys are kept; the client is done

    session.on_start(load)
    session.on_close(keys.aclose)
    return keys


def check_redis(url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
    """Reach the Redis at `url` before serving (from synchronous start-up
    code, outside any event loop), making the shared secret if no instance
    did yet.

    Raises:
        SystemExit: one line naming the URL (its password hidden) and what
            went wrong: unreachable, or not a Redis URL.
    """
    import anyio

    async def reach() -> None:
        keys = RedisKeys(url, prefix=prefix)
        try:
            await keys.secret()
        finally:
            await keys.aclose()

    try:
        anyio.run(reach)
    except StoreUnreachableError as exc:
        raise SystemExit(
            f"error: cannot reach Redis at {redacted(url)}: {exc.detail}"
        ) from None
    except ValueError as exc:
        raise SystemExit(f"error: bad Redis URL {redacted(url)}: {exc}") from None

"""`serve_workers`: several uvicorn worker processes on one port, one
server to the clients because they share a Redis.

uvicorn starts each worker in a fresh process, so it takes the app as an
import string naming a factory ("package.module:function", called once per
worker) rather than an object. The workers would share nothing but the
port on their own (legacy sessions, tasks, the keys of cursors and
`requestState`), so more than one needs Redis: the factory's app must use
it (`App` reads `$MCP_REDIS_URL` and `$MCP_REDIS_PREFIX`, which
`serve_workers` sets for the workers, when built without `redis=` and
`redis_prefix=`).
"""

from __future__ import annotations

import os

from mcp_specgen_runtime.protocol.redis_switch import (
    FROM_ENV,
    REDIS_PREFIX_ENV,
    REDIS_URL_ENV,
    FromEnv,
    check_redis,
    resolve_redis_prefix,
)

from .server import DEFAULT_SHUTDOWN_TIMEOUT_S, run_uvicorn

__all__ = ["NEEDS_REDIS", "serve_workers"]

NEEDS_REDIS = (
    "{workers} workers need Redis (--redis URL or ${env}): separate worker "
    "processes share nothing else, neither sessions nor tasks nor keys"
)


def serve_workers(
    factory: str,
    *,
    workers: int,
    redis: str | None,
    redis_prefix: str | FromEnv = FROM_ENV,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    shutdown_timeout_s: float | None = DEFAULT_SHUTDOWN_TIMEOUT_S,
) -> None:
    """Serve the ASGI app `factory` returns in `workers` uvicorn processes
    on `host`:`port` until interrupted. `redis` and `redis_prefix` (left
    out: `$MCP_REDIS_PREFIX` when set, else "mcp:") reach the workers as
    `$MCP_REDIS_URL` and `$MCP_REDIS_PREFIX`.

    Raises:
        ValueError: more than one worker without `redis`, or fewer than one.
        SystemExit: the Redis cannot be reached (one line naming it).
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1: {workers}")
    if workers > 1 and not redis:
        raise ValueError(NEEDS_REDIS.format(workers=workers, env=REDIS_URL_ENV))
    prefix = resolve_redis_prefix(redis_prefix)
    if redis:
        check_redis(redis, prefix=prefix)
        os.environ[REDIS_URL_ENV] = redis  # the workers inherit both
        os.environ[REDIS_PREFIX_ENV] = prefix
    run_uvicorn(
        factory,
        factory=True,
        workers=workers,
        host=host,
        port=port,
        log_level=log_level,
        shutdown_timeout_s=shutdown_timeout_s,
    )

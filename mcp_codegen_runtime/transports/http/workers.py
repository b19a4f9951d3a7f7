"""`serve_workers`: several uvicorn worker processes on one port, one
server to the clients because they share a Redis.

uvicorn starts each worker in a fresh process, so it takes the app as an
import string naming a factory ("package.module:function", called once per
worker) rather than an object. The workers would share nothing but the
port on their own (legacy sessions, tasks, the keys of cursors and
`requestState`), so more than one needs Redis: the factory's app must use
it (`App` reads `$MCP_REDIS_URL`, which `serve_workers` sets for the
workers, when built without `redis=`).
"""

from __future__ import annotations

import math
import os

from mcp_codegen_runtime.protocol.redis_switch import (
    DEFAULT_PREFIX,
    REDIS_URL_ENV,
    check_redis,
)

from .server import DEFAULT_SHUTDOWN_TIMEOUT_S

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
    redis_prefix: str = DEFAULT_PREFIX,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    shutdown_timeout_s: float | None = DEFAULT_SHUTDOWN_TIMEOUT_S,
) -> None:
    """Serve the ASGI app `factory` returns in `workers` uvicorn processes
    on `host`:`port` until interrupted.

    Raises:
        ValueError: more than one worker without `redis`, or fewer than one.
        SystemExit: the Redis cannot be reached (one line naming it).
    """
    import uvicorn

    if workers < 1:
        raise ValueError(f"workers must be at least 1: {workers}")
    if workers > 1 and not redis:
        raise ValueError(NEEDS_REDIS.format(workers=workers, env=REDIS_URL_ENV))
    if redis:
        check_redis(redis, prefix=redis_prefix)
        os.environ[REDIS_URL_ENV] = redis  # the workers inherit it
    uvicorn.run(
        factory,
        factory=True,
        workers=workers,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=(
            None if shutdown_timeout_s is None else math.ceil(shutdown_timeout_s)
        ),
    )

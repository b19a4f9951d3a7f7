"""What the Redis stores share: the typed slice of a redis-py client they use,
and Lua scripts run by EVALSHA (each store operation is one atomic script)."""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

__all__ = ["LuaScript", "RedisClient"]


class RedisClient(Protocol):
    """What the stores use of `redis.asyncio.Redis` (typed: redis-py's
    `execute_command` is not)."""

    async def execute_command(self, *args: Any) -> Any: ...

    async def aclose(self) -> None: ...


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

"""`RedisKeys`: one secret shared by every server instance on a Redis, and
the keys derived from it.

A server signs its list cursors and seals its `requestState` tokens with keys
only it holds; instances behind one load balancer must hold the same ones,
or a cursor or a token minted by one is refused by the next. The first
instance to start stores 32 random bytes under `<prefix>keys:secret`
(`SET NX GET`: written only when absent, and whatever is there is returned,
in one round trip); every instance then uses that secret. It is never
regenerated while it exists: deleting the key (or a Redis that lost its data)
rotates it, and tokens and cursors minted before are then refused.

Each use has its own key, `HMAC-SHA256(secret, purpose)`, so a cursor can
never be mistaken for a token (`REQUEST_STATE`, `LIST_CURSOR`,
`TASK_CURSOR`). A different prefix is a different deployment, with its own
secret.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import TYPE_CHECKING

from .redis_scripts import DEFAULT_TIMEOUT_S, LuaScript, RedisLink

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = [
    "DEFAULT_PREFIX",
    "LIST_CURSOR",
    "REQUEST_STATE",
    "SECRET_BYTES",
    "TASK_CURSOR",
    "RedisKeys",
]

DEFAULT_PREFIX = "mcp:"
"""The key prefix when none is given (the secret is `mcp:keys:secret`)."""
SECRET_BYTES = 32

# A script rather than the command: redis-py parses a SET reply as OK or not,
# losing the value GET asks for.
_SET_NX_GET = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET')"
REQUEST_STATE = "request-state"
"""The purpose of the key sealing 2026 `requestState` tokens."""
LIST_CURSOR = "list-cursor"
"""The purpose of the key signing an `App`'s list cursors."""
TASK_CURSOR = "task-cursor"
"""The purpose of the key signing `tasks/list` cursors."""


class RedisKeys:
    """The secret every instance on one Redis (and prefix) shares.

    Args:
        target: a `redis://` URL (a client is made on first use, closed by
            `aclose`) or a `redis.asyncio.Redis` client (left open).
        prefix: put before the key's name.
        timeout_s: the socket timeouts of a client made from a URL.
    """

    def __init__(
        self,
        target: str | Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._link = RedisLink(target, "RedisKeys", "key", timeout_s=timeout_s)
        self.name = (prefix + "keys:secret").encode()
        self._secret: bytes | None = None
        self._set_nx_get = LuaScript(_SET_NX_GET)

    @property
    def url(self) -> str:
        """Where the secret lives (for messages)."""
        return self._link.url

    async def secret(self) -> bytes:
        """The shared secret: stored now when no instance did yet, else the
        one stored; read once, then kept.

        Raises:
            StoreUnreachableError: Redis cannot be reached.
            ValueError: the key holds something other than 32 bytes.
        """
        if self._secret is None:
            fresh = os.urandom(SECRET_BYTES)
            with self._link.guard():
                client = await self._link.client()
                found = await self._set_nx_get(client, [self.name], [fresh])
            secret = fresh if found is None else bytes(found)
            if len(secret) != SECRET_BYTES:
                raise ValueError(
                    f"{self.name.decode()} does not hold a {SECRET_BYTES}-byte "
                    "secret: delete it to have a new one made"
                )
            self._secret = secret
        return self._secret

    async def key(self, purpose: str) -> bytes:
        """The 32-byte key for one purpose (`REQUEST_STATE`...), the same on
        every instance sharing the secret."""
        secret = await self.secret()
        return hmac.new(secret, purpose.encode(), hashlib.sha256).digest()

    async def aclose(self) -> None:
        """Close the client made here (not one given)."""
        await self._link.aclose()

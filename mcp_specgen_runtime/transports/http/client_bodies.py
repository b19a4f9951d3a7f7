"""Reading and closing the bodies of the HTTP client's responses (httpx).

Every body is read through `chunks`, which closes the byte iterator on the
way out, and every response is closed with `close`, shielded from
cancellation so a cancelled request still returns its connection.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from ...errors import MessageTooLargeError

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

__all__ = ["chunks", "close", "read_body", "read_some"]

logger = logging.getLogger(__name__)


async def read_body(response: httpx.Response, limit: int) -> bytes:
    """The body of `response`, at most `limit` bytes.

    Raises:
        MessageTooLargeError: the body is longer.
    """
    parts: list[bytes] = []
    size = 0
    async with chunks(response) as received:
        async for chunk in received:
            size += len(chunk)
            if size > limit:
                raise MessageTooLargeError(
                    f"HTTP response body over {limit} bytes", limit
                )
            parts.append(chunk)
    return b"".join(parts)


async def read_some(response: httpx.Response, limit: int) -> bytes:
    """Up to `limit` bytes of the body of `response` (errors end the read)."""
    parts: list[bytes] = []
    size = 0
    try:
        async with chunks(response) as received:
            async for chunk in received:
                parts.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
    except httpx.HTTPError as exc:
        logger.debug("error body unreadable: %r", exc)
    return b"".join(parts)[:limit]


@asynccontextmanager
async def chunks(response: httpx.Response) -> AsyncGenerator[AsyncIterator[bytes]]:
    """The body's chunks, the iterator closed on the way out (trio warns of
    an async generator left unfinished)."""
    received = response.aiter_bytes()
    try:
        yield received
    finally:
        aclose: Any = getattr(received, "aclose", None)
        if aclose is not None:
            await aclose()


async def close(response: httpx.Response) -> None:
    """Close `response`, even from a cancelled task."""
    with anyio.CancelScope(shield=True):
        try:
            await response.aclose()
        except httpx.HTTPError as exc:  # pragma: no cover - closing a broken socket
            logger.debug("closing a response failed: %r", exc)

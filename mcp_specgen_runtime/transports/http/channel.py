"""An unbounded in-process channel of messages, lighter than anyio's memory
object streams for the HTTP transport's hot path.

A legacy POST passes two such channels (its body to the session's engine, the
answer back to the POST). anyio's `receive` is a checkpoint: it yields to the
event loop even when a message is waiting, an extra loop pass per message.
`Channel.receive` returns a waiting message at once and only suspends when
there is none. The rest is anyio's contract, so callers keep their handling:

- `send_nowait` after `close_sending` raises `anyio.ClosedResourceError`,
  after `close` `anyio.BrokenResourceError`;
- `receive` raises `anyio.EndOfStream` once the sending side is closed and
  every message was read, `anyio.ClosedResourceError` once the receiving side
  is closed (`close`) (what was queued is dropped); `receive_nowait` raises
  `anyio.WouldBlock` when it would wait.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

import anyio

__all__ = ["Channel"]

T = TypeVar("T")


class Channel(Generic[T]):
    """An unbounded FIFO: `send_nowait` and `close_sending` on one side,
    `receive`, `receive_nowait` and `close` on the other."""

    __slots__ = ("_items", "_receiving", "_sending", "_waiters")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._waiters: list[asyncio.Future[None]] = []
        self._sending = True
        self._receiving = True

    def send_nowait(self, item: T) -> None:
        """Queue `item` (see the module docstring for the errors)."""
        if not self._sending:
            raise anyio.ClosedResourceError
        if not self._receiving:
            raise anyio.BrokenResourceError
        self._items.append(item)
        self._wake()

    def close_sending(self) -> None:
        """No more items; those queued can still be read."""
        self._sending = False
        self._wake()

    def close(self) -> None:
        """Close the receiving side: nothing will be read, what is queued is
        dropped, what comes is refused (as anyio's receive stream `close`)."""
        self._receiving = False
        self._items.clear()
        self._wake()

    def receive_nowait(self) -> T:
        """The next item, if one is waiting."""
        if not self._receiving:
            raise anyio.ClosedResourceError
        if self._items:
            return self._items.popleft()
        if not self._sending:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> T:
        """The next item, waiting for one if need be."""
        while True:
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                pass
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    async def receive_within(self, seconds: float) -> T:
        """The next item, waiting at most `seconds` for one.

        Raises:
            TimeoutError: none came in time (nothing is lost: a later
                `receive` gets the next item).
        """
        try:
            return self.receive_nowait()
        except anyio.WouldBlock:
            pass
        # A timer on the waiter rather than a cancel scope: most answers are
        # there at once or within the first wait, and a timer is cheaper.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            waiter = loop.create_future()
            timer = loop.call_at(deadline, _expire, waiter)
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                if loop.time() >= deadline:
                    raise TimeoutError from None

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)

"""A POST answered from the task that serves it: no stream, no extra task.

The 2026 path (and the stateless legacy one) serve one request per POST, so
the handler can run in the request's own task and its answer be written
straight to ASGI `send` (`DirectAnswer`):

- a result with nothing before it is one JSON response, written once;
- the first notification the handler sends turns the answer into an SSE
  stream (the head, then each message as an event), the result its last
  event;
- what is sent once the answer is over is dropped (a handler's leftover
  tasks), as on a closed stream.

A client going away cancels the request. Most answers are ready within
microseconds, so the disconnect is only watched (a task reading `receive`)
once the answer has lasted `QUICK_ANSWER_S`, or has turned into a stream.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.jsonrpc.serving import serve_request

from ...errors import ProtocolError
from .answers import QUICK_ANSWER_S, reply_status, sse_message
from .asgi import respond, start_sse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_specgen_runtime.jsonrpc.serving import Handler, RequestContext

__all__ = ["DirectAnswer", "answer_direct"]

_watchers: set[asyncio.Task[None]] = set()
"""Disconnect watchers being cancelled: held until they end."""


class DirectAnswer:
    """The `Peer` of a request served in its POST's own task: notifications
    are written to the response at once (see the module docstring)."""

    def __init__(
        self,
        send: Any,
        error_status: Mapping[int, int] | None = None,
        unreachable: str | None = None,
    ) -> None:
        self._send = send
        self._error_status = error_status
        self.unreachable = unreachable
        self.streaming = False
        """Whether the answer turned into an SSE stream."""
        self.over = False
        """Whether the answer was written to its end."""
        self._lock: asyncio.Lock | None = None
        self._watch_soon: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._receive: Any = None
        self._scope: anyio.CancelScope | None = None

    # -- the Peer protocol --

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification on the answer (dropped once it is over)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        from mcp_specgen_runtime.codec.wire import encode

        await self.event(encode(message))

    async def request(
        self,
        method: str,
        params: Any,
        result_type: Any,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - mirrors Connection
    ) -> Any:
        """Refused: nothing can wait for the client's answer here."""
        if self.unreachable is not None:
            raise ProtocolError(f"{method}: {self.unreachable}")
        raise ProtocolError(
            f"{method}: a 2026 request cannot wait for the client; "
            "use request_client (it answers InputRequiredResult)"
        )

    # -- writing --

    async def event(self, message: bytes) -> None:
        """Write one message before the result: the first starts the stream."""
        if self.over:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.over:
                return
            if not self.streaming:
                self.streaming = True
                self._watch_now()
                await start_sse(self._send)
            body = sse_message(message)
            await self._send(
                {"type": "http.response.body", "body": body, "more_body": True}
            )

    async def finish(self, reply: bytes) -> None:
        """Write the result: the whole JSON answer, or the stream's last event."""
        if self._lock is None:
            await self._last(reply)
            return
        async with self._lock:
            await self._last(reply)

    async def _last(self, reply: bytes) -> None:
        if self.over:
            return
        self.over = True
        if self.streaming:
            body = sse_message(reply)
            await self._send(
                {"type": "http.response.body", "body": body, "more_body": False}
            )
            return
        errors = self._error_status
        status = reply_status(reply, errors) if errors else 200
        await respond(self._send, status, reply, "application/json")

    # -- the client going away --

    def watch(self, receive: Any, scope: anyio.CancelScope) -> None:
        """Cancel `scope` when the client goes away, watching from
        `QUICK_ANSWER_S` on (or from the stream's start)."""
        self._receive, self._scope = receive, scope
        loop = asyncio.get_running_loop()
        self._watch_soon = loop.call_later(QUICK_ANSWER_S, self._watch_now)

    def _watch_now(self) -> None:
        if self._watch_soon is not None:
            self._watch_soon.cancel()
            self._watch_soon = None
        if self._watcher is None and self._scope is not None and not self.over:
            self._watcher = asyncio.get_running_loop().create_task(self._disconnect())

    async def _disconnect(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self.over = True
        if self._scope is not None:
            self._scope.cancel()

    def unwatch(self) -> None:
        """Stop watching (the answer is over, or was abandoned)."""
        if self._watch_soon is not None:
            self._watch_soon.cancel()
            self._watch_soon = None
        watcher, self._watcher = self._watcher, None
        if watcher is not None and not watcher.done():
            watcher.cancel()
            _watchers.add(watcher)
            watcher.add_done_callback(_watchers.discard)


async def answer_direct(
    answer: DirectAnswer,
    handler: Handler,
    context: RequestContext,
    params: bytes | None,
    receive: Any,
) -> None:
    """Serve the request of `context` (whose peer is `answer`) in this task
    and write its answer; a client going away cancels it, unanswered."""
    with anyio.CancelScope() as scope:
        answer.watch(receive, scope)
        try:
            reply = await serve_request(handler, context, params)
        finally:
            answer.unwatch()
        await answer.finish(reply)

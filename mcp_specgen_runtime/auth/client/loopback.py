"""`LoopbackCallback`: receives the authorization response on 127.0.0.1.

For command-line apps (RFC 8252 §7.3): it listens on a free loopback port,
its `redirect_uri` is `http://127.0.0.1:PORT/callback`, and awaiting it
returns the parameters of the first request to that path with the flow's
`state`. Connections are served concurrently, each given `READ_TIMEOUT`; the
whole wait is bounded only by the caller (a cancel scope around the flow).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Self

import anyio
from anyio.abc import SocketAttribute, SocketListener

from .interaction import AuthorizationResponse

if TYPE_CHECKING:
    from types import TracebackType

    from anyio.abc import SocketStream

__all__ = ["LoopbackCallback"]

_PAGE = (
    b"<!doctype html><title>Authorized</title>"
    b"<p>You may close this window and return to the application.</p>"
)
_LIMIT = 16384
READ_TIMEOUT = 5.0
"""Seconds a connection has to send its request and read the answer."""


class LoopbackCallback:
    """A one-shot HTTP listener on 127.0.0.1 for the redirect back::

    async with LoopbackCallback() as callback:
        auth = OAuthClientAuth(url, callback=callback,
                               redirect_uri=callback.redirect_uri, ...)
    """

    def __init__(self, *, path: str = "/callback", port: int = 0) -> None:
        self.path = path
        self._port = port
        self._listener: SocketListener | None = None

    @property
    def redirect_uri(self) -> str:
        """The URI to register and send as `redirect_uri`."""
        if self._listener is None:
            raise RuntimeError("enter the LoopbackCallback first")
        port = self._listener.extra(SocketAttribute.local_port)
        return f"http://127.0.0.1:{port}{self.path}"

    async def __aenter__(self) -> Self:
        listeners = await anyio.create_tcp_listener(
            local_host="127.0.0.1", local_port=self._port
        )
        (listener,) = listeners.listeners
        assert isinstance(listener, SocketListener)
        self._listener = listener
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None

    async def __call__(self, state: str) -> AuthorizationResponse:
        """Wait for the redirect and return its parameters."""
        listener = self._listener
        if listener is None:
            raise RuntimeError("enter the LoopbackCallback first")
        got: list[AuthorizationResponse] = []
        async with anyio.create_task_group() as tasks:

            async def serve(stream: SocketStream) -> None:
                async with stream:
                    response = await self._serve(stream, state)
                if response is not None and not got:
                    got.append(response)
                    tasks.cancel_scope.cancel()

            # A connection each in its own task: one that sends nothing (a
            # browser's preconnect) must not keep the redirect waiting.
            while True:
                tasks.start_soon(serve, await listener.accept())
        return got[0]

    async def _serve(
        self, stream: SocketStream, state: str
    ) -> AuthorizationResponse | None:
        """Answer one connection; its parameters if it is the redirect with
        `state` (any local page can request the path, with any other)."""
        with anyio.move_on_after(READ_TIMEOUT):
            target = await _request_target(stream)
            if target is None or target.split("?", 1)[0] != self.path:
                await _answer(stream, b"404 Not Found", b"not found")
                return None
            response = AuthorizationResponse.from_url(target)
            given = (response.state or "").encode()
            if not secrets.compare_digest(given, state.encode()):
                await _answer(stream, b"400 Bad Request", b"not this flow's state")
                return None
            await _answer(stream, b"200 OK", _PAGE)
            return response
        return None


async def _request_target(stream: SocketStream) -> str | None:
    data = b""
    while b"\r\n" not in data and len(data) < _LIMIT:
        try:
            data += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return None
    parts = data.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3 or parts[0] != b"GET":
        return None
    return parts[1].decode("latin-1")


async def _answer(stream: SocketStream, status: bytes, body: bytes) -> None:
    head = (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
    )
    try:
        await stream.send(head + body)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass

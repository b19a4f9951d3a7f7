"""What a `Client` connects to: a command (stdio), an `http(s)://` URL
(Streamable HTTP, falling back to HTTP+SSE), a server in this process (an `App`
or a `ServerSession`, over the memory transport) or a ready transport."""

from __future__ import annotations

import shlex
import typing
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports.memory import memory_pair

if TYPE_CHECKING:
    import os

    import httpx

    from mcp_specgen_runtime.jsonrpc.transport import Transport

__all__ = ["HasLifespan", "HasSession", "Target", "cache_key_of", "open_session"]


@typing.runtime_checkable
class HasSession(Protocol):
    """A server in this process that makes `ServerSession`s (an `App`)."""

    def session(self) -> ServerSession: ...


@typing.runtime_checkable
class HasLifespan(Protocol):
    """A server in this process whose resources are held while a client is
    connected to it (an `App`'s lifespan)."""

    def running(self) -> AbstractAsyncContextManager[Any]: ...


Target: TypeAlias = "str | Sequence[str] | HasSession | ServerSession | Transport"
"""What `Client` connects to."""


def _is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


def _command(target: object) -> list[str] | None:
    if isinstance(target, str):
        return shlex.split(target)
    if isinstance(target, Sequence) and not isinstance(target, bytes):
        items = typing.cast("Sequence[object]", target)
        if all(isinstance(item, str) for item in items):
            return [str(item) for item in items]
    return None


def cache_key_of(target: object) -> str | None:
    """The `VersionCache` key of a target: its URL or command line (None for
    a server in this process or a ready transport)."""
    if _is_url(target):
        return str(target)
    command = _command(target)
    return None if command is None else shlex.join(command)


@asynccontextmanager
async def open_session(
    target: object,
    options: dict[str, Any],
    *,
    auth: httpx.Auth | None = None,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: Any = "inherit",
) -> AsyncGenerator[ClientSession]:
    """A negotiated `ClientSession` to `target`; `options` go to it.

    Raises:
        TypeError: `target` is none of the kinds above.
        ImportError: a URL, and httpx is not installed (the `http` extra).
    """
    if _is_url(target):
        try:
            from mcp_specgen_runtime.transports.http.client import connect_http
        except ImportError as exc:
            if exc.name != "httpx":
                raise
            from mcp_specgen_runtime.transports.http.extra import missing_http_extra

            raise missing_http_extra(exc) from exc

        async with connect_http(
            str(target), auth=auth, headers=headers, **options
        ) as session:
            yield session
        return
    command = _command(target)
    if command is not None:
        from mcp_specgen_runtime.transports.stdio import connect_stdio

        async with connect_stdio(
            command, env=env, cwd=cwd, stderr=stderr, **options
        ) as session:
            yield session
        return
    server: ServerSession | None = None
    held: AbstractAsyncContextManager[Any] = nullcontext()
    if isinstance(target, ServerSession):
        server = target
    elif isinstance(target, HasSession):
        server = target.session()
        if isinstance(target, HasLifespan):
            held = target.running()
    if server is not None:
        async with held:
            client_end, server_end = memory_pair()
            async with (
                Connection(server_end, server.handler()),
                ClientSession(client_end, **options) as session,
            ):
                yield session
        return
    if all(hasattr(target, name) for name in ("send", "receive", "aclose")):
        transport = typing.cast("Transport", target)
        async with ClientSession(transport, **options) as session:
            yield session
        return
    raise TypeError(
        "Client target must be a command, an http(s):// URL, an App or "
        f"ServerSession, or a transport: {target!r}"
    )

"""The HTTP client's fallback to the deprecated HTTP+SSE transport
(2024-11-05), for a server that refuses `initialize` as no Streamable HTTP
endpoint would.

`HttpClientTransport` raises `LegacyServerError` when `initialize` is
answered 400, 404 or 405 without a -32022 naming a version to retry
(`probe.client_refusal`). `connect_http` then calls `legacy_sse_session`: the
deprecated transport at the same URL with the same httpx client,
`legacy_sse.LegacySseClientTransport(url, http_client=...)`, offering the
allowed legacy versions only; without that module it raises the error again,
saying so. The fallback transport is closed by `connect_http`'s exit stack,
not by the session (its `aclose` cancels a task group the session runs
inside).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import anyio

from ...errors import TransportError

if TYPE_CHECKING:
    from contextlib import AsyncExitStack

    import httpx

    from mcp_specgen_runtime.protocol.client import ClientSession

__all__ = ["LegacyServerError", "legacy_sse_session"]


class LegacyServerError(TransportError):
    """The server refused the `initialize` POST with 400, 404 or 405: it does
    not speak Streamable HTTP; it may speak the deprecated HTTP+SSE transport.

    Attributes:
        url: the URL POSTed to.
        status: the HTTP status of the answer.
    """

    def __init__(
        self, url: str, status: int, reason: str, message: str | None = None
    ) -> None:
        super().__init__(
            message
            or f"{url} is no Streamable HTTP endpoint ({reason}); it may speak "
            "the deprecated HTTP+SSE transport"
        )
        self.url = url
        self.status = status


async def legacy_sse_session(
    stack: AsyncExitStack,
    refused: LegacyServerError,
    url: str,
    client: httpx.AsyncClient,
    headers: dict[str, str],
    name: str,
    version: str,
    options: dict[str, Any],
) -> ClientSession:
    """A session over the deprecated HTTP+SSE transport (2024-11-05), at the
    same URL with the same httpx client (`headers`: those the client lacks),
    entered on `stack`.

    Raises:
        LegacyServerError: no fallback: `legacy_sse` is not available, no
            legacy version is allowed, or the HTTP+SSE transport failed too.
    """
    from mcp_specgen_runtime.protocol.client import ClientSession

    try:
        module = importlib.import_module(f"{__package__}.legacy_sse")
    except ImportError:
        module = None
    factory: Any = getattr(module, "LegacySseClientTransport", None)
    if factory is None:
        raise LegacyServerError(
            refused.url,
            refused.status,
            f"HTTP {refused.status} to initialize; the HTTP+SSE fallback "
            "(legacy_sse.LegacySseClientTransport) is not available",
        ) from refused
    probe = ClientSession(_Unused(), name=name, version=version, **options)
    legacy = list(probe.legacy_versions)
    if not legacy:
        raise refused
    if headers:
        transport: Any = factory(url, http_client=client, headers=headers)
    else:
        transport = factory(url, http_client=client)
    if hasattr(transport, "__aenter__"):
        try:
            entered = await stack.enter_async_context(transport)
        except TransportError as exc:
            raise LegacyServerError(
                refused.url,
                refused.status,
                "",
                f"{refused.url} answered initialize with HTTP {refused.status}, "
                f"and the HTTP+SSE fallback failed: {exc}",
            ) from exc
        transport = _ClosedByStack(entered)
    options = {**options, "versions": legacy}
    return await stack.enter_async_context(
        ClientSession(transport, name=name, version=version, **options)
    )


class _ClosedByStack:
    """A transport entered on an exit stack, which also closes it: the
    session's own `aclose` is left out, so the transport's task group is
    only cancelled on its way out (cancelling it from inside the session,
    which runs within that group's scope, would cancel the caller)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def receive(self) -> bytes:
        received: bytes = await self.inner.receive()
        return received

    async def aclose(self) -> None:
        return None


class _Unused:
    """A transport never used: `ClientSession` built only to read the
    versions it allows."""

    async def send(self, message: bytes) -> None:
        raise anyio.ClosedResourceError

    async def receive(self) -> bytes:
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        return None

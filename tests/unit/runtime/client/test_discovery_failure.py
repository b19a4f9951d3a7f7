"""`Client` against a server whose `server/discover` fails (-32603, as a
server that cannot build its result answers), over every transport: the
error says discovery failed and carries the server's error, never a version
mismatch."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import anyio
import pytest

import mcp_specgen_types
from mcp_specgen_runtime import Client
from mcp_specgen_runtime.errors import DiscoveryError, ErrorCode, NegotiationError
from tests.unit.runtime.client.broken_discover_app import make_broken_app
from tests.unit.runtime.transports.http.test_http_client import serving

LIMIT = 20.0
PROGRAM = Path(__file__).with_name("broken_discover_app.py")
ROOT = Path(__file__).resolve().parents[4]
NEWEST = mcp_specgen_types.LATEST_VERSION
"""The newest dated revision, the one a failing server speaks."""

Opener = Callable[[Sequence[str], Sequence[str]], AbstractAsyncContextManager[Client]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def in_process(
    served: Sequence[str], offered: Sequence[str]
) -> AsyncIterator[Client]:
    async with Client(make_broken_app(served), versions=offered) as client:
        yield client


@asynccontextmanager
async def over_stdio(
    served: Sequence[str], offered: Sequence[str]
) -> AsyncIterator[Client]:
    command = [sys.executable, str(PROGRAM), *served]
    async with Client(command, versions=offered, cwd=ROOT, cache=None) as client:
        yield client


@asynccontextmanager
async def over_http(
    served: Sequence[str], offered: Sequence[str]
) -> AsyncIterator[Client]:
    with serving(make_broken_app(served).asgi()) as running:
        async with Client(running.url, versions=offered, cache=None) as client:
            yield client


OPENERS = pytest.mark.parametrize(
    "opener", [in_process, over_stdio, over_http], ids=["memory", "stdio", "http"]
)


@pytest.mark.anyio
@OPENERS
@pytest.mark.parametrize("legacy_too", [True, False], ids=["with-legacy", "modern"])
async def test_a_failed_discover_is_no_version_mismatch(
    opener: Opener, legacy_too: bool
) -> None:
    """The client offers the server's own version: discovery failed."""
    dated = [v for v in mcp_specgen_types.KNOWN_VERSIONS if v != "draft"]
    offered = dated if legacy_too else [NEWEST]
    with anyio.fail_after(LIMIT), pytest.raises(DiscoveryError) as caught:
        async with opener([NEWEST], offered):
            pass
    error = caught.value
    assert isinstance(error, NegotiationError)  # what callers caught before
    assert error.__cause__ is error.error
    assert error.error.code == ErrorCode.INTERNAL_ERROR
    assert str(error).startswith(f"server/discover at {NEWEST} failed: ")
    assert (error.fallback is None) is not legacy_too


@pytest.mark.anyio
@OPENERS
async def test_a_failed_discover_falls_back_alike_on_every_transport(
    opener: Opener,
) -> None:
    """A server of both eras whose discover fails settles on its newest legacy
    revision through `initialize`, whatever the transport."""
    dated = [v for v in mcp_specgen_types.KNOWN_VERSIONS if v != "draft"]
    legacy = [v for v in dated if v < "2026"]
    with anyio.fail_after(LIMIT):
        async with opener([legacy[-1], NEWEST], dated) as client:
            assert client.protocol_version == legacy[-1]
            assert client.negotiated.era == "legacy"
            assert (await client.list_tools()).tools

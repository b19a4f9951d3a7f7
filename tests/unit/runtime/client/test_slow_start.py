"""A modern-only server that starts slower than the client's probe timeout
(an `npx` download, a cold import on a busy machine): the probe goes
unanswered, `initialize` is refused naming the modern versions, and the
client probes once more instead of reporting a version mismatch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_specgen_types
from mcp_specgen_runtime import Client
from mcp_specgen_runtime.errors import NegotiationError

PROGRAM = Path(__file__).with_name("progress_app.py")
ROOT = Path(__file__).resolve().parents[4]
NEWEST = mcp_specgen_types.LATEST_VERSION
LEGACY = "2025-11-25"
STARTUP_S = 1.5
"""How long the server sleeps before it reads its first message."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def slow_server(*versions: str) -> list[str]:
    start = (
        f"import time, runpy, sys; time.sleep({STARTUP_S}); "
        f"sys.argv = [{str(PROGRAM)!r}, *{list(versions)!r}]; "
        f"runpy.run_path({str(PROGRAM)!r}, run_name='__main__')"
    )
    return [sys.executable, "-c", start]


def slow_client(served: str, **options: Any) -> Client:
    """A client of a server speaking only `served`, probing for a third of
    the server's start-up."""
    return Client(
        slow_server(served),
        cwd=ROOT,
        cache=None,
        probe_timeout=STARTUP_S / 3,
        **options,
    )


@pytest.mark.anyio
async def test_a_slow_modern_server_is_probed_again() -> None:
    with anyio.fail_after(30):
        async with slow_client(NEWEST) as client:
            assert client.protocol_version == NEWEST
            result = await client.call_tool("count", {"steps": 1})
            assert result.content[0].text == "counted 1"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_slow_legacy_server_still_settles_on_initialize() -> None:
    with anyio.fail_after(30):
        async with slow_client(LEGACY) as client:
            assert client.protocol_version == LEGACY


@pytest.mark.anyio
async def test_no_common_version_is_still_a_mismatch() -> None:
    with anyio.fail_after(30), pytest.raises(NegotiationError, match="speaks"):
        async with slow_client(NEWEST, versions=[LEGACY]):
            pass

"""`Client` (answering in the newest dated revision's types, offering every
revision) against a server speaking one revision only: the call is converted
to the negotiated revision, progress included, at every revision the
generated conversions reach, over every transport."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import anyio
import msgspec
import pytest

import mcp_specgen_types
from mcp_specgen_runtime import Client
from mcp_specgen_runtime.jsonrpc.dispatch import package_in
from mcp_specgen_types import latest
from tests.unit.runtime.client.progress_app import STEPS, make_app
from tests.unit.runtime.transports.http.test_http_client import serving

LIMIT = 20.0
PROGRAM = Path(__file__).with_name("progress_app.py")
ROOT = Path(__file__).resolve().parents[4]
EVERY = list(mcp_specgen_types.KNOWN_VERSIONS)
"""What the client offers: every revision generated, draft included."""

Opener = Callable[[str], AbstractAsyncContextManager[Client]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def in_process(version: str) -> AsyncIterator[Client]:
    async with Client(make_app([version]), versions=EVERY) as client:
        yield client


@asynccontextmanager
async def over_stdio(version: str) -> AsyncIterator[Client]:
    command = [sys.executable, str(PROGRAM), version]
    async with Client(command, versions=EVERY, cwd=ROOT, cache=None) as client:
        yield client


@asynccontextmanager
async def over_http(version: str) -> AsyncIterator[Client]:
    with serving(make_app([version]).asgi()) as served:
        async with Client(served.url, versions=EVERY, cache=None) as client:
            yield client


@pytest.mark.anyio
@pytest.mark.parametrize("version", EVERY)
@pytest.mark.parametrize(
    "opener", [in_process, over_stdio, over_http], ids=["memory", "stdio", "http"]
)
async def test_a_call_with_progress_at_every_negotiated_revision(
    opener: Opener, version: str
) -> None:
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        heard.append((progress, total, message))

    with anyio.fail_after(LIMIT):
        async with opener(version) as client:
            assert client.protocol_version == version
            result = await client.call_tool(
                "count", {"steps": STEPS}, on_progress=on_progress
            )
    assert isinstance(result, latest.CallToolResult)
    block = result.content[0]
    assert isinstance(block, latest.TextContent)
    assert block.text == f"counted {STEPS}"
    assert [p for p, _, _ in heard] == [float(s + 1) for s in range(STEPS)]
    assert {t for _, t, _ in heard} == {float(STEPS)}
    if has_message(version):
        assert [m for _, _, m in heard] == [f"step {s + 1}" for s in range(STEPS)]
    else:  # the server's notification fits the revision: no message
        assert [m for _, _, m in heard] == [None] * STEPS


def has_message(version: str) -> bool:
    """Whether `version`'s progress notification has a `message` (2024-11-05's
    has none, so the server sends none)."""
    package = package_in(mcp_specgen_types.MODULES, version)
    fields = msgspec.structs.fields(package.ProgressNotificationParams)
    return "message" in {f.encode_name for f in fields}


@pytest.mark.anyio
@pytest.mark.parametrize("written", EVERY)
@pytest.mark.parametrize("version", EVERY)
async def test_a_call_written_against_any_revision_reaches_any_server(
    written: str, version: str
) -> None:
    """The session converts a call with a `_meta` of its own (a progress
    token) from the revision it was written against to the negotiated one."""
    source = package_in(mcp_specgen_types.MODULES, written)
    params = {"name": "count", "arguments": {"steps": 1}, "_meta": {"progressToken": 7}}
    with anyio.fail_after(LIMIT):
        async with in_process(version) as client:
            result = await client.session.request(
                "tools/call", params, source.CallToolResult
            )
    assert isinstance(result, source.CallToolResult)
    block = result.content[0]
    assert isinstance(block, source.TextContent)
    assert block.text == "counted 1"

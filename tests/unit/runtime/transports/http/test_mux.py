"""`ResponseStream` and `SessionMux` on their own: a stream's buffer is bounded,
and a client that stops reading loses its stream, never the engine's time."""

from __future__ import annotations

import anyio
import pytest

from mcp_codegen_runtime.transports.http.mux import (
    DEFAULT_STREAM_BUFFER,
    ResponseStream,
    SessionMux,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def notification(n: int) -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}' % n


async def drained(stream: ResponseStream) -> list[bytes]:
    read: list[bytes] = []
    while True:
        try:
            read.append(await stream.messages.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            stream.end()
            return read


@pytest.mark.anyio
async def test_a_stream_whose_buffer_fills_is_closed_after_what_it_holds() -> None:
    stream = ResponseStream(frozenset({1}), buffer=2)
    for n in range(3):
        stream.put(notification(n))  # never waits: the third closes it
    assert stream.overflowed
    assert await drained(stream) == [notification(0), notification(1)]


@pytest.mark.anyio
async def test_a_client_that_does_not_read_never_blocks_the_engine() -> None:
    mux = SessionMux()
    mux.standalone = ResponseStream()
    with anyio.fail_after(5):
        for n in range(DEFAULT_STREAM_BUFFER + 10):
            await mux.send(notification(n))
    assert mux.standalone.overflowed
    assert len(await drained(mux.standalone)) == DEFAULT_STREAM_BUFFER
    await mux.aclose()

"""The in-memory transport pair: whole messages both ways, anyio end-of-stream."""

from __future__ import annotations

import anyio
import pytest

from mcp_specgen_runtime.transports import MemoryTransport, Transport, memory_pair


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_messages_travel_both_ways_whole_and_in_order() -> None:
    a, b = memory_pair(max_buffer_size=4)
    with anyio.fail_after(5):
        await a.send(b'{"n":1}')
        await a.send(b'{"n":2}')
        await b.send(b"[]")
        assert await b.receive() == b'{"n":1}'
        assert await b.receive() == b'{"n":2}'
        assert await a.receive() == b"[]"
    await a.aclose()
    await b.aclose()


@pytest.mark.anyio
async def test_the_default_pair_hands_messages_over_directly() -> None:
    a, b = memory_pair()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(a.send, b"{}")
            assert await b.receive() == b"{}"
    await a.aclose()
    await b.aclose()


@pytest.mark.anyio
async def test_closing_one_end_is_end_of_stream_for_the_other() -> None:
    a, b = memory_pair(max_buffer_size=1)
    with anyio.fail_after(5):
        await a.send(b"{}")
        await a.aclose()
        await a.aclose()  # idempotent
        assert await b.receive() == b"{}"
        with pytest.raises(anyio.EndOfStream):
            await b.receive()
        with pytest.raises(anyio.BrokenResourceError):
            await b.send(b"{}")
        with pytest.raises(anyio.ClosedResourceError):
            await a.send(b"{}")
        with pytest.raises(anyio.ClosedResourceError):
            await a.receive()
    await b.aclose()


@pytest.mark.anyio
async def test_closing_wakes_a_pending_receive_on_the_same_end() -> None:
    a, b = memory_pair()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:

            async def receive() -> None:
                with pytest.raises(anyio.ClosedResourceError):
                    await a.receive()

            tasks.start_soon(receive)
            await anyio.wait_all_tasks_blocked()
            await a.aclose()
    await b.aclose()


def test_memory_transports_satisfy_the_protocol() -> None:
    a, b = memory_pair()
    ends: list[Transport] = [a, b]
    assert all(isinstance(end, MemoryTransport) for end in ends)
    anyio.run(a.aclose)
    anyio.run(b.aclose)

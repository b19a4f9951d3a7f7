"""`Channel`: anyio's memory stream contract, without a loop pass per message."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from mcp_specgen_runtime.transports.http.channel import Channel

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_items_come_out_in_order_and_a_receiver_waits_for_one() -> None:
    channel: Channel[int] = Channel()
    got: list[int] = []

    async def read() -> None:
        got.append(await channel.receive())
        got.append(await channel.receive())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await anyio.lowlevel.checkpoint()
            channel.send_nowait(1)
            channel.send_nowait(2)
    assert got == [1, 2]


def test_a_waiting_item_is_received_without_suspending() -> None:
    channel: Channel[int] = Channel()
    channel.send_nowait(7)
    step = channel.receive()
    with pytest.raises(StopIteration) as done:
        step.send(None)  # runs to its end at once: no trip through the loop
    assert done.value.value == 7


async def test_closing_the_sender_ends_the_stream_after_what_is_queued() -> None:
    channel: Channel[int] = Channel()
    channel.send_nowait(1)
    channel.close_sending()
    assert await channel.receive() == 1
    with pytest.raises(anyio.EndOfStream):
        await channel.receive()
    with pytest.raises(anyio.ClosedResourceError):
        channel.send_nowait(2)


async def test_closing_the_receiver_drops_and_refuses() -> None:
    channel: Channel[int] = Channel()
    channel.send_nowait(1)
    channel.close()
    with pytest.raises(anyio.ClosedResourceError):
        await channel.receive()
    with pytest.raises(anyio.BrokenResourceError):
        channel.send_nowait(2)


async def test_receive_nowait_would_block_when_empty() -> None:
    channel: Channel[int] = Channel()
    with pytest.raises(anyio.WouldBlock):
        channel.receive_nowait()


@pytest.mark.parametrize(
    ("close", "expected"),
    [("close_sending", anyio.EndOfStream), ("close", anyio.ClosedResourceError)],
)
async def test_a_waiting_receiver_is_woken_by_either_close(
    close: str, expected: type[Exception]
) -> None:
    channel: Channel[int] = Channel()
    errors: list[type[Exception]] = []

    async def read() -> None:
        try:
            await channel.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError) as exc:
            errors.append(type(exc))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await anyio.lowlevel.checkpoint()
            getattr(channel, close)()
    assert errors == [expected]


async def test_a_cancelled_receive_leaves_the_channel_usable() -> None:
    channel: Channel[int] = Channel()
    with anyio.move_on_after(0.01):
        await channel.receive()
    channel.send_nowait(3)
    with anyio.fail_after(5):
        assert await channel.receive() == 3


async def test_receive_within_gives_up_without_losing_anything() -> None:
    channel: Channel[int] = Channel()
    with pytest.raises(TimeoutError):
        await channel.receive_within(0.01)
    channel.send_nowait(4)
    assert await channel.receive_within(0.01) == 4


async def test_receive_within_gets_what_comes_while_it_waits() -> None:
    channel: Channel[int] = Channel()
    got: list[int] = []

    async def read() -> None:
        got.append(await channel.receive_within(60))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await anyio.lowlevel.checkpoint()
            channel.send_nowait(5)
    assert got == [5]


async def test_receive_within_ends_with_the_stream() -> None:
    channel: Channel[int] = Channel()
    channel.close_sending()
    with pytest.raises(anyio.EndOfStream):
        await channel.receive_within(60)

"""The stdio transport in push mode (`StdioTransport.push`, asyncio on pipes):
lines handed over from the reader's callback, held answers written together,
and a `Connection` served that way."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import stdio
from mcp_specgen_runtime.transports.lines import Pushing
from mcp_specgen_runtime.transports.stdio import (
    PIPE_GROWTH,
    LineTooLongError,
    StdioTransport,
    TruncatedMessageError,
    _FdReader,
    _FdWriter,
)

LIMIT = 10.0
"""Seconds any one test may take."""

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pipes")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Pipes:
    """A transport reading one pipe and writing another, with our ends."""

    def __init__(self, max_line_length: int = 1 << 20) -> None:
        self.in_read, self.in_write = os.pipe()
        self.out_read, self.out_write = os.pipe()
        os.set_blocking(self.out_read, False)
        self.reader = _FdReader(self.in_read)
        self.writer = _FdWriter(self.out_write)
        self.transport = StdioTransport(
            self.reader, self.writer, max_line_length=max_line_length
        )

    def written(self) -> bytes:
        """What the transport wrote so far (without waiting)."""
        found = bytearray()
        while True:
            try:
                chunk = os.read(self.out_read, 1 << 20)
            except BlockingIOError:
                return bytes(found)
            if not chunk:
                return bytes(found)
            found += chunk

    async def close(self) -> None:
        await self.transport.aclose()
        for fd in (self.in_read, self.in_write, self.out_read, self.out_write):
            try:
                os.close(fd)
            except OSError:
                pass


@asynccontextmanager
async def pipes(max_line_length: int = 1 << 20) -> AsyncGenerator[Pipes]:
    made = Pipes(max_line_length)
    try:
        with anyio.fail_after(LIMIT):
            yield made
    finally:
        await made.close()


async def until(condition: Callable[[], bool]) -> None:
    """Poll `condition` (the test's time limit bounds the wait)."""
    for _ in range(1_000_000):
        if condition():
            return
        await anyio.sleep(0.001)


# --- the transport ------------------------------------------------------------


@pytest.mark.anyio
async def test_lines_are_pushed_as_they_are_read_and_the_end_is_told() -> None:
    async with pipes() as ends:
        got: list[bytes] = []
        pushing = ends.transport.push(got.append, pytest.fail)
        assert pushing is not None
        os.write(ends.in_write, b'{"a":1}\r\n\n  \n{"b":')
        await until(lambda: len(got) == 1)
        os.write(ends.in_write, b"2}\n")
        await until(lambda: len(got) == 2)
        assert got == [b'{"a":1}', b'{"b":2}']
        with pytest.raises(anyio.BusyResourceError):
            await ends.transport.receive()
        os.close(ends.in_write)
        assert isinstance(await pushing.ended, anyio.EndOfStream)


@pytest.mark.anyio
async def test_over_long_and_truncated_lines_are_told_as_in_pull_mode() -> None:
    async with pipes(max_line_length=10) as ends:
        got: list[bytes] = []
        too_long: list[LineTooLongError] = []
        pushing = ends.transport.push(got.append, too_long.append)
        assert pushing is not None
        os.write(ends.in_write, b'{"id":7,' + b"x" * 30 + b"}\nok\nrest")
        os.close(ends.in_write)
        ended = await pushing.ended
        assert got == [b"ok"]
        assert [error.head[:7] for error in too_long] == [b'{"id":7']
        assert isinstance(ended, TruncatedMessageError)


@pytest.mark.anyio
async def test_a_paused_push_keeps_the_rest_of_what_it_read_for_resume() -> None:
    async with pipes() as ends:
        got: list[bytes] = []
        pushing: Pushing | None = None

        def take(line: bytes) -> None:
            got.append(line)
            if len(got) == 1:
                assert pushing is not None
                pushing.pause()

        pushing = ends.transport.push(take, pytest.fail)
        assert pushing is not None
        os.write(ends.in_write, b"1\n2\n3\n")  # one read: one callback
        await until(lambda: len(got) == 1)
        await anyio.lowlevel.checkpoint()
        assert got == [b"1"]
        pushing.resume()
        await until(lambda: len(got) == 3)
        os.write(ends.in_write, b"4\n")
        await until(lambda: len(got) == 4)
        assert got == [b"1", b"2", b"3", b"4"]


@pytest.mark.anyio
async def test_no_push_where_the_reader_cannot() -> None:
    async with pipes() as ends:
        os.write(ends.in_write, b"1\n2\n")
        assert await ends.transport.receive() == b"1"
        # A line already read and buffered is `receive`'s to hand out.
        assert ends.transport.push(pytest.fail, pytest.fail) is None
        assert await ends.transport.receive() == b"2"
    with tempfile.TemporaryFile() as file:
        file.write(b"{}\n")
        file.seek(0)
        reader = _FdReader(file.fileno())
        writer = _FdWriter(os.dup(file.fileno()))
        transport = StdioTransport(reader, writer)
        try:
            assert transport.push(pytest.fail, pytest.fail) is None
            assert await transport.receive() == b"{}"
        finally:
            await transport.aclose()
            os.close(writer._fd.fd)


@pytest.mark.parametrize("anyio_backend", ["trio"])
@pytest.mark.anyio
async def test_no_push_on_trio() -> None:
    async with pipes() as ends:
        assert ends.transport.push(pytest.fail, pytest.fail) is None


# --- the writer -----------------------------------------------------------------


@pytest.mark.anyio
async def test_held_messages_go_out_together_at_release() -> None:
    async with pipes() as ends:
        assert ends.writer.hold()
        await ends.transport.send(b'{"a":1}')
        await ends.transport.send(b'{"b":2}')
        assert ends.written() == b""
        ends.writer.release()
        assert ends.written() == b'{"a":1}\n{"b":2}\n'
        await ends.transport.send(b"{}")
        assert ends.written() == b"{}\n"


@pytest.mark.anyio
async def test_held_messages_the_pipe_cannot_take_at_once_keep_their_order() -> None:
    async with pipes() as ends:
        big = [bytes([65 + n]) * 200_000 for n in range(3)]
        assert ends.writer.hold()
        for message in big:
            await ends.transport.send(message)
        ends.writer.release()
        sending = [b"after"]
        received = bytearray()

        async def send_after() -> None:
            await ends.transport.send(sending[0])

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(send_after)
            expected = b"".join(m + b"\n" for m in big) + b"after\n"
            while len(received) < len(expected):
                await anyio.wait_readable(ends.out_read)
                received += ends.written()
        assert bytes(received) == expected


def test_nothing_is_held_where_writes_are_not_polled() -> None:
    with tempfile.TemporaryFile() as file:
        writer = _FdWriter(file.fileno())
        assert not writer.hold()


async def feed(fd: int, data: bytes) -> None:
    """Write all of `data` to a pipe without blocking the event loop."""
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        await anyio.wait_writable(fd)
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            pass


# --- a connection served by push ------------------------------------------------


def pings(*ids: int) -> bytes:
    return b"".join(
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}).encode() + b"\n"
        for n in ids
    )


@pytest.mark.anyio
async def test_the_answers_to_what_one_read_brought_go_out_in_one_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writes: list[int] = []
    real_write, real_writev = os.write, os.writev

    def count_write(fd: int, data: Any) -> int:
        writes.append(fd)
        return real_write(fd, data)

    def count_writev(fd: int, buffers: Any) -> int:
        writes.append(fd)
        return real_writev(fd, buffers)

    async with pipes() as ends:
        connection = Connection(ends.transport)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(connection.run)
            monkeypatch.setattr(os, "write", count_write)
            monkeypatch.setattr(os, "writev", count_writev)
            real_write(ends.in_write, pings(1, 2, 3, 4, 5))
            replies: list[Any] = []
            while len(replies) < 5:
                await anyio.wait_readable(ends.out_read)
                replies += [json.loads(line) for line in ends.written().splitlines()]
            monkeypatch.undo()
            assert [reply["id"] for reply in replies] == [1, 2, 3, 4, 5]
            assert writes.count(ends.out_write) == 1
            os.close(ends.in_write)
            await connection.wait_closed()


@pytest.mark.anyio
async def test_a_pushed_connection_stops_reading_while_its_answers_wait() -> None:
    """The peer never reads: three long answers fill the pipe, and the
    engine's own answers to the bad lines after them wait; past
    `max_in_flight` of those, the rest of what was read waits too. Once the
    peer reads, every line is answered, in order."""
    async with pipes() as ends:
        connection = Connection(ends.transport, max_in_flight=4)
        name = "m" * 30_000  # "Method not found: mmm...": long answers
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(connection.run)
            requests = [
                json.dumps({"jsonrpc": "2.0", "id": n, "method": name}).encode()
                for n in range(3)
            ]
            await feed(ends.in_write, b"\n".join(requests) + b"\n")
            await feed(ends.in_write, b"x\n" * 40)  # each -32700
            await until(lambda: connection._answering >= 4)
            await anyio.sleep(0.05)
            assert connection._answering == 4
            received = bytearray()
            while received.count(b"\n") < 43:
                await anyio.wait_readable(ends.out_read)
                received += ends.written()
            codes = [
                json.loads(reply)["error"]["code"]
                for reply in bytes(received).splitlines()
            ]
            assert codes == [-32601] * 3 + [-32700] * 40
            os.close(ends.in_write)
            await connection.wait_closed()


# --- large messages -------------------------------------------------------------


def pipe_size(fd: int) -> int:
    size: int = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    return size


linux_pipes = pytest.mark.skipif(
    not hasattr(fcntl, "F_GETPIPE_SZ"), reason="Linux pipe sizes"
)


@linux_pipes
@pytest.mark.anyio
async def test_a_large_message_grows_the_pipes_it_crosses_and_small_ones_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tuned: list[bool] = []
    monkeypatch.setattr(stdio, "keep_freed_memory", lambda: tuned.append(True))
    async with pipes() as ends:
        before = pipe_size(ends.out_write)
        got: list[bytes] = []
        assert ends.transport.push(got.append, pytest.fail) is not None
        await ends.transport.send(b'"small"')
        await feed(ends.in_write, b'"small"\n')
        await until(lambda: len(got) == 1)
        assert pipe_size(ends.out_write) == pipe_size(ends.in_write) == before
        assert not tuned
        large = b'"' + b"x" * 300_000 + b'"'
        await ends.transport.send(large)  # fits the grown pipe: no reader needed
        assert pipe_size(ends.out_write) == PIPE_GROWTH
        assert tuned  # malloc keeps the pages of large messages
        assert ends.written() == b'"small"\n' + large + b"\n"
        await feed(ends.in_write, large + b"\n")
        await until(lambda: len(got) == 2)
        assert got[1] == large
        assert pipe_size(ends.in_write) == PIPE_GROWTH

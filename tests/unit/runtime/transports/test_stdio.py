"""The stdio transport: line framing, a real server subprocess, client shutdown."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream

from mcp_specgen_runtime.errors import (
    MessageTooLargeError,
    RpcError,
    TransportError,
)
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import Transport
from mcp_specgen_runtime.transports.lines import READ_CHUNK
from mcp_specgen_runtime.transports.stdio import (
    DEFAULT_MAX_LINE_LENGTH,
    EXIT_REPORT_STDERR,
    LineReader,
    LineTooLongError,
    StdioClientTransport,
    StdioTransport,
    TruncatedMessageError,
    _FdReader,
    _FdWriter,
    stdio_client,
)
from mcp_specgen_types import v2025_11_25 as rev

PROGRAMS = Path(__file__).parent / "stdio_programs"
LIMIT = 10.0
"""Seconds any one test may take (child processes start in about 0.2 s)."""
QUICK = (0.2, 0.2)
"""Shutdown timeouts for children expected to need the signals."""

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Both backends: asyncio reads through the selector's callbacks, others
    through `anyio.wait_readable`."""
    backend: str = request.param
    return backend


def program(name: str, *args: str) -> list[str]:
    return [sys.executable, str(PROGRAMS / f"{name}.py"), *args]


def ping(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()


# --- framing over in-memory streams ---------------------------------------------


class Chunks(ByteReceiveStream):
    """Hands out the given chunks, then end of stream."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)
        self.closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)

    async def aclose(self) -> None:
        self.closed = True


class Collect(ByteSendStream):
    """Keeps what is sent, in two halves with a checkpoint between them, so
    that unserialised concurrent sends would interleave."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.closed = False

    async def send(self, item: bytes) -> None:
        half = len(item) // 2
        self.data += item[:half]
        await anyio.lowlevel.checkpoint()
        self.data += item[half:]

    async def aclose(self) -> None:
        self.closed = True


async def lines(reader: LineReader) -> list[bytes | str]:
    """Every line until end of stream; errors as their class names."""
    found: list[bytes | str] = []
    while True:
        try:
            found.append(await reader.receive_line())
        except anyio.EndOfStream:
            return found
        except TransportError as exc:
            found.append(type(exc).__name__)


@pytest.mark.anyio
async def test_lines_are_split_joined_across_chunks_and_cleaned() -> None:
    reader = LineReader(
        Chunks(
            b'{"a":1}\n{"b"', b':2}\r\n\n  \r\n{"c":', b"", b"3}\n\t\n", b'{"d":4}\n'
        )
    )
    with anyio.fail_after(LIMIT):
        assert await lines(reader) == [b'{"a":1}', b'{"b":2}', b'{"c":3}', b'{"d":4}']
        with pytest.raises(anyio.EndOfStream):
            await reader.receive_line()


@pytest.mark.anyio
async def test_an_over_long_line_is_refused_and_the_reader_resumes_after_it() -> None:
    long_line = b"x" * 25
    reader = LineReader(
        Chunks(
            b"0123456789\r\n",  # exactly the limit, CRLF excluded
            b"01234567890\n",  # one byte over, all in one chunk
            long_line[:12],  # over the limit before its end arrives...
            long_line[12:] + b"\n",  # ...the rest is discarded
            b"ok\n",
        ),
        max_line_length=10,
    )
    with anyio.fail_after(LIMIT):
        assert await lines(reader) == [
            b"0123456789",
            "LineTooLongError",
            "LineTooLongError",
            b"ok",
        ]


@pytest.mark.anyio
async def test_over_long_lines_are_refused_keeping_only_their_ends() -> None:
    body = bytes(range(48, 58)) * 1000
    stream = Chunks(*[body[n : n + 1000] for n in range(0, 10_000, 1000)], b"\r\n")
    reader = LineReader(stream, max_line_length=4000)
    with anyio.fail_after(LIMIT):
        with pytest.raises(LineTooLongError, match="more than 4000 bytes") as caught:
            await reader.receive_line()
        # Refused at the line's end, to know its tail, holding no more than
        # the limit meanwhile.
        assert (caught.value.head, caught.value.tail) == (body[:4096], body[-4096:])
        assert caught.value.limit == 4000
        assert stream.chunks == []
        reader = LineReader(Chunks(b"0123456789" * 2 + b"\nok\n"), max_line_length=10)
        with pytest.raises(LineTooLongError) as caught:
            await reader.receive_line()
        assert caught.value.head == caught.value.tail == b"0123456789" * 2
        assert await reader.receive_line() == b"ok"
        # A line the stream ends inside has no known tail.
        reader = LineReader(Chunks(b"a" * 5000, b"b" * 5000), max_line_length=10)
        with pytest.raises(LineTooLongError) as caught:
            await reader.receive_line()
        assert (caught.value.head, caught.value.tail) == (b"a" * 4096, b"")
        with pytest.raises(anyio.EndOfStream):
            await reader.receive_line()


@pytest.mark.anyio
async def test_data_after_the_last_newline_is_a_truncated_message() -> None:
    with anyio.fail_after(LIMIT):
        reader = LineReader(Chunks(b'{"a":1}\n{"b":', b"2}"))
        assert await reader.receive_line() == b'{"a":1}'
        with pytest.raises(TruncatedMessageError, match="7 bytes after the last"):
            await reader.receive_line()
        with pytest.raises(anyio.EndOfStream):
            await reader.receive_line()
        # Trailing whitespace is no message.
        assert await lines(LineReader(Chunks(b"{}\n  \r"))) == [b"{}"]


def test_the_limit_must_be_positive() -> None:
    assert DEFAULT_MAX_LINE_LENGTH == 16 * 1024 * 1024
    with pytest.raises(ValueError, match="positive"):
        LineReader(Chunks(), max_line_length=0)


@pytest.mark.anyio
async def test_the_transport_frames_messages_and_serialises_sends() -> None:
    incoming, outgoing = Chunks(b'{"x":1}\r\n{"y":2}\n'), Collect()
    transport = StdioTransport(incoming, outgoing)
    end: Transport = transport
    messages = [json.dumps({"n": n, "pad": "z" * n}).encode() for n in range(50)]
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tasks:
            for message in messages:
                tasks.start_soon(end.send, message)
        assert sorted(outgoing.data.splitlines()) == sorted(messages)
        assert outgoing.data.endswith(b"\n")
        with pytest.raises(ValueError, match="newline"):
            await end.send(b'{\n"x":1}')
        assert await end.receive() == b'{"x":1}'
        assert await end.receive() == b'{"y":2}'
        with pytest.raises(anyio.EndOfStream):
            await end.receive()
        await end.aclose()
        await end.aclose()
        assert incoming.closed
        assert outgoing.closed
        with pytest.raises(anyio.ClosedResourceError):
            await end.send(b"{}")
        with pytest.raises(anyio.ClosedResourceError):
            await end.receive()


@posix_only
@pytest.mark.anyio
async def test_a_send_cancelled_halfway_is_completed_before_the_next() -> None:
    read_fd, write_fd = os.pipe()
    writer = _FdWriter(write_fd)
    big = b"a" * (1 << 20) + b"\n"
    received = bytearray()

    async def drain() -> None:
        while len(received) < len(big) + 2:
            await anyio.wait_readable(read_fd)
            received.extend(os.read(read_fd, 1 << 16))

    try:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tasks:
                # Nobody reads yet: the send blocks once the pipe is full.
                tasks.start_soon(writer.send, big)
                await anyio.wait_all_tasks_blocked()
                tasks.cancel_scope.cancel()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(drain)
                await writer.send(b"b\n")
        assert received == big + b"b\n"
        assert not os.get_blocking(write_fd)
    finally:
        await writer.aclose()
        assert os.get_blocking(write_fd)
        os.close(read_fd)
        os.close(write_fd)


@posix_only
@pytest.mark.anyio
async def test_concurrent_sends_never_interleave_even_when_the_pipe_fills() -> None:
    read_fd, write_fd = os.pipe()
    writer = _FdWriter(write_fd)
    messages = [bytes([65 + n]) * (100_000 + n) + b"\n" for n in range(8)]
    received = bytearray()
    total = sum(len(m) for m in messages)

    async def drain() -> None:
        await anyio.sleep(0.05)  # let the pipe fill first
        while len(received) < total:
            await anyio.wait_readable(read_fd)
            received.extend(os.read(read_fd, 1 << 16))

    try:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(drain)
                for message in messages:
                    tasks.start_soon(writer.send, message)
        assert sorted(bytes(received).split(b"\n")[:-1]) == [m[:-1] for m in messages]
    finally:
        await writer.aclose()
        os.close(read_fd)
        os.close(write_fd)


@posix_only
@pytest.mark.anyio
async def test_the_reader_pauses_while_much_is_unread_and_sees_the_end() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    reader = _FdReader(read_fd)
    try:
        with anyio.fail_after(LIMIT):
            os.write(write_fd, b"x")
            assert await reader.receive() == b"x"
            loop_reads = reader._loop_reads  # asyncio only: selector callbacks
            sent = 0
            # Keep the pipe full until the reader stops taking from it.
            for _ in range(100):
                with contextlib.suppress(BlockingIOError):
                    while True:
                        sent += os.write(write_fd, b"y" * READ_CHUNK)
                await anyio.sleep(0.01)
                if loop_reads is None or not loop_reads.reading:
                    break
            if loop_reads is not None:
                assert not loop_reads.reading  # paused above the high-water mark
            got = 0
            while got < sent:
                got += len(await reader.receive())
            if loop_reads is not None:
                assert loop_reads.reading
            os.close(write_fd)
            with pytest.raises(anyio.EndOfStream):
                await reader.receive()
    finally:
        await reader.aclose()
        os.close(read_fd)


@posix_only
@pytest.mark.anyio
async def test_closing_the_reader_wakes_a_waiting_receive() -> None:
    read_fd, write_fd = os.pipe()
    reader = _FdReader(read_fd)
    failure: list[BaseException] = []

    async def wait() -> None:
        try:
            await reader.receive()
        except anyio.ClosedResourceError as exc:
            failure.append(exc)

    try:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(wait)
                await anyio.wait_all_tasks_blocked()
                await reader.aclose()
        assert isinstance(failure[0], anyio.ClosedResourceError)
    finally:
        os.close(read_fd)
        os.close(write_fd)


# --- a real server over stdio ---------------------------------------------------


@asynccontextmanager
async def server(
    *args: str, **options: Any
) -> AsyncGenerator[tuple[StdioClientTransport, Connection]]:
    options.setdefault("stderr", "capture")
    async with (
        stdio_client(program("server", *args), **options) as transport,
        Connection(transport) as connection,
    ):
        yield transport, connection


async def echo(connection: Connection, message: str) -> str:
    result = await rev.Client(connection).call_tool(
        name="echo", arguments={"message": message}
    )
    content = result.content[0]
    assert isinstance(content, rev.TextContent)
    return content.text


@pytest.mark.anyio
async def test_many_requests_in_turn_and_at_once() -> None:
    with anyio.fail_after(LIMIT):
        async with server() as (transport, connection):
            for n in range(50):
                assert await echo(connection, f"turn {n}") == f"turn {n}"
            answers: dict[int, str] = {}

            async def ask(n: int) -> None:
                answers[n] = await echo(connection, f"at once {n}")

            async with anyio.create_task_group() as tasks:
                for n in range(200):
                    tasks.start_soon(ask, n)
            assert answers == {n: f"at once {n}" for n in range(200)}
            big = "é" * 200_000
            assert await echo(connection, big) == big
    assert transport.returncode == 0


@pytest.mark.anyio
async def test_stray_output_goes_to_stderr_and_responses_stay_valid() -> None:
    with anyio.fail_after(LIMIT):
        async with server() as (transport, connection):
            result = await rev.Client(connection).call_tool(name="noise")
            assert result.content == [rev.TextContent(text="quiet")]
            assert await echo(connection, "still fine") == "still fine"
    for noise in ("print noise", "thread noise", "fd noise", "child noise"):
        assert noise in transport.stderr_text
    assert "server stopped" in transport.stderr_text


@pytest.mark.anyio
async def test_the_server_restores_stdout_when_it_stops() -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client(program("guard"), stderr="capture") as transport:
            ready = json.loads(await transport.receive())
            assert ready == {
                "ready": True,
                "nested": "refused",
                "stdout": True,
                "stolen": 0,
            }
            await transport.send(b'{"bye":1}')
            assert await transport.receive() == b'{"bye":1}'
            after = json.loads(await transport.receive())
            assert after == {"after": True, "blocking": True}
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
    assert transport.returncode == 0
    for noise in ("print", "thread", "early reference", "fd", "child"):
        assert f"{noise} noise" in transport.stderr_text
    assert "child read 0" in transport.stderr_text


@pytest.mark.anyio
async def test_bad_lines_get_parse_errors_and_crlf_and_blank_lines_are_fine() -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client(program("server"), stderr="capture") as transport:
            await transport.send(b'{"jsonrpc": "2.0", "id": 1, "method"')
            reply = json.loads(await transport.receive())
            assert reply["id"] is None
            assert reply["error"]["code"] == -32700
            await transport.send(b"")
            await transport.send(b" \t ")
            await transport.send(ping(2) + b"\r")  # sent as CRLF
            assert json.loads(await transport.receive()) == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {},
            }
    assert transport.returncode == 0


@pytest.mark.anyio
async def test_the_server_refuses_an_over_long_line_and_keeps_serving() -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client(
            program("server", "1000"), stderr="capture"
        ) as transport:
            await transport.send(ping(1))
            assert json.loads(await transport.receive())["id"] == 1
            await transport.send(b'"' + b"x" * 5000 + b'"')
            refused = json.loads(await transport.receive())
            assert refused["id"] is None
            assert refused["error"]["code"] == -32600
            assert "more than 1000 bytes" in refused["error"]["message"]
            await transport.send(ping(2))
            assert json.loads(await transport.receive())["id"] == 2
    assert "message line too long: more than 1000 bytes" in transport.stderr_text


@pytest.mark.anyio
async def test_the_client_skips_an_over_long_response_and_fails_its_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The skipped response's id is read from its head: its request fails at
    once, naming the limit; others go on."""
    caplog.set_level(logging.WARNING, "mcp_specgen_runtime")
    with anyio.fail_after(LIMIT):
        async with server(max_line_length=1000) as (_, connection):
            assert await echo(connection, "short") == "short"
            with pytest.raises(MessageTooLargeError) as caught:
                await connection.request(
                    "tools/call",
                    rev.CallToolRequestParams(
                        name="echo", arguments={"message": "x" * 5000}
                    ),
                    rev.CallToolResult,
                )
            assert caught.value.limit == 1000
            assert "the response to tools/call (id 2)" in str(caught.value)
            assert "more than 1000 bytes" in str(caught.value)
            assert "max_line_length" in str(caught.value)
            assert await echo(connection, "again") == "again"
    assert "message line too long: more than 1000 bytes" in caplog.text


# --- lifecycle ------------------------------------------------------------------


@pytest.mark.anyio
async def test_closing_the_client_stops_the_server_at_once() -> None:
    with anyio.fail_after(LIMIT):
        async with server(shutdown_timeouts=(LIMIT, LIMIT)) as (transport, connection):
            assert await echo(connection, "hi") == "hi"
            assert transport.returncode is None
            started = anyio.current_time()
    assert transport.returncode == 0  # no signal was needed
    assert anyio.current_time() - started < 2.0


@posix_only
@pytest.mark.anyio
async def test_a_child_ignoring_end_of_input_gets_sigterm() -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client(
            program("stubborn"), shutdown_timeouts=QUICK
        ) as transport:
            assert json.loads(await transport.receive()) == {"ready": True}
    assert transport.returncode == -signal.SIGTERM


@posix_only
@pytest.mark.anyio
async def test_a_child_ignoring_sigterm_gets_sigkill() -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client(
            program("stubborn", "term"), shutdown_timeouts=QUICK
        ) as transport:
            assert json.loads(await transport.receive()) == {"ready": True}
    assert transport.returncode == -signal.SIGKILL


@posix_only
@pytest.mark.anyio
async def test_a_cancelled_client_still_shuts_the_child_down() -> None:
    with anyio.fail_after(LIMIT), anyio.CancelScope() as scope:
        async with stdio_client(
            program("stubborn"), shutdown_timeouts=QUICK
        ) as transport:
            assert json.loads(await transport.receive()) == {"ready": True}
            scope.cancel()
            await transport.receive()
    assert scope.cancelled_caught
    assert transport.returncode == -signal.SIGTERM


@pytest.mark.anyio
async def test_a_crash_fails_the_pending_request_and_reports_the_exit_code() -> None:
    with anyio.fail_after(LIMIT):
        async with server() as (transport, connection):
            assert await echo(connection, "before") == "before"
            with pytest.raises(TransportError):
                await rev.Client(connection).call_tool(name="crash")
            assert await transport.wait() == 3
            assert connection.closed
    assert transport.returncode == 3


@pytest.mark.anyio
async def test_a_tool_raising_system_exit_or_keyboard_interrupt_fails_alone() -> None:
    with anyio.fail_after(LIMIT):
        async with server() as (transport, connection):
            for name in ("exit", "interrupt"):
                with pytest.raises(RpcError) as caught:
                    await rev.Client(connection).call_tool(name=name)
                assert caught.value.code == -32603
            assert await echo(connection, "still here") == "still here"
    assert transport.returncode == 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.anyio
async def test_a_signal_still_stops_the_server_mid_request(signum: int) -> None:
    with anyio.fail_after(LIMIT):
        async with server() as (transport, connection):
            assert await echo(connection, "ready") == "ready"
            async with anyio.create_task_group() as tasks:

                async def wait_forever() -> None:
                    with pytest.raises(TransportError):
                        await rev.Client(connection).call_tool(name="sleep")

                tasks.start_soon(wait_forever)
                await anyio.wait_all_tasks_blocked()
                os.kill(transport.pid, signum)
            await transport.wait()
    assert transport.returncode == -signum


@pytest.mark.anyio
async def test_an_error_in_the_body_propagates_as_itself_after_shutdown() -> None:
    with anyio.fail_after(LIMIT), pytest.raises(KeyError, match="boom"):
        async with server() as (transport, _):
            raise KeyError("boom")
    assert transport.returncode == 0


@pytest.mark.anyio
async def test_a_missing_program_is_an_os_error() -> None:
    with anyio.fail_after(LIMIT), pytest.raises(FileNotFoundError):
        async with stdio_client([str(PROGRAMS / "no-such-program")]):
            pass
    with pytest.raises(ValueError, match="list of arguments"):
        async with stdio_client("python server.py"):
            pass
    with pytest.raises(ValueError, match="must be positive"):
        async with stdio_client(program("report"), stderr_limit=0):
            pass
    with pytest.raises(ValueError, match="stderr option"):
        async with stdio_client(program("report"), stderr="keep"):  # type: ignore[arg-type]
            pass


@pytest.mark.anyio
async def test_env_and_cwd_reach_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_STDIO_PARENT", "ours")
    with anyio.fail_after(LIMIT):
        async with stdio_client(
            program("report"), env={"MCP_STDIO_TEST": "42"}, cwd=tmp_path
        ) as transport:
            given = json.loads(await transport.receive())
        async with stdio_client(program("report")) as transport:
            inherited = json.loads(await transport.receive())
    # The environment given replaces ours; none means ours.
    assert given["env"]["MCP_STDIO_TEST"] == "42"
    assert "MCP_STDIO_PARENT" not in given["env"]
    assert inherited["env"]["MCP_STDIO_PARENT"] == "ours"
    assert same_directory(given["cwd"], tmp_path)
    assert same_directory(inherited["cwd"], Path.cwd())


def same_directory(reported: str, expected: Path) -> bool:
    return os.path.samefile(reported, expected)


# --- stderr ---------------------------------------------------------------------


async def run_report(*lines: str, **options: Any) -> StdioClientTransport:
    with anyio.fail_after(LIMIT):
        async with stdio_client(program("report", *lines), **options) as transport:
            assert "cwd" in json.loads(await transport.receive())
    assert transport.returncode == 0
    return transport


@pytest.mark.anyio
async def test_stderr_is_inherited_by_default(
    capfd: pytest.CaptureFixture[str],
) -> None:
    transport = await run_report("to the parent's stderr")
    assert "to the parent's stderr" in capfd.readouterr().err
    assert transport.stderr_text == "to the parent's stderr\n"


@pytest.mark.anyio
async def test_stderr_can_be_discarded(capfd: pytest.CaptureFixture[str]) -> None:
    transport = await run_report("to nowhere", stderr="discard")
    assert "to nowhere" not in capfd.readouterr().err
    assert transport.stderr_text == "to nowhere\n"  # kept for exit_report


@pytest.mark.anyio
async def test_captured_stderr_keeps_its_last_bytes(
    capfd: pytest.CaptureFixture[str],
) -> None:
    lines = [f"line {n:03} " + "." * 90 for n in range(100)]
    transport = await run_report(*lines, stderr="capture", stderr_limit=1000)
    assert "line " not in capfd.readouterr().err
    assert len(transport.stderr_text) == 1000
    assert transport.stderr_text.endswith(lines[-1] + "\n")
    assert lines[0] not in transport.stderr_text


@pytest.mark.anyio
async def test_stderr_lines_can_go_to_a_callback() -> None:
    received: list[str] = []
    transport = await run_report("first", "second ✓", stderr=received.append)
    assert received == ["first", "second ✓"]
    assert transport.stderr_text == "first\nsecond ✓\n"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import sys; sys.stderr.write('bad\\n' * 2000 + 'worse'); sys.exit(3)", 3),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -9),
    ],
)
async def test_the_exit_report_tells_the_status_and_the_tail_of_stderr(
    code: str, expected: int
) -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client([sys.executable, "-c", code]) as transport:
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
            report = await transport.exit_report()
    if expected > 0:
        assert report.startswith("the server process exited with status 3")
        assert report.endswith("bad\nbad\nworse")
        assert len(report) < EXIT_REPORT_STDERR + 200
    else:
        assert report == "the server process was killed by signal 9"


@pytest.mark.anyio
async def test_the_exit_report_of_a_running_child_says_so() -> None:
    with anyio.fail_after(LIMIT):
        async with stdio_client(program("report"), stderr="discard") as transport:
            await transport.receive()
            report = await transport.exit_report(wait=0)
    assert report == "the server process is still running"

"""The stdio transport: newline-delimited JSON over a pair of byte streams.

One message is one line: a complete UTF-8 JSON text followed by ``b"\\n"``
(JSON encoders never emit a raw newline). `StdioTransport` frames messages over
any anyio byte streams; `stdio_server()` runs it over this process's stdin and
stdout, `stdio_client()` over the pipes of a spawned server, and
`connect_stdio()` opens a `ClientSession` over one.

Framing is in `lines.py`. Decisions worth knowing:

- `stdio_server()` keeps stdin and stdout for MCP messages only: it
  duplicates file descriptors 0 and 1 for the transport, then points
  descriptor 1 at stderr (so C code, child processes and old references to
  `sys.stdout` write to stderr) and sets `sys.stdout` to `sys.stderr` (so
  `print()`, from any thread, goes there too); descriptor 0 reads the null
  device, so a child process or `input()` cannot steal messages. All is
  restored on exit. Pipes and sockets are put in non-blocking mode for the
  event loop (restored on close); files and terminals are served by threads or
  polled as they are.
- On asyncio, over a pipe or a socket, a `Connection` is served in push mode
  (`StdioTransport.push`): messages are split and dispatched from the
  selector callback, and the answers produced in one loop pass go out in one
  `writev`. Elsewhere `receive()` serves, as it does for any other user.
- Once a message larger than 64 KiB crosses one of our pipes, the pipe is
  asked for a buffer of `PIPE_GROWTH` (1 MiB, Linux, within the user's
  limits), so large messages need few reads and writes.
- `stdio_client()` shuts the server down the way the specification asks:
  close its stdin, wait `shutdown_timeouts[0]` seconds (default 2), send
  SIGTERM, wait `shutdown_timeouts[1]` seconds (default 2), send SIGKILL; the
  child is always reaped. End of stream is end of the child's stdout, so a
  crashed child makes `receive` raise `anyio.EndOfStream`; its exit status is
  `StdioClientTransport.returncode` (or `await wait()`), and `exit_report()`
  tells it with the tail of the child's stderr, which is always read through a
  pipe and its last `stderr_limit` bytes kept, whatever else is done with it
  (so "inherit" copies it to our `sys.stderr` as it comes).
"""

from __future__ import annotations

import asyncio
import codecs
import contextvars
import logging
import os
import stat
import subprocess
import sys
from collections import deque
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import ByteReceiveStream, ByteSendStream

from .heap import keep_freed_memory
from .lines import (
    DEFAULT_MAX_LINE_LENGTH,
    READ_CHUNK,
    LineReader,
    LineTooLongError,
    StdioTransport,
    TruncatedMessageError,
)

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Self

    from anyio.abc import Process

    from mcp_specgen_runtime.protocol.client import ClientSession

__all__ = [
    "DEFAULT_MAX_LINE_LENGTH",
    "DEFAULT_SHUTDOWN_TIMEOUTS",
    "DEFAULT_STDERR_LIMIT",
    "EXIT_REPORT_STDERR",
    "EXIT_REPORT_WAIT",
    "LineReader",
    "LineTooLongError",
    "StderrOption",
    "StdioClientTransport",
    "StdioTransport",
    "TruncatedMessageError",
    "connect_stdio",
    "stdio_client",
    "stdio_server",
]

logger = logging.getLogger(__name__)

DEFAULT_SHUTDOWN_TIMEOUTS = (2.0, 2.0)
"""Seconds `stdio_client` waits after closing the child's stdin, then after
SIGTERM, before escalating."""
DEFAULT_STDERR_LIMIT = 64 * 1024
"""Bytes of a child's stderr kept (the most recent), see `stderr_text`."""
EXIT_REPORT_STDERR = 4 * 1024
"""Bytes of the child's stderr (its last) that `exit_report` quotes."""
EXIT_REPORT_WAIT = 1.0
"""Seconds `exit_report` waits for the child to exit and its stderr to end."""
STDERR_EOF_GRACE = 1.0
"""Seconds to wait, once the child is reaped, for the rest of its stderr (a
grandchild may still hold the pipe open)."""

PIPE_GROWTH = 1 << 20
"""Bytes a pipe of ours is asked to hold (Linux, once, and only when a
message larger than a read chunk crosses it), so that a large message goes
through in one write and a few reads instead of a trip through the event
loop per 64 KiB. A pipe's buffer is kernel memory counted against its user's
limit, hence not for every pipe."""

StderrOption: TypeAlias = (
    Literal["inherit", "capture", "discard"] | Callable[[str], object]
)
"""What `stdio_client` does with the child's stderr: copy it to ours
("inherit"), only keep its tail ("capture"; "discard" too, shown nowhere but
in `exit_report`), or call a function with each line (decoded as UTF-8, line
ending removed). The tail is kept in every case."""


# --- the server side: this process's stdin and stdout ---------------------------


class _Fd:
    """A file descriptor, waited for by the event loop where it can be.

    Pipes and sockets (POSIX) are put in non-blocking mode, restored on close.
    Terminals may be polled but keep their mode (the shell shares it). Other
    files (regular files, /dev/null, Windows handles) are left to threads.
    """

    def __init__(self, fd: int, *, poll_terminal: bool) -> None:
        self.fd = fd
        self.closed = False
        posix = os.name == "posix"
        mode = os.fstat(fd).st_mode
        self.pipe = posix and stat.S_ISFIFO(mode)
        self.grown = False
        self.restore_blocking = False
        if posix and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            self.polled = True
            self.restore_blocking = os.get_blocking(fd)
            os.set_blocking(fd, False)
        else:
            self.polled = poll_terminal and posix and os.isatty(fd)
        self.blocking = os.get_blocking(fd) if self.polled else True

    def grow(self) -> None:
        """Ask once for a pipe buffer of `PIPE_GROWTH` bytes (where the
        system allows it: Linux, within the user's limits), and for malloc
        to keep the pages of large messages (`heap.keep_freed_memory`)."""
        if self.grown or not self.pipe or self.closed:
            return
        self.grown = True
        keep_freed_memory()  # large messages cross this pipe: reuse their pages
        try:
            import fcntl  # POSIX only, and needed only here
        except ImportError:
            return
        setter: int | None = getattr(fcntl, "F_SETPIPE_SZ", None)
        if setter is None:
            return
        try:
            fcntl.fcntl(self.fd, setter, PIPE_GROWTH)
        except OSError as exc:  # over the user's limit: keep the buffer
            logger.debug("pipe %d not grown: %r", self.fd, exc)

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            if self.polled:
                anyio.notify_closing(self.fd)
            if self.restore_blocking:
                try:
                    os.set_blocking(self.fd, True)
                except OSError as exc:  # closed behind our back
                    logger.debug("cannot restore fd %d: %r", self.fd, exc)
        await anyio.lowlevel.checkpoint()


class _LoopReads:
    """Reads a non-blocking descriptor from asyncio's selector callbacks.

    The descriptor stays registered with the selector while data is wanted, so
    a message costs one `read` and no `epoll_ctl` calls (`anyio.wait_readable`
    registers and unregisters on every wait). Reading pauses while more than
    `HIGH_WATER` bytes wait unread, so a fast peer cannot fill our memory.
    """

    HIGH_WATER = 4 * READ_CHUNK

    PUSH_READS = PIPE_GROWTH // READ_CHUNK
    """Reads one callback makes at most in push mode while they come full."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        fd: int,
        on_data: Callable[[bytes | Exception], None] | None = None,
        on_full: Callable[[], None] | None = None,
    ) -> None:
        self.loop = loop
        self.fd = fd
        self.on_full = on_full
        """Push mode: called when a read comes back full (a large message
        is coming)."""
        self.on_data = on_data
        """Push mode: called from the selector callback with each chunk, b""
        at end of stream, or the error that ended reading (nothing is
        buffered here then)."""
        # Push mode runs its callbacks in the context it was started in, as
        # a reading task would, whoever resumes it.
        self.context = contextvars.copy_context()
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.eof = False
        self.closed = False
        self.error: OSError | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.reading = False
        self._resume()

    def _resume(self) -> None:
        if not self.reading and not self.eof and not self.closed:
            if self.on_data is None:
                self.loop.add_reader(self.fd, self._on_readable)
            else:
                self.loop.add_reader(self.fd, self.context.run, self._push_readable)
            self.reading = True

    def pause(self) -> None:
        """Stop reading until `resume` (push mode)."""
        self._pause()

    def resume(self) -> None:
        """Read again after `pause` (push mode)."""
        self._resume()

    def _pause(self) -> None:
        if self.reading:
            self.loop.remove_reader(self.fd)
            self.reading = False

    def _read(self) -> bytes | None:
        """One read: None when there is nothing yet; b"" at end of stream or
        on an error (recorded in `error`), reading then stopped."""
        try:
            data = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return None
        except OSError as exc:
            self.error = exc
            data = b""
        if not data:
            self.eof = True
            self._pause()
        return data

    def _on_readable(self) -> None:
        data = self._read()
        if data is None:
            return
        if data:
            self.chunks.append(data)
            self.size += len(data)
            if self.size >= self.HIGH_WATER:
                self._pause()
        self._wake()

    def _push_readable(self) -> None:
        """Push mode: hand over what is there, reading on while reads come
        back full (no loop pass per chunk of a large message)."""
        assert self.on_data is not None
        for _ in range(self.PUSH_READS):
            data = self._read()
            if data is None:
                return
            if not data:
                self.on_data(data if self.error is None else self.error)
                return
            self.on_data(data)
            if len(data) < READ_CHUNK or not self.reading:
                return
            if self.on_full is not None:
                self.on_full()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self) -> bytes:
        """The next chunk; b"" at end of stream."""
        while not self.chunks:
            if self.closed:
                raise anyio.ClosedResourceError
            if self.error is not None:
                raise anyio.BrokenResourceError from self.error
            if self.eof:
                return b""
            self.waiter = self.loop.create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        data = self.chunks.popleft()
        self.size -= len(data)
        if self.size < self.HIGH_WATER:
            self._resume()
        return data

    def close(self) -> None:
        self.closed = True
        self._pause()
        self._wake()
        if self.on_data is not None and not self.eof:
            self.eof = True
            self.on_data(anyio.ClosedResourceError())


class _FdReader(ByteReceiveStream):
    """Reads a file descriptor without blocking the event loop (see `_Fd`)."""

    def __init__(self, fd: int) -> None:
        self._fd = _Fd(fd, poll_terminal=True)
        self._loop_reads: _LoopReads | None = None

    async def receive(self, max_bytes: int = READ_CHUNK) -> bytes:
        fd = self._fd
        if fd.closed:
            raise anyio.ClosedResourceError
        if not fd.polled:
            data = await anyio.to_thread.run_sync(
                os.read, fd.fd, max_bytes, abandon_on_cancel=True
            )
        elif self._loop_reads is not None or self._start_loop_reads():
            assert self._loop_reads is not None
            data = await self._loop_reads.receive()
        else:
            await anyio.lowlevel.checkpoint_if_cancelled()
            waited = fd.blocking
            if fd.blocking:
                await anyio.wait_readable(fd.fd)
            while True:
                try:
                    data = os.read(fd.fd, max_bytes)
                    break
                except BlockingIOError:
                    await anyio.wait_readable(fd.fd)
                    waited = True
            if not waited:
                await anyio.lowlevel.cancel_shielded_checkpoint()
        if not data:
            raise anyio.EndOfStream
        return data

    def _start_loop_reads(
        self, on_data: Callable[[bytes | Exception], None] | None = None
    ) -> bool:
        """Read through asyncio's selector where we can (a non-blocking fd on
        asyncio); other backends and terminals use `anyio.wait_readable`."""
        if self._fd.blocking or not self._fd.polled:
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio)
            return False
        try:
            self._loop_reads = _LoopReads(loop, self._fd.fd, on_data, self._fd.grow)
        except NotImplementedError:  # a loop without add_reader (Windows proactor)
            return False
        return True

    def push(self, on_data: Callable[[bytes | Exception], None]) -> _LoopReads | None:
        """Call `on_data` from the selector callback with each chunk read (b""
        at end of stream, or the error that ended reading) instead of
        buffering it for `receive`; None when this descriptor cannot be read
        that way (then `receive` serves), or reading has begun."""
        if self._fd.closed or self._loop_reads is not None:
            return None
        if not self._start_loop_reads(on_data):
            return None
        return self._loop_reads

    async def aclose(self) -> None:
        if self._loop_reads is not None:
            self._loop_reads.close()
        await self._fd.aclose()


class _FdWriter(ByteSendStream):
    """Writes a file descriptor without blocking the event loop (see `_Fd`).

    A send cancelled halfway keeps its remainder, written before the next
    message, so the framing stays intact. Concurrent sends never interleave.
    """

    sends_whole_messages = True
    """Each `send` goes out whole even when several tasks send at once."""

    def __init__(self, fd: int) -> None:
        self._fd = _Fd(fd, poll_terminal=False)
        self._unsent = bytearray()
        self._lock = anyio.Lock(fast_acquire=True)
        self._held: list[bytes] | None = None
        self._holds = 0
        self._broken: BaseException | None = None
        self._flushing: asyncio.Task[None] | None = None

    def hold(self) -> bool:
        """Keep the messages sent until `release`, to write them with one
        `write`: a push-mode reader holds while the answers of what it read
        are produced (those that complete at once all go out together). False
        (nothing held) where writes are not polled."""
        if not self._fd.polled or self._fd.closed:
            return False
        if self._held is None:
            self._held = []
        self._holds += 1
        return True

    def release(self) -> None:
        """Write what was held since `hold` (once every hold is released)."""
        self._holds -= 1
        if self._holds or self._held is None:
            return
        held, self._held = self._held, None
        if not held or self._fd.closed:
            return
        if not self._fd.grown and sum(map(len, held)) > READ_CHUNK:
            self._fd.grow()
        if self._unsent or self._lock.locked():
            # Earlier bytes are still waiting: these go after them.
            self._unsent += b"".join(held)
            self._flush_later()
            return
        try:
            written = _write_parts(self._fd.fd, held)
        except anyio.BrokenResourceError as exc:
            # Whoever sends next learns it (the held senders have returned).
            self._broken = exc
            return
        for part in held:
            if written >= len(part):
                written -= len(part)
                continue
            self._unsent += memoryview(part)[written:] if written else part
            written = 0
        if self._unsent:
            self._flush_later()

    def _flush_later(self) -> None:
        if self._flushing is None and not self._lock.locked():
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        try:
            async with self._lock:
                while self._unsent and not self._fd.closed:
                    await anyio.wait_writable(self._fd.fd)
                    del self._unsent[: self._write(self._unsent)]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._broken = exc
        finally:
            self._flushing = None

    async def send_line(self, message: bytes) -> None:
        """Send `message` and a newline (without joining them while held)."""
        if self._holding():
            assert self._held is not None
            self._held += (message, b"\n")
            return
        await self.send(message + b"\n")

    def _holding(self) -> bool:
        """Whether a send now is held. Not while earlier bytes wait for the
        pipe: then what is held goes first and the sender waits its turn,
        so a peer that does not read still slows every sender down."""
        held = self._held
        if held is None or self._fd.closed or self._broken is not None:
            return False
        if not self._unsent and not self._lock.locked():
            return True
        if held:
            self._unsent += b"".join(held)
            held.clear()
        return False

    async def send(self, item: bytes) -> None:
        if self._fd.closed:
            raise anyio.ClosedResourceError
        if self._broken is not None:
            raise anyio.BrokenResourceError from self._broken
        if self._holding():
            assert self._held is not None
            self._held.append(item)
            return
        if not self._fd.polled:
            async with self._lock:
                # Not abandoned on cancellation: a message is written whole.
                await anyio.to_thread.run_sync(self._write_all, item)
            return
        rest: bytes | memoryview = item
        if len(item) > READ_CHUNK:
            self._fd.grow()
        if not self._unsent and not self._lock.locked():
            # The common case: the pipe takes the whole message at once, with
            # no lock and no trip through the event loop.
            written = self._write(item)
            if written == len(item):
                return
            rest = memoryview(item)[written:]
        async with self._lock:
            self._unsent += rest
            while self._unsent:
                await anyio.wait_writable(self._fd.fd)
                del self._unsent[: self._write(self._unsent)]

    def _write(self, data: bytes | bytearray) -> int:
        try:
            return os.write(self._fd.fd, data)
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd.fd, view) :]
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        self._held = None
        await self._fd.aclose()


def _write_parts(fd: int, parts: list[bytes]) -> int:
    """Write as much of `parts` as the descriptor takes at once, in one call."""
    try:
        if len(parts) == 1:
            return os.write(fd, parts[0])
        # writev takes at most IOV_MAX (1024 on Linux) buffers.
        return os.writev(fd, parts[:1024])
    except BlockingIOError:
        return 0
    except (BrokenPipeError, ConnectionResetError) as exc:
        raise anyio.BrokenResourceError from exc


_serving = False


@contextmanager
def _stdio_for_messages() -> Generator[tuple[int, int]]:
    """Yield private duplicates of descriptors 0 and 1 for the messages, and
    meanwhile point 0 at the null device and 1 (and `sys.stdout`) at stderr, so
    that nothing else reads the messages or writes among them."""
    global _serving
    if _serving:
        raise RuntimeError("stdio_server() is already running in this process")
    previous = sys.stdout
    if previous is not None:
        previous.flush()

    def give_back_stdout() -> None:
        global _serving
        # What was printed meanwhile belongs on stderr: flush it before
        # descriptor 1 is stdout again.
        for stream in (sys.stdout, previous):
            if stream is not None:
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        sys.stdout = previous
        _serving = False

    with ExitStack() as restore:
        messages_in = os.dup(0)
        restore.callback(os.close, messages_in)
        restore.callback(os.dup2, messages_in, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        messages_out = os.dup(1)
        restore.callback(os.close, messages_out)
        restore.callback(os.dup2, messages_out, 1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        _serving = True
        restore.callback(give_back_stdout)
        yield messages_in, messages_out


@asynccontextmanager
async def stdio_server(
    *, max_line_length: int = DEFAULT_MAX_LINE_LENGTH
) -> AsyncGenerator[StdioTransport]:
    """Serve over this process's stdin and stdout::

        async with stdio_server() as transport:
            async with Connection(transport, Dispatcher(MyServer()).dispatch) as c:
                await c.wait_closed()

    While inside, stdin and stdout carry MCP messages only: `print()` (from
    any thread), C code and child processes write to stderr instead, and read
    an empty stdin. `receive` raises `anyio.EndOfStream` once stdin ends, so
    the server exits when the client closes.

    Raises:
        RuntimeError: another `stdio_server()` is running in this process.
    """
    with _stdio_for_messages() as (messages_in, messages_out):
        transport = StdioTransport(
            _FdReader(messages_in),
            _FdWriter(messages_out),
            max_line_length=max_line_length,
        )
        try:
            yield transport
        finally:
            with anyio.CancelScope(shield=True):
                await transport.aclose()


# --- the client side: a spawned server ------------------------------------------


class StdioClientTransport(StdioTransport):
    """The client's end of a spawned server: its stdin and stdout, with its exit
    status and its stderr. `stdio_client()` builds one.

    Used as an async context manager, it drains the child's stderr while inside
    and shuts the child down on exit (see `stdio_client`).

    Args:
        process: the child, with piped stdin and stdout.
        shutdown_timeouts: seconds to wait after closing stdin, then after
            SIGTERM.
        max_line_length: bytes one incoming line may hold.
        stderr_limit: bytes of stderr kept by `stderr_text`; also the longest
            line passed to `on_stderr_line`.
        on_stderr_line: called with each line of stderr.
        forward_stderr: copy the child's stderr to ours (`sys.stderr`) as it
            comes.
    """

    def __init__(
        self,
        process: Process,
        *,
        shutdown_timeouts: tuple[float, float] = DEFAULT_SHUTDOWN_TIMEOUTS,
        max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
        stderr_limit: int = DEFAULT_STDERR_LIMIT,
        on_stderr_line: Callable[[str], object] | None = None,
        forward_stderr: bool = False,
    ) -> None:
        if process.stdin is None or process.stdout is None:
            raise ValueError("the process needs piped stdin and stdout")
        if min(shutdown_timeouts) < 0:
            raise ValueError(f"negative shutdown timeouts: {shutdown_timeouts}")
        if stderr_limit < 1:
            raise ValueError(f"stderr_limit must be positive: {stderr_limit}")
        super().__init__(process.stdout, process.stdin, max_line_length=max_line_length)
        self.process = process
        self.shutdown_timeouts = shutdown_timeouts
        self.stderr_limit = stderr_limit
        self._on_stderr_line = on_stderr_line
        self._stderr_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._forward_stderr = forward_stderr
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()
        self._stack: AsyncExitStack | None = None

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The child's exit status (negative: killed by that signal, on POSIX),
        or None while it runs."""
        return self.process.returncode

    async def wait(self) -> int:
        """Wait for the child to exit; its exit status."""
        return await self.process.wait()

    @property
    def stderr_text(self) -> str:
        """What the child wrote to stderr so far, at most its last
        `stderr_limit` bytes, decoded as UTF-8; empty unless stderr is piped."""
        return self._stderr.decode(errors="replace")

    async def exit_report(self, *, wait: float = EXIT_REPORT_WAIT) -> str:
        """How the child ended, for an error message: its exit status (waiting
        up to `wait` seconds for it to exit, and for the rest of its stderr)
        and the last `EXIT_REPORT_STDERR` bytes of its stderr, if any."""
        process = self.process
        with anyio.move_on_after(wait):
            await process.wait()
            if process.stderr is not None:
                await self._stderr_done.wait()
        code = process.returncode
        if code is None:
            report = "the server process is still running"
        elif code < 0:
            report = f"the server process was killed by signal {-code}"
        else:
            report = f"the server process exited with status {code}"
        tail = bytes(self._stderr[-EXIT_REPORT_STDERR:]).strip()
        if tail:
            cut = "..." if len(self._stderr) > EXIT_REPORT_STDERR else ""
            text = tail.decode(errors="replace")
            report += f"; its stderr ended with:\n{cut}{text}"
        return report

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        try:
            tasks = await stack.enter_async_context(anyio.create_task_group())
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._shut_down()
            raise
        if self.process.stderr is not None:
            tasks.start_soon(self._pump_stderr, self.process.stderr)
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        try:
            with anyio.CancelScope(shield=True):
                await self._shut_down()
        finally:
            # The stderr pump ends once the child's pipes are closed. Leaving
            # the task group without the body's error lets that propagate as
            # itself, not wrapped in an exception group.
            if stack is not None:
                await stack.aclose()

    async def _pump_stderr(self, stream: ByteReceiveStream) -> None:
        """Read the child's stderr to its end, so the child never blocks on it."""
        pending = bytearray()
        try:
            async for chunk in stream:
                self._stderr += chunk
                del self._stderr[: -self.stderr_limit]
                if self._forward_stderr:
                    self._copy_to_stderr(chunk)
                if self._on_stderr_line is None:
                    continue
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._stderr_line(line)
                if len(pending) > self.stderr_limit:
                    self._stderr_line(pending)
                    pending = bytearray()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            if pending:
                self._stderr_line(pending)
            self._stderr_done.set()

    def _copy_to_stderr(self, chunk: bytes) -> None:
        text = self._stderr_decoder.decode(chunk)
        # Looked up on each write: the caller may redirect sys.stderr.
        ours = sys.stderr
        if text and ours is not None:
            try:
                ours.write(text)
                ours.flush()
            except (OSError, ValueError) as exc:  # closed or broken
                logger.debug("cannot copy the child's stderr: %r", exc)

    def _stderr_line(self, line: bytearray) -> None:
        assert self._on_stderr_line is not None
        if line.endswith(b"\r"):
            del line[-1:]
        try:
            self._on_stderr_line(line.decode(errors="replace"))
        except Exception:
            logger.exception("the stderr callback failed")

    async def _shut_down(self) -> None:
        """Close stdin, then SIGTERM, then SIGKILL, until the child exits;
        reap it and collect the rest of its stderr."""
        process = self.process
        try:
            await self.aclose()
        except OSError as exc:
            logger.debug("closing the child's stdin: %r", exc)
        escalation = (process.terminate, process.kill)
        for timeout, signal_child in zip(
            self.shutdown_timeouts, escalation, strict=True
        ):
            with anyio.move_on_after(timeout):
                await process.wait()
            if process.returncode is not None:
                break
            try:
                signal_child()
            except ProcessLookupError:  # it exited meanwhile
                pass
        await process.wait()
        if process.stderr is not None:
            with anyio.move_on_after(STDERR_EOF_GRACE):
                await self._stderr_done.wait()
        await process.aclose()


@asynccontextmanager
async def stdio_client(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrOption = "inherit",
    shutdown_timeouts: tuple[float, float] = DEFAULT_SHUTDOWN_TIMEOUTS,
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    stderr_limit: int = DEFAULT_STDERR_LIMIT,
) -> AsyncGenerator[StdioClientTransport]:
    """Spawn a server and connect to its stdin and stdout::

        async with stdio_client([sys.executable, "server.py"]) as transport:
            async with Connection(transport) as connection:
                ...

    On exit the server is shut down: its stdin is closed; after
    `shutdown_timeouts[0]` seconds it gets SIGTERM, after `shutdown_timeouts[1]`
    more seconds SIGKILL; it is always reaped. Should the server exit early,
    `receive` raises `anyio.EndOfStream` and `returncode` tells how it ended.

    Args:
        command: the program and its arguments (no shell).
        env: the child's whole environment (None: inherit ours). To add to
            ours, pass ``{**os.environ, ...}``.
        cwd: the child's working directory (None: ours).
        stderr: "inherit" (the default: copied to our `sys.stderr`),
            "capture", "discard", or a function called with each line. The
            last `stderr_limit` bytes are kept in every case (see
            `StdioClientTransport.stderr_text` and `exit_report`).
        shutdown_timeouts: seconds to wait after closing stdin, then after
            SIGTERM.
        max_line_length: bytes one incoming line may hold.
        stderr_limit: bytes of stderr kept; also the longest line passed to a
            callback.

    Raises:
        OSError: the program cannot be started (e.g. FileNotFoundError).
    """
    if isinstance(command, str | bytes) or not command:
        raise ValueError(f"command must be a non-empty list of arguments: {command!r}")
    on_line: Callable[[str], object] | None = None
    if callable(stderr):
        on_line = stderr
    elif stderr not in ("inherit", "capture", "discard"):
        raise ValueError(f"unknown stderr option: {stderr!r}")
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    try:
        transport = StdioClientTransport(
            process,
            shutdown_timeouts=shutdown_timeouts,
            max_line_length=max_line_length,
            stderr_limit=stderr_limit,
            on_stderr_line=on_line,
            forward_stderr=stderr == "inherit",
        )
    except BaseException:
        with anyio.CancelScope(shield=True):
            process.kill()
            await process.aclose()
        raise
    async with transport:
        yield transport


@asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    *,
    name: str,
    version: str,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrOption = "inherit",
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    **options: Any,
) -> AsyncGenerator[ClientSession]:
    """Spawn a stdio server, negotiate, and yield the session::

        async with connect_stdio(["python", "server.py"], name="me", version="1") as s:
            ...

    `options` go to `ClientSession`; `env`, `cwd`, `stderr` and
    `max_line_length` (bytes one incoming message may hold, default 16 MiB)
    to `stdio_client`.

    Raises:
        TransportError: the server closed the connection, or its process
            ended (the message tells its exit status and the tail of its
            stderr), during negotiation or a request.
        NegotiationError: as `ClientSession`.
    """
    from mcp_specgen_runtime.protocol.client import ClientSession

    async with (
        stdio_client(
            command, env=env, cwd=cwd, stderr=stderr, max_line_length=max_line_length
        ) as transport,
        ClientSession(transport, name=name, version=version, **options) as session,
    ):
        yield session

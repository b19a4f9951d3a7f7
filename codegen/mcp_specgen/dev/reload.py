"""`mcp-codegen dev` over HTTP: serve a target in a child process, restart it
when a Python file under the watched folders changes, optionally with the
MCP Inspector beside it.

The child is `python -m mcp_specgen.dev.serve --http ...` (a fresh
interpreter each time, so every module is imported anew), in a process group
of its own: a terminal's Ctrl+C reaches this process only, which stops the
child once, with SIGINT (SIGKILL after 5 s: uvicorn would take a second
SIGINT for "quit at once"). `watchfiles` watches; the port stays the same
across restarts, so the Inspector reconnects to the same URL. SIGINT or
SIGTERM stops the watcher, the server and the Inspector.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CodegenError
from .inspector import for_http, missing_node

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import FrameType

    from .targets import Target

__all__ = [
    "PortInUse",
    "check_port",
    "endpoint_url",
    "free_port",
    "run_dev",
    "runner_command",
]

RUNNER = "mcp_specgen.dev.serve"
STOP_TIMEOUT_S = 5.0


def runner_command(target: Target, *options: str) -> list[str]:
    """The command serving `target` with this Python (`options` first)."""
    return [sys.executable, "-m", RUNNER, *options, *target.runner_args()]


class PortInUse(CodegenError):
    """The port `dev` was asked to serve on is taken."""


def check_port(host: str, port: int) -> None:
    """Raise `PortInUse` when `port` on `host` cannot be bound now: the
    server would fail at each restart, and no edit would fix it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        if os.name != "nt":  # as uvicorn binds: a port in TIME_WAIT is free
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            where = f"[{host}]" if ":" in host else host
            raise PortInUse(
                f"{where}:{port} is in use ({error.strerror}): stop what "
                "serves there, or pick another --port (--port 0: a free one)"
            ) from None


def free_port(host: str) -> int:
    """A port free on `host` now (it could be taken before it is used)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
    return port


def endpoint_url(host: str, port: int, path: str = "/mcp") -> str:
    """The URL a client on this machine reaches a server bound to `host` at
    (an unspecified address is reached through loopback)."""
    name = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in name:
        name = f"[{name}]"
    return f"http://{name}:{port}{path}"


def run_dev(
    target: Target,
    *,
    host: str,
    port: int,
    inspector: bool,
    watch: Sequence[Path],
    echo: Callable[[str], None],
) -> None:
    """Serve `target` over HTTP until SIGINT or SIGTERM, restarting it on
    changes under `watch`; with `inspector`, run the Inspector meanwhile.

    Raises:
        PortInUse: `port` is taken (before anything starts).
    """
    if port == 0:
        port = free_port(host)
    else:
        check_port(host, port)
    url = endpoint_url(host, port)
    command = runner_command(target, "--http", "--host", host, "--port", str(port))
    attach = for_http(url)
    folders = ", ".join(str(folder) for folder in watch)
    echo(f"mcp-codegen dev: serving {target.spec} at {url}")
    echo(f"reloading when a .py file changes under {folders}")
    echo(f"attach the MCP Inspector: {shlex.join(attach)}")
    helper = _start_inspector(attach, echo) if inspector else None
    try:
        _supervise(command, watch, echo)
    finally:
        if helper is not None:
            _stop(helper, signal.SIGTERM)
    echo("mcp-codegen dev: stopped")


def _supervise(
    command: list[str], watch: Sequence[Path], echo: Callable[[str], None]
) -> None:
    """Run `command`, restart it on each change, until SIGINT or SIGTERM."""
    from watchfiles import PythonFilter, watch as changes_under

    stopping = threading.Event()

    def stop_watching(_signal: int, _frame: FrameType | None) -> None:
        stopping.set()

    previous = {
        wanted: signal.signal(wanted, stop_watching)
        for wanted in (signal.SIGINT, signal.SIGTERM)
    }
    server = _start(command)
    told = False
    try:
        # An empty set each second, to notice a server that exited.
        for changes in changes_under(
            *watch,
            watch_filter=PythonFilter(),
            stop_event=stopping,
            rust_timeout=1000,
            yield_on_timeout=True,
        ):
            if not changes:
                status = server.poll()
                if status is not None and not told:
                    echo(
                        f"mcp-codegen dev: the server exited (status {status}); "
                        "it starts again when a file changes"
                    )
                told = status is not None
                continue
            changed = sorted({Path(path).name for _, path in changes})
            echo(f"mcp-codegen dev: {', '.join(changed)} changed; restarting")
            _stop(server, signal.SIGINT)
            server = _start(command)
            told = False
    finally:
        _stop(server, signal.SIGINT)
        for wanted, handler in previous.items():
            signal.signal(wanted, handler)


def _start(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, start_new_session=os.name != "nt")


def _start_inspector(
    command: list[str], echo: Callable[[str], None]
) -> subprocess.Popen[bytes] | None:
    problem = missing_node()
    if problem is not None:
        echo(f"mcp-codegen dev: not starting the Inspector: {problem}")
        return None
    echo("mcp-codegen dev: starting the MCP Inspector")
    # Its own session: it is stopped as a whole (npx, node and their children).
    return subprocess.Popen(command, start_new_session=os.name != "nt")


def _stop(process: subprocess.Popen[bytes], how: signal.Signals) -> None:
    """Stop `process` and its process group with `how`, then SIGKILL."""
    if process.poll() is not None:
        return
    if os.name == "nt":
        process.terminate()
    else:
        os.killpg(process.pid, how)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        if os.name == "nt":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

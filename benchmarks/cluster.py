"""Several server instances on one Redis behind the round-robin proxy: the
harness of the multi-instance tests and benchmark.

    with ClusterHarness(3, redis_url=server.url, prefix="t:") as cluster:
        async with Client(cluster.url) as client: ...
        cluster.stop_instance(1, signal.SIGKILL)   # a crash; SIGTERM: graceful

Each instance is `python -m benchmarks.cluster_server` in its own process, on
its own free loopback port, with the same Redis and prefix (no Redis: each
keeps its state in memory, which makes sense for one instance only). Started
instances are waited for until `/healthz` answers 200. The proxy
(`benchmarks.proxy.RoundRobinProxy`) runs either in a thread of this process
(`proxy="thread"`, the tests: `cluster.proxy` is the object, so a test can
read its counts or `pin` it to one instance) or as its own process
(`proxy="process"`, the benchmark: its CPU time can be read like the
instances'); `proxy=None` starts none. Each process's stdout and stderr go to
a log file of the harness's temp folder (`log(index)`), quoted when one
fails to start.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx

from ._common import REPO, project_python
from .proxy import RoundRobinProxy

if TYPE_CHECKING:
    import uvicorn

HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0


def free_port() -> int:
    """A loopback port nothing listens on (just now)."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Instance:
    """One server process."""

    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path

    @property
    def base(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """Its MCP endpoint, bypassing the proxy."""
        return f"{self.base}/mcp"

    @property
    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc.poll() is None


class ClusterHarness:
    """N instances, one Redis, one proxy (see the module docstring).

    Args:
        count: how many instances.
        redis_url: the Redis they share (None: each in memory).
        prefix: their Redis key prefix (one per harness keeps tests apart).
        proxy: "thread", "process" or None.
    """

    def __init__(
        self,
        count: int = 3,
        *,
        redis_url: str | None = None,
        prefix: str = "mcp:",
        proxy: Literal["thread", "process"] | None = "thread",
    ) -> None:
        self.count = count
        self.redis_url = redis_url
        self.prefix = prefix
        self.proxy_mode = proxy
        self.instances: list[Instance] = []
        self.proxy: RoundRobinProxy | None = None
        self.proxy_proc: subprocess.Popen[bytes] | None = None
        self.proxy_port = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="mcp-cluster-")
        self._proxy_threads: list[tuple[uvicorn.Server, threading.Thread]] = []

    # -- URLs --

    @property
    def url(self) -> str:
        """The MCP endpoint through the proxy."""
        return f"http://{HOST}:{self.proxy_port}/mcp"

    # -- starting --

    def start(self) -> ClusterHarness:
        """Start the instances (concurrently), then the proxy."""
        try:
            names = [chr(ord("a") + n) for n in range(self.count)]
            self.instances = [self._spawn(name) for name in names]
            for index in range(self.count):
                self._wait_healthy_or_move(index)
            if self.proxy_mode is not None:
                self._start_proxy([i.base for i in self.instances])
        except BaseException:
            self.close()
            raise
        return self

    def _spawn(self, name: str, port: int | None = None) -> Instance:
        port = port or free_port()
        log_path = Path(self._tmp.name) / f"instance-{name}.log"
        argv = [
            project_python(),
            "-m",
            "benchmarks.cluster_server",
            "--port",
            str(port),
            "--name",
            name,
            "--prefix",
            self.prefix,
        ]
        if self.redis_url is not None:
            argv += ["--redis", self.redis_url]
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        return Instance(name, port, proc, log_path)

    def _wait_healthy(self, instance: Instance) -> None:
        """Wait until the instance answers as itself: `whoami` names it (a
        port freed by `free_port` may meanwhile be taken by another process,
        possibly an MCP server too, while this one fails to bind)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not instance.alive:
                raise RuntimeError(
                    f"instance {instance.name} exited with {instance.proc.returncode}:"
                    f"\n{self.log(instance)}"
                )
            with contextlib.suppress(httpx.HTTPError, ValueError, LookupError):
                if whoami(instance.url) == instance.name:
                    return
            time.sleep(0.05)
        raise RuntimeError(
            f"instance {instance.name} did not start:\n{self.log(instance)}"
        )

    def _wait_healthy_or_move(self, index: int, tries: int = 3) -> None:
        """`_wait_healthy`, starting the instance again on another port when
        its port was taken meanwhile."""
        for attempt in range(tries):
            instance = self.instances[index]
            try:
                self._wait_healthy(instance)
                return
            except RuntimeError:
                taken = "address already in use" in self.log(instance).lower()
                if not taken or attempt == tries - 1:
                    raise
            self.instances[index] = self._spawn(instance.name)

    def _start_proxy(self, upstreams: list[str]) -> None:
        if self.proxy_mode == "process":
            self.proxy_port = free_port()
            log_path = Path(self._tmp.name) / "proxy.log"
            argv = [
                project_python(),
                "-m",
                "benchmarks.proxy",
                "--port",
                str(self.proxy_port),
                *upstreams,
            ]
            with log_path.open("ab") as log:
                self.proxy_proc = subprocess.Popen(
                    argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log, stderr=log
                )
            _wait_listening(self.proxy_port, self.proxy_proc, log_path)
            return
        self.proxy, self.proxy_port = self.add_proxy()

    def add_proxy(self) -> tuple[RoundRobinProxy, int]:
        """Start one more proxy in front of the instances, in a thread of
        this process (a test routes one client apart from the others); the
        proxy and its port. Stopped by `close`."""
        import uvicorn

        proxy = RoundRobinProxy([i.base for i in self.instances])
        port = free_port()
        config = uvicorn.Config(
            proxy,
            host=HOST,
            port=port,
            log_level="critical",
            lifespan="on",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)
        self._proxy_threads.append((server, thread))
        return proxy, port

    # -- stopping --

    def stop_instance(self, index: int, sig: int = signal.SIGTERM) -> int:
        """Send `sig` to instance `index` and wait for it to exit; its exit
        status (SIGTERM: uvicorn's graceful shutdown; SIGKILL: a crash)."""
        proc = self.instances[index].proc
        if proc.poll() is None:
            proc.send_signal(sig)
        try:
            return proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()

    def close(self) -> None:
        """Stop the proxy and every instance; remove the logs."""
        for server, _ in self._proxy_threads:
            server.should_exit = True
        for _, thread in self._proxy_threads:
            thread.join(10)
        self._proxy_threads.clear()
        if self.proxy_proc is not None:
            _end(self.proxy_proc)
            self.proxy_proc = None
        for instance in self.instances:
            _end(instance.proc)
        self._tmp.cleanup()

    def log(self, instance: Instance | int) -> str:
        """What an instance printed so far."""
        if isinstance(instance, int):
            instance = self.instances[instance]
        try:
            return instance.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def __enter__(self) -> ClusterHarness:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.close()


WHOAMI = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "whoami",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}
WHOAMI_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "whoami",
}


def whoami(url: str) -> str:
    """The name the instance at `url` gives (a 2026 `tools/call whoami`)."""
    answer = httpx.post(url, json=WHOAMI, headers=WHOAMI_HEADERS, timeout=2)
    name: str = answer.json()["result"]["content"][0]["text"]
    return name


def _end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the proxy exited:\n{log.read_text(errors='replace')}")
        try:
            with socket.create_connection((HOST, port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("the proxy did not start listening")

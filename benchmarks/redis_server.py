"""A real `redis-server`: found or installed, then run privately on loopback.

Finding: `redis-server` on PATH, else the copy unpacked into
`.cache/peers/redis/` by an earlier unprivileged install.

Installing (Debian's `redis-server` package, which needs Redis 7.0 or newer):

- as root (CI): `apt-get install -y redis-server`, non-interactive, with
  service starts refused (a `policy-rc.d` answering 101 while apt runs, unless
  the machine already has one), running `apt-get update` first only when the
  package is not known yet;
- otherwise: `apt-get download` of `redis-server`, `redis-tools` and those of
  their libraries (`libjemalloc2`, `liblzf1`, ...) the machine lacks, each
  unpacked with `dpkg -x` into `.cache/peers/redis/`; the binary then runs
  with that folder's library directory on `LD_LIBRARY_PATH`.

`RedisServer` runs one: a free loopback port, its own temp folder, no
persistence (no RDB snapshot, no AOF) unless asked, stopped on exit. Tests
get one through the `redis_server` fixture of `tests/conftest.py`.

    python -m benchmarks.redis_server    # install (or find) it, print where
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .peers import PEERS_DIR, PeerInstallError, _install_lock, _quiet

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._common import Echo

REDIS_DIR = PEERS_DIR / "redis"
"""Where an unprivileged install unpacks the Debian packages."""

REDIS_MINIMUM = (7, 0)
"""The oldest Redis the runtime's stores accept (`PEXPIREAT ... GT`,
`ZRANGE ... BYLEX`)."""

PACKAGES = ("redis-server", "redis-tools")
"""The Debian packages holding the server (the binary is in redis-tools)."""

_POLICY_RC = Path("/usr/sbin/policy-rc.d")


@dataclass(frozen=True)
class RedisBinary:
    """A `redis-server` executable and the environment it runs in."""

    path: Path
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    def version(self) -> tuple[int, int, int]:
        """`redis-server --version`; `PeerInstallError` when it does not run."""
        try:
            proc = subprocess.run(
                [str(self.path), "--version"],
                capture_output=True,
                text=True,
                env=dict(self.env),
                check=False,
            )
        except OSError as exc:
            raise PeerInstallError(f"`{self.path} --version` failed: {exc}") from exc
        match = re.search(r"\bv=(\d+)\.(\d+)\.(\d+)", proc.stdout)
        if proc.returncode != 0 or match is None:
            raise PeerInstallError(
                f"`{self.path} --version` failed: {proc.stderr.strip()!r}"
            )
        major, minor, patch = (int(g) for g in match.groups())
        return major, minor, patch


def cached_binary(folder: Path = REDIS_DIR) -> RedisBinary:
    """The `redis-server` unpacked into `folder` (present or not)."""
    env = dict(os.environ)
    libs = [str(p) for p in sorted((folder / "usr" / "lib").glob("*-linux-gnu*"))]
    libs.append(str(folder / "usr" / "lib"))
    if env.get("LD_LIBRARY_PATH"):
        libs.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(libs)
    return RedisBinary(folder / "usr" / "bin" / "redis-server", env)


def find_redis_server(folder: Path = REDIS_DIR) -> RedisBinary | None:
    """`redis-server` on PATH, else the cached copy; None when neither runs."""
    on_path = shutil.which("redis-server")
    candidates = [RedisBinary(Path(on_path))] if on_path else []
    candidates.append(cached_binary(folder))
    for binary in candidates:
        if not binary.path.exists():
            continue
        with contextlib.suppress(PeerInstallError):
            if binary.version()[:2] >= REDIS_MINIMUM:
                return binary
    return None


def ensure_redis_server(echo: Echo | None = None) -> RedisBinary:
    """Find `redis-server`, installing it when missing (see the module)."""
    found = find_redis_server()
    if found is not None:
        return found
    with _install_lock(PEERS_DIR):
        found = find_redis_server()
        if found is not None:
            return found
        if os.geteuid() == 0:
            install_as_root(echo)
        else:
            install_unprivileged(REDIS_DIR, echo)
        found = find_redis_server()
    if found is None:
        raise PeerInstallError("redis-server was installed but does not run")
    return found


def _apt(args: list[str], what: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        proc = subprocess.run(
            args, capture_output=True, text=True, env=env, cwd=cwd, check=False
        )
    except OSError as exc:
        raise PeerInstallError(f"{what} failed: {exc}") from exc
    if proc.returncode != 0:
        raise PeerInstallError(f"{what} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def _known(package: str) -> bool:
    """Whether apt has `package` in its lists (before `apt-get update`, a
    fresh machine may have none)."""
    proc = subprocess.run(
        ["apt-cache", "show", "--no-all-versions", package],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode == 0 and "Package:" in proc.stdout


def _update_if_unknown(packages: tuple[str, ...], echo: Echo) -> None:
    if not all(_known(p) for p in packages):
        echo("apt-get update")
        _apt(["apt-get", "update", "-q"], "apt-get update")


def install_as_root(echo: Echo | None = None) -> None:
    """`apt-get install -y redis-server`, starting no service."""
    say = echo or _quiet
    _update_if_unknown(PACKAGES, say)
    say("apt-get install -y redis-server")
    command = [
        "apt-get",
        "install",
        "-y",
        "-q",
        "--no-install-recommends",
        "redis-server",
    ]
    if _POLICY_RC.exists():
        _apt(command, "apt-get install redis-server")
        return
    # Debian's maintainer scripts ask policy-rc.d whether they may start a
    # service; 101 means no. Only ours, and only while apt runs.
    _POLICY_RC.write_text("#!/bin/sh\nexit 101\n")
    try:
        _POLICY_RC.chmod(0o755)
        _apt(command, "apt-get install redis-server")
    finally:
        _POLICY_RC.unlink(missing_ok=True)


def _missing_libraries(packages: tuple[str, ...]) -> list[str]:
    """The library packages `packages` depend on that are not installed."""
    out = _apt(["apt-cache", "depends", "--important", *packages], "apt-cache depends")
    wanted = sorted(
        {m.group(1) for m in re.finditer(r"^\s+(?:Pre)?Depends: (lib\S+)", out, re.M)}
    )
    missing: list[str] = []
    for name in wanted:
        proc = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", name],
            capture_output=True,
            text=True,
            check=False,
        )
        if "install ok installed" not in proc.stdout:
            missing.append(name)
    return missing


def install_unprivileged(folder: Path = REDIS_DIR, echo: Echo | None = None) -> None:
    """`apt-get download` the packages (and missing libraries), `dpkg -x`
    them into `folder`. Needs apt's package lists, not root."""
    say = echo or _quiet
    if not all(_known(p) for p in PACKAGES):
        raise PeerInstallError(
            "apt knows no redis-server package: run `apt-get update` as root, "
            "or install redis-server"
        )
    packages = [*PACKAGES, *_missing_libraries(PACKAGES)]
    with tempfile.TemporaryDirectory() as tmp:
        say(f"apt-get download {' '.join(packages)}")
        _apt(["apt-get", "download", "-q", *packages], "apt-get download", Path(tmp))
        folder.mkdir(parents=True, exist_ok=True)
        for deb in sorted(Path(tmp).glob("*.deb")):
            say(f"dpkg -x {deb.name} {folder}")
            _apt(["dpkg", "-x", str(deb), str(folder)], f"dpkg -x {deb.name}")


# --------------------------------------------------------------------------
# Running one
# --------------------------------------------------------------------------


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def ping(port: int, timeout: float = 1.0) -> bool:
    """Whether a Redis on 127.0.0.1:`port` answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """A private `redis-server` on a free loopback port (a context manager).

    Args:
        binary: which server to run (default: `ensure_redis_server()`).
        persist: keep the data on disk (an append-only file in the temp
            folder); by default nothing is written.
        start_timeout: seconds to wait for the first PONG.
    """

    def __init__(
        self,
        binary: RedisBinary | None = None,
        *,
        persist: bool = False,
        start_timeout: float = 10.0,
    ) -> None:
        self.binary = binary or ensure_redis_server()
        self.persist = persist
        self.start_timeout = start_timeout
        self.port = 0
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """`redis://127.0.0.1:PORT/0`."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def folder(self) -> Path:
        """The server's working folder (its log, and data when persisting)."""
        assert self._tmp is not None, "the server is not running"
        return Path(self._tmp.name)

    def start(self) -> RedisServer:
        """Start it; a port taken meanwhile by someone else is tried again."""
        self._tmp = tempfile.TemporaryDirectory(prefix="redis-")
        for _ in range(5):
            self.port = free_port()
            if self._launch():
                return self
        self.stop()
        raise RuntimeError(f"redis-server did not start:\n{self.log()}")

    def _launch(self) -> bool:
        persistence = (
            ["--appendonly", "yes"] if self.persist else ["--appendonly", "no"]
        )
        argv = [
            str(self.binary.path),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--save", "",
            *persistence,
            "--daemonize", "no",
            "--logfile", str(self.folder / "redis.log"),
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            argv,
            env=dict(self.binary.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False  # most likely the port was taken meanwhile
            if ping(self.port, timeout=0.5):
                return True
            time.sleep(0.02)
        self._terminate()
        return False

    def log(self) -> str:
        """What the server logged so far."""
        try:
            return (self.folder / "redis.log").read_text(errors="replace")
        except (OSError, AssertionError):
            return ""

    def _terminate(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        self._terminate()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    binary = ensure_redis_server(print)
    print(f"{binary.path} {'.'.join(map(str, binary.version()))}")

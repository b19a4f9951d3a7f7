"""`benchmarks.redis_server`: the unprivileged install, and running a server."""

from __future__ import annotations

import socket

import pytest

from benchmarks.peers import PeerInstallError
from benchmarks.redis_server import (
    REDIS_DIR,
    REDIS_MINIMUM,
    RedisServer,
    cached_binary,
    find_redis_server,
    install_unprivileged,
    ping,
)


def command(port: int, *words: str) -> bytes:
    """One RESP command to 127.0.0.1:`port`, its raw reply."""
    wire = f"*{len(words)}\r\n".encode()
    for word in words:
        wire += f"${len(word.encode())}\r\n{word}\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(wire)
        return sock.recv(4096)


def test_the_unprivileged_install_gives_a_server_that_runs() -> None:
    """What a developer without root gets: the .debs unpacked into the cache,
    run with their libraries on LD_LIBRARY_PATH (downloaded once a machine)."""
    binary = cached_binary()
    if not binary.path.exists():
        try:
            install_unprivileged(REDIS_DIR)
        except PeerInstallError as exc:
            pytest.skip(f"apt cannot download redis-server here: {exc}")
    assert binary.version()[:2] >= REDIS_MINIMUM
    assert REDIS_DIR.as_posix() in binary.env["LD_LIBRARY_PATH"]
    with RedisServer(binary) as server:
        assert ping(server.port)


def test_a_found_server_is_recent_enough(redis_server: RedisServer) -> None:
    found = find_redis_server()
    assert found is not None and found.version()[:2] >= REDIS_MINIMUM


def test_the_test_server_keeps_nothing_on_disk(redis_server: RedisServer) -> None:
    port = redis_server.port
    assert command(port, "CONFIG", "GET", "save").endswith(b"$4\r\nsave\r\n$0\r\n\r\n")
    assert b"\r\nno\r\n" in command(port, "CONFIG", "GET", "appendonly")
    assert command(port, "CONFIG", "GET", "bind").endswith(b"127.0.0.1\r\n")


def test_a_persisting_server_writes_an_append_only_file() -> None:
    with RedisServer(persist=True) as server:
        assert command(server.port, "SET", "k", "v") == b"+OK\r\n"
        assert b"\r\nyes\r\n" in command(server.port, "CONFIG", "GET", "appendonly")
        assert (server.folder / "appendonlydir").is_dir()
        folder = server.folder
    assert not folder.exists()
    assert not ping(server.port)

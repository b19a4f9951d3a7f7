"""`examples/protected_server.py` (an `App` behind `ResourceServer` +
`JwtVerifier`) against the official SDK clients' own OAuth flows.

Beside it runs the test-only authorization server of
`programs/mini_authorization_server.py` (metadata, dynamic registration, a
scripted login, PKCE-checked code exchange, RS256 JWTs for the `resource`
asked), in a process of its own. A real authorization server from a registry
(`oidc-provider`) is planned; until then this small one is the unavoidable
stand-in. Both run for the whole module on free loopback ports; their stderr
must stay empty.

The clients: the Python SDK (`mcp==2.3.0`, `OAuthClientProvider`, in its
legacy and 2026-07-28 modes) and the TypeScript SDK
(`@modelcontextprotocol/sdk@1.32.2`, its `OAuthClientProvider` interface).
Each starts with no token: it gets 401, reads our protected resource
metadata, discovers the authorization server, registers, authorizes with
PKCE S256 and `resource` = our URL, and calls `whoami` with the JWT, which our
server verifies against the issuer's JWKS. Calling `write` (it needs
`mcp:write`) gets 403 `insufficient_scope`; the client steps up, asking for
the scopes our challenge names, and the retry succeeds.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from benchmarks import peers
from benchmarks._common import REPO

PROGRAMS = Path(__file__).parent / "programs"
AUTHORIZATION_SERVER = PROGRAMS / "mini_authorization_server.py"
EXAMPLE = REPO / "examples" / "protected_server.py"
PYTHON_CLIENT = PROGRAMS / "python_sdk_oauth_client.py"
TS_CLIENT = PROGRAMS / "ts_sdk_oauth_client.mjs"
CLIENT_TIMEOUT = 90.0
READY_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Process:
    """A server process, its stderr kept in a file."""

    def __init__(self, command: list[str]) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            # Unbuffered, so that `select` sees every line not yet read.
            bufsize=0,
        )

    def line(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().decode() if ready else ""

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def stop(self) -> str:
        """End the process; what it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        errors = self.errors()
        self.stderr.close()
        return errors


class ProtectedServer:
    """The authorization server and the example, each in its process."""

    def __init__(self) -> None:
        as_port, port = free_port(), free_port()
        self.issuer = f"http://127.0.0.1:{as_port}"
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.authorization = Process(
            [sys.executable, str(AUTHORIZATION_SERVER), str(as_port)]
        )
        ready = self.authorization.line(READY_TIMEOUT)
        assert ready == f"READY {self.issuer}\n", self.authorization.errors()
        self.example = Process(
            [
                sys.executable,
                str(EXAMPLE),
                "--port",
                str(port),
                "--issuer-url",
                self.issuer,
                "--resource-url",
                self.url,
            ]
        )
        self._wait_listening(port)

    def _wait_listening(self, port: int) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            assert self.example.proc.poll() is None, self.example.errors()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the example did not start listening")

    def grants(self) -> list[dict[str, Any]]:
        """The tokens issued since the last call (their `GRANT` lines)."""
        found: list[dict[str, Any]] = []
        while line := self.authorization.line(0.2):
            assert line.startswith("GRANT "), line
            found.append(json.loads(line.removeprefix("GRANT ")))
        return found

    def stop(self) -> dict[str, str]:
        """End both; what each wrote on stderr."""
        return {
            "example": self.example.stop(),
            "authorization server": self.authorization.stop(),
        }


@pytest.fixture(scope="module")
def server() -> Iterator[ProtectedServer]:
    running = ProtectedServer()
    try:
        yield running
    finally:
        errors = running.stop()
        assert errors == {"example": "", "authorization server": ""}


def peer_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return report


def check_flow(report: dict[str, Any], grants: list[dict[str, Any]], url: str) -> None:
    """Signed in, called, stepped up, called again: see the module docstring."""
    assert report["tools_before"] == ["whoami"]  # `write` hidden without its scope
    assert report["whoami_before"] == "interop-user mcp:read"
    assert report["write"] == "wrote x"
    assert report["whoami_after"] == "interop-user mcp:read mcp:write"
    asked = report["authorizations"]
    assert [a["scope"] for a in asked] == ["mcp:read", "mcp:read mcp:write"]
    assert {a["resource"] for a in asked} == {url}
    assert {a["code_challenge_method"] for a in asked} == {"S256"}
    codes = [g for g in grants if g["grant"] == "authorization_code"]
    assert [g["scope"] for g in codes] == ["mcp:read", "mcp:read mcp:write"]
    assert {g["resource"] for g in grants} == {url}


@pytest.fixture(scope="module")
def peer_python() -> Path:
    return peers.ensure_python_peers(print)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_python_sdk_client_signs_in_and_steps_up(
    server: ProtectedServer, peer_python: Path, mode: str
) -> None:
    server.grants()
    report = run([str(peer_python), str(PYTHON_CLIENT), mode, server.url], peer_env())
    check_flow(report, server.grants(), server.url)


@pytest.fixture(scope="module")
def node() -> Path:
    peers.ensure_node_peers(print)
    return peers.node_executable()


def test_the_typescript_sdk_client_signs_in_and_steps_up(
    server: ProtectedServer, node: Path
) -> None:
    """Over a 2025-11-25 session (the SDK's newest revision); its provider
    keeps no refresh token (see the program) so that its step-up re-authorizes."""
    server.grants()
    report = run([str(node), str(TS_CLIENT), server.url], dict(os.environ))
    check_flow(report, server.grants(), server.url)

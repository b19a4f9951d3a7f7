"""oidc-provider and `examples/protected_server.py`, each in its process:
the deployment the end-to-end OAuth tests (`test_oidc_*.py`) run against.

`Deployment` starts `programs/oidc_provider.mjs` (on the Node.js 22 of
`.cache/peers/`, installed by `benchmarks.node22`), which picks its own free
port and prints `READY <issuer>`, then the example twice in front of it: once
taking its JWTs, once introspecting its opaque tokens. The `deployment`
fixture (`conftest.py`) runs one for the session.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import httpx

from benchmarks._common import REPO
from tests.peers.stderr import without_start_line

OIDC_PROVIDER = Path(__file__).parent / "programs" / "oidc_provider.mjs"
EXAMPLE = REPO / "examples" / "protected_server.py"
READY_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Process:
    """A server process, its stderr kept in a file."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
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
        return without_start_line(self.stderr.read().decode(errors="replace"))

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


class Deployment:
    """oidc-provider and the protected example twice, each in its process:
    at `url` taking JWTs, at `opaque_url` taking opaque tokens it asks the
    provider about (RFC 7662 introspection, as the provider's confidential
    client `mcp-resource-server`). `opaque_elsewhere` is another resource the
    provider issues opaque tokens for, served by nobody."""

    def __init__(self, node: Path) -> None:
        port, opaque_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.opaque_url = f"http://127.0.0.1:{opaque_port}/mcp"
        self.opaque_elsewhere = f"http://127.0.0.1:{free_port()}/mcp"
        secret = secrets.token_urlsafe(24)
        provider_env = dict(os.environ)
        provider_env["MCP_OPAQUE_RESOURCES"] = (
            f"{self.opaque_url} {self.opaque_elsewhere}"
        )
        provider_env["MCP_INTROSPECTION_SECRET"] = secret
        self.provider = Process([str(node), str(OIDC_PROVIDER)], provider_env)
        ready = self.provider.line(READY_TIMEOUT)
        assert ready.startswith("READY http://127.0.0.1:"), self.provider.errors()
        self.issuer = ready.removeprefix("READY ").strip()
        self.example = self._example(port, self.url, {})
        discovery = httpx.get(f"{self.issuer}/.well-known/openid-configuration")
        self.introspecting = self._example(
            opaque_port,
            self.opaque_url,
            {
                "MCP_INTROSPECTION_ENDPOINT": discovery.json()[
                    "introspection_endpoint"
                ],
                "MCP_CLIENT_ID": "mcp-resource-server",
                "MCP_CLIENT_SECRET": secret,
            },
        )
        for port_, process in ((port, self.example), (opaque_port, self.introspecting)):
            self._wait_listening(port_, process)

    def _example(self, port: int, url: str, settings: dict[str, str]) -> Process:
        env = {**os.environ, "MCP_ISSUER_URL": self.issuer, **settings}
        command = [sys.executable, str(EXAMPLE), "--port", str(port)]
        return Process([*command, "--resource-url", url], env)

    def _wait_listening(self, port: int, example: Process) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            assert example.proc.poll() is None, example.errors()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the example did not start listening")

    def grants(self) -> list[dict[str, Any]]:
        """The tokens issued since the last call (their `GRANT` lines)."""
        found: list[dict[str, Any]] = []
        while line := self.provider.line(0.2):
            assert line.startswith("GRANT "), line
            found.append(json.loads(line.removeprefix("GRANT ")))
        return found

    def stop(self) -> dict[str, str]:
        """End all three; what each wrote on stderr."""
        return {
            "example": self.example.stop(),
            "introspecting example": self.introspecting.stop(),
            "oidc-provider": self.provider.stop(),
        }

"""The real MCP peers install, run, and behave as documented here.

`benchmarks.peers` installs them (pinned, cached under `.cache/peers/`); these
tests talk to each stdio server with plain `subprocess` and raw newline-delimited
JSON-RPC, no project code, so they pin down exactly what later interop tests can
rely on. The three stdio servers:

- python-sdk: `programs/python_sdk_echo_server.py`, PyPI `mcp==2.3.0`'s
  `MCPServer`, run with the peer venv's python;
- typescript-sdk: `programs/ts_sdk_echo_server.mjs`, npm
  `@modelcontextprotocol/sdk@1.32.2`'s `McpServer`, run with node;
- server-everything: npm `@modelcontextprotocol/server-everything`, its `stdio`
  transport (`benchmarks.peers.server_everything_command()`).

What they do, as asserted below:

- initialize: each answers the offered version when it is one of 2024-11-05,
  2025-03-26, 2025-06-18, 2025-11-25, and 2025-11-25 for anything else
  (2026-07-28 included: it is not reachable through the handshake).
- None needs `notifications/initialized` before `tools/list`. The TypeScript
  servers even answer `tools/list` with no `initialize` at all; the Python SDK
  answers it -32602 (it reads an envelope-less, handshake-less request as a
  malformed 2026-07-28 one). `ping` is answered `{}` before initialize by all.
- 2026-07-28: only the Python SDK speaks it. `server/discover` carrying the
  `_meta` envelope (`io.modelcontextprotocol/protocolVersion`,
  `.../clientInfo`, `.../clientCapabilities`) answers supportedVersions
  ["2026-07-28"], and enveloped requests work with no handshake; the first
  request locks the connection's era (see
  `test_python_sdk_locks_each_connection_to_one_era`). The TypeScript SDK and
  server-everything answer `server/discover` -32601 and ignore the envelope.
- echo: the SDK servers answer the message unchanged (the Python SDK adds
  `structuredContent: {"result": message}` and `isError: false`);
  server-everything answers "Echo: " + message. server-everything also sends
  `notifications/tools/list_changed` once `initialized` arrives.
- Unparseable lines and JSON arrays (batches) get no answer at all, from any.
- Closing stdin ends each server promptly with exit code 0.
- stderr: silent, but for server-everything's "Starting default (STDIO)
  server..." line, and the Python SDK's one-line log of a failed tool call.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from benchmarks import peers
from benchmarks._common import REPO

PROGRAMS = Path(__file__).parent / "programs"
PYTHON_ECHO_SERVER = PROGRAMS / "python_sdk_echo_server.py"
TS_ECHO_SERVER = PROGRAMS / "ts_sdk_echo_server.mjs"
PYTHON_CLIENT = PROGRAMS / "python_sdk_client.py"

READ_TIMEOUT = 30.0
"""Seconds to wait for one answer (the Python SDK takes ~1 s to import)."""
EXIT_TIMEOUT = 10.0
"""Seconds a server may take to exit once its stdin is closed."""

MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
"""Echoed by every server: non-ASCII, quotes, a backslash and a newline."""

CLIENT_INFO = {"name": "mcp-codegen-peer-tests", "version": "0.0.0"}
INITIALIZE_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": CLIENT_INFO,
}
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}
"""The `_meta` keys every 2026-07-28 request carries (there is no handshake)."""

METHOD_NOT_FOUND = -32601
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
UNSUPPORTED_PROTOCOL_VERSION = -32022


# --------------------------------------------------------------------------
# Peers and the servers they provide
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Installed:
    python: Path
    node_project: Path


@pytest.fixture(scope="module")
def installed() -> Installed:
    python, project = peers.ensure_all_peers(print)
    return Installed(python, project)


def peer_env() -> dict[str, str]:
    """This environment without anything that would steer the peer venv's python."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


@dataclass(frozen=True)
class Server:
    id: str
    argv: Callable[[Installed], list[str]]
    name: str
    """serverInfo.name"""
    echo: Callable[[str], str]
    """The text its echo tool answers for a message."""
    structured_echo: Callable[[str], Any] | None
    """Its echo result's structuredContent, None when it sends none."""
    answers_before_initialize: bool
    """Whether it answers tools/list sent before any initialize."""
    modern: bool
    """Whether it speaks 2026-07-28 (server/discover, the _meta envelope)."""
    notifications: frozenset[str]
    """The notifications it may send in a plain initialize/list/call session."""
    stderr: tuple[str, ...]
    """What a clean session prints on stderr, line by line."""


SERVERS = (
    Server(
        id="python-sdk",
        argv=lambda peer: [str(peer.python), str(PYTHON_ECHO_SERVER)],
        name="python-sdk-echo",
        echo=lambda message: message,
        structured_echo=lambda message: {"result": message},
        answers_before_initialize=False,
        modern=True,
        notifications=frozenset(),
        stderr=(),
    ),
    Server(
        id="typescript-sdk",
        argv=lambda peer: [str(peers.node_executable()), str(TS_ECHO_SERVER)],
        name="typescript-sdk-echo",
        echo=lambda message: message,
        structured_echo=None,
        answers_before_initialize=True,
        modern=False,
        notifications=frozenset(),
        stderr=(),
    ),
    Server(
        id="server-everything",
        argv=lambda peer: peers.server_everything_command("stdio", peer.node_project),
        name="mcp-servers/everything",
        echo=lambda message: f"Echo: {message}",
        structured_echo=None,
        answers_before_initialize=True,
        modern=False,
        notifications=frozenset({"notifications/tools/list_changed"}),
        stderr=("Starting default (STDIO) server...",),
    ),
)
SERVER_BY_ID = {server.id: server for server in SERVERS}
each_server = pytest.mark.parametrize("server", SERVERS, ids=lambda s: s.id)


# --------------------------------------------------------------------------
# A raw stdio JSON-RPC peer
# --------------------------------------------------------------------------


class _Pump:
    """Reads a pipe line by line on a thread: into a queue and a list."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.lines: list[str] = []
        self.queue: queue.Queue[str | None] = queue.Queue()
        self._stream = stream
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for raw in self._stream:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            self.lines.append(line)
            self.queue.put(line)
        self.queue.put(None)

    def get(self, deadline: float) -> str | None:
        """The next line; None at end of stream. AssertionError at the deadline."""
        try:
            return self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError("timed out waiting for output") from None

    def wait_for(self, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            line = self.get(deadline)
            if line is None:
                raise AssertionError(f"stream ended before {needle!r}: {self.lines}")
            if needle in line:
                return

    def join(self) -> None:
        self._thread.join(timeout=EXIT_TIMEOUT)
        self._stream.close()


class StdioPeer:
    """A server subprocess spoken to in newline-delimited JSON-RPC over stdio."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=peer_env(),
            cwd=REPO,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._stdout = _Pump(self.proc.stdout)
        self._stderr = _Pump(self.proc.stderr)
        self._next_id = 0
        self.notifications: list[dict[str, Any]] = []
        """Notifications received while waiting for answers, in order."""
        self.others: list[dict[str, Any]] = []
        """Anything else received while waiting: stray answers, server requests."""

    def __enter__(self) -> StdioPeer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=EXIT_TIMEOUT)
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        self._stdout.join()
        self._stderr.join()

    # writing
    def send_line(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any] | list[Any]) -> None:
        self.send_line(json.dumps(message, ensure_ascii=False))

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id}
        message["method"] = method
        if params is not None:
            message["params"] = params
        self.send(message)
        return self._next_id

    # reading
    def answer(self, request_id: int, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        """The answer to `request_id`, collecting whatever comes before it."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._stdout.get(deadline)
            if line is None:
                raise AssertionError(
                    f"{self.argv[-1]} closed stdout before answering {request_id}; "
                    f"stderr: {self.stderr_lines()}"
                )
            message = json.loads(line)
            assert isinstance(message, dict), line
            assert message.get("jsonrpc") == "2.0", line
            if message.get("id") == request_id and "method" not in message:
                assert ("result" in message) != ("error" in message), line
                return message
            if "id" not in message and "method" in message:
                self.notifications.append(message)
            else:
                self.others.append(message)

    def request(
        self, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.answer(self.send_request(method, params))

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def error(self, method: str, params: dict[str, Any] | None = None) -> Any:
        reply = self.request(method, params)
        assert "error" in reply, reply
        return reply["error"]

    def initialize(self, version: str = "2025-06-18") -> dict[str, Any]:
        result: dict[str, Any] = self.result(
            "initialize", {**INITIALIZE_PARAMS, "protocolVersion": version}
        )
        return result

    # ending
    def close(self) -> int:
        """Close stdin; the server must exit by itself within EXIT_TIMEOUT."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{self.argv} still running {EXIT_TIMEOUT} s after stdin closed"
            ) from None

    def stderr_lines(self) -> list[str]:
        return list(self._stderr.lines)

    def finish(self) -> list[str]:
        """close() asserting exit code 0; then the whole of stderr, by lines."""
        assert self.close() == 0, self.stderr_lines()
        self._stderr.join()
        return self.stderr_lines()


@contextlib.contextmanager
def spawn(server: Server, peer: Installed) -> Iterator[StdioPeer]:
    with StdioPeer(server.argv(peer)) as process:
        yield process


# --------------------------------------------------------------------------
# Installation
# --------------------------------------------------------------------------


def test_peers_are_installed_at_their_pins(installed: Installed) -> None:
    assert installed.python == peers.VENV / "bin" / "python"
    assert installed.node_project == peers.NODE_DIR
    assert peers.installed_versions() == peers.PYTHON_PEERS
    assert peers.PYTHON_PEERS == {"mcp-types": "2.3.0", "mcp": "2.3.0"}
    assert peers.installed_node_versions() == peers.NODE_PEERS
    manifest = json.loads((peers.NODE_DIR / "package.json").read_text("utf-8"))
    assert manifest["dependencies"] == peers.NODE_PEERS
    assert int(peers.node_version().split(".")[0]) >= peers.MIN_NODE_MAJOR


def test_the_typescript_sdk_v2_has_a_node_project_of_its_own() -> None:
    project = peers.ensure_node_v2_peers()
    assert project == peers.NODE_V2_DIR != peers.NODE_DIR
    found = peers.installed_node_versions(project, peers.NODE_V2_PEERS)
    assert (
        found
        == peers.NODE_V2_PEERS
        == {
            "@modelcontextprotocol/server": "2.4.0",
            "@modelcontextprotocol/node": "2.1.2",
        }
    )
    manifest = json.loads((project / "package.json").read_text("utf-8"))
    assert manifest["dependencies"] == peers.NODE_V2_PEERS


def test_ensuring_installed_peers_is_fast(installed: Installed) -> None:
    said: list[str] = []
    started = time.perf_counter()
    assert peers.ensure_all_peers(said.append) == (
        installed.python,
        installed.node_project,
    )
    elapsed = time.perf_counter() - started
    assert said == []  # nothing to install, nothing said
    assert elapsed < 1.0


def test_cli_installs_and_prints_the_pins(installed: Installed) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.peers", "all"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"python peers: {installed.python}"
    assert json.loads(lines[1]) == peers.PYTHON_PEERS
    assert lines[2].startswith(f"node peers: {installed.node_project} (node ")
    assert json.loads(lines[3]) == peers.NODE_PEERS


def test_cli_rejects_an_unknown_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert peers.main(["ruby"]) == 2
    assert (
        "usage: python -m benchmarks.peers [python|node|node-sdk2|all]"
        in capsys.readouterr().err
    )


def test_missing_node_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(peers.PeerInstallError, match=r"`node` is not on PATH"):
        peers.ensure_node_peers(project=tmp_path / "node")
    assert not (tmp_path / "node").exists()


def test_missing_npm_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = peers.node_executable()
    only_node = tmp_path / "bin"
    only_node.mkdir()
    (only_node / "node").symlink_to(node)
    monkeypatch.setenv("PATH", str(only_node))
    with pytest.raises(peers.PeerInstallError, match=r"`npm` is not on PATH"):
        peers.ensure_node_peers(project=tmp_path / "node")


# --------------------------------------------------------------------------
# The stdio servers, raw
# --------------------------------------------------------------------------


@each_server
def test_stdio_session(server: Server, installed: Installed) -> None:
    with spawn(server, installed) as peer:
        init = peer.initialize("2025-06-18")
        assert init["protocolVersion"] == "2025-06-18"
        assert init["serverInfo"]["name"] == server.name
        assert "tools" in init["capabilities"]
        peer.notify("notifications/initialized")

        tools = peer.result("tools/list")["tools"]
        echo = next(tool for tool in tools if tool["name"] == "echo")
        schema = echo["inputSchema"]
        assert schema["type"] == "object"
        assert schema["required"] == ["message"]
        assert schema["properties"]["message"]["type"] == "string"

        called = peer.result(
            "tools/call", {"name": "echo", "arguments": {"message": MESSAGE}}
        )
        assert called["content"] == [{"type": "text", "text": server.echo(MESSAGE)}]
        assert called.get("isError", False) is False
        structured = server.structured_echo
        assert called.get("structuredContent") == (
            None if structured is None else structured(MESSAGE)
        )

        assert {n["method"] for n in peer.notifications} <= server.notifications
        assert peer.others == []
        assert peer.finish() == list(server.stderr)


@each_server
def test_initialize_version_negotiation(server: Server, installed: Installed) -> None:
    answered_by_offer = {
        "2024-11-05": "2024-11-05",
        "2025-03-26": "2025-03-26",
        "2025-06-18": "2025-06-18",
        "2025-11-25": "2025-11-25",
        MODERN: "2025-11-25",
        "1999-01-01": "2025-11-25",
    }
    with contextlib.ExitStack() as stack:
        # One process per offer, all started at once: the Python SDK's start-up
        # (about a second) then overlaps.
        running = {
            offer: stack.enter_context(spawn(server, installed))
            for offer in answered_by_offer
        }
        pending = {
            offer: peer.send_request(
                "initialize", {**INITIALIZE_PARAMS, "protocolVersion": offer}
            )
            for offer, peer in running.items()
        }
        answered = {
            offer: running[offer].answer(request_id)["result"]["protocolVersion"]
            for offer, request_id in pending.items()
        }
        assert answered == answered_by_offer
        for peer in running.values():
            assert peer.close() == 0


@each_server
def test_initialized_notification_is_not_required(
    server: Server, installed: Installed
) -> None:
    with spawn(server, installed) as peer:
        peer.initialize()
        tools = peer.result("tools/list")["tools"]
        assert "echo" in {tool["name"] for tool in tools}
        assert peer.notifications == []  # list_changed only follows `initialized`
        peer.finish()


@each_server
def test_requests_before_initialize(server: Server, installed: Installed) -> None:
    with spawn(server, installed) as pinged, spawn(server, installed) as listed:
        assert pinged.result("ping") == {}
        reply = listed.request("tools/list")
        if server.answers_before_initialize:
            assert "echo" in {tool["name"] for tool in reply["result"]["tools"]}
        else:
            assert reply["error"]["code"] == INVALID_PARAMS
        pinged.finish()
        listed.finish()


@each_server
def test_unparseable_lines_and_batches_get_no_answer(
    server: Server, installed: Installed
) -> None:
    with spawn(server, installed) as peer:
        peer.send_line("this is not json")
        peer.send_line("{")
        peer.send([{"jsonrpc": "2.0", "id": 900, "method": "ping"}])
        peer.send({"jsonrpc": "2.0", "id": 901, "method": "ping"})
        # Everything is answered in order on stdio, so an answer to one of the
        # bad lines would have come first.
        assert peer.answer(901)["result"] == {}
        assert peer.others == []
        assert peer.initialize()["serverInfo"]["name"] == server.name
        peer.finish()


@each_server
def test_unknown_tool_and_method(server: Server, installed: Installed) -> None:
    with spawn(server, installed) as peer:
        peer.initialize()
        peer.notify("notifications/initialized")
        unknown = peer.result("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["isError"] is True  # a tool result, not a JSON-RPC error
        assert "nope" in unknown["content"][0]["text"]
        invalid = peer.result("tools/call", {"name": "echo", "arguments": {}})
        assert invalid["isError"] is True
        assert peer.error("nope/nope")["code"] == METHOD_NOT_FOUND
        stderr = peer.finish()
    if server.id == "python-sdk":
        assert stderr == [
            "Tool 'nope' failed: 'Unknown tool: nope'",
            "Tool 'echo' rejected arguments: ['message']",
        ]
    else:
        assert stderr == list(server.stderr)


# --------------------------------------------------------------------------
# 2026-07-28: server/discover and the per-request envelope
# --------------------------------------------------------------------------


@each_server
def test_server_discover(server: Server, installed: Installed) -> None:
    with spawn(server, installed) as peer:
        reply = peer.request("server/discover", {"_meta": ENVELOPE})
        if not server.modern:
            assert reply["error"]["code"] == METHOD_NOT_FOUND
            # The envelope is ignored: an enveloped call is served as a legacy one.
            called = peer.result(
                "tools/call",
                {"name": "echo", "arguments": {"message": "x"}, "_meta": ENVELOPE},
            )
            assert called["content"] == [{"type": "text", "text": server.echo("x")}]
            peer.finish()
            return
        discovered = reply["result"]
        assert discovered["supportedVersions"] == [MODERN]
        assert "tools" in discovered["capabilities"]
        assert discovered["resultType"] == "complete"
        assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"] == {
            "name": server.name,
            "version": "1.0.0",
        }
        tools = peer.result("tools/list", {"_meta": ENVELOPE})
        assert [tool["name"] for tool in tools["tools"]] == ["echo"]
        assert tools["resultType"] == "complete"
        called = peer.result(
            "tools/call",
            {"name": "echo", "arguments": {"message": MESSAGE}, "_meta": ENVELOPE},
        )
        assert called["content"] == [{"type": "text", "text": MESSAGE}]
        assert called["structuredContent"] == {"result": MESSAGE}
        assert called["resultType"] == "complete"
        assert peer.finish() == []


def test_python_sdk_locks_each_connection_to_one_era(installed: Installed) -> None:
    server = SERVER_BY_ID["python-sdk"]
    with contextlib.ExitStack() as stack:
        # All started at once so that their start-ups overlap.
        legacy, modern, refused_first, ping_first, bare = (
            stack.enter_context(spawn(server, installed)) for _ in range(5)
        )

        # Handshake first: the connection serves the legacy era only.
        legacy.initialize()
        legacy.notify("notifications/initialized")
        assert legacy.error("server/discover", {"_meta": ENVELOPE})["code"] == (
            INVALID_REQUEST
        )
        assert legacy.error("tools/list", {"_meta": ENVELOPE})["code"] == (
            INVALID_REQUEST
        )

        # Discover first: 2026-07-28 only.
        modern.result("server/discover", {"_meta": ENVELOPE})
        refused = modern.error("initialize", INITIALIZE_PARAMS)
        assert refused["code"] == UNSUPPORTED_PROTOCOL_VERSION
        assert refused["data"] == {"supported": [MODERN], "requested": "2025-06-18"}
        assert modern.error("tools/list")["code"] == INVALID_PARAMS  # no envelope

        # An unknown modern version is refused, and that too locks the era.
        future = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        refused = refused_first.error("server/discover", {"_meta": future})
        assert refused["code"] == UNSUPPORTED_PROTOCOL_VERSION
        assert refused["data"] == {"supported": [MODERN], "requested": "2099-01-01"}
        assert refused_first.error("initialize", INITIALIZE_PARAMS)["code"] == (
            UNSUPPORTED_PROTOCOL_VERSION
        )
        discovered = refused_first.result("server/discover", {"_meta": ENVELOPE})
        assert discovered["supportedVersions"] == [MODERN]

        # An envelope-less ping first: legacy era, initialize still welcome.
        assert ping_first.result("ping") == {}
        assert ping_first.error("server/discover", {"_meta": ENVELOPE})["code"] == (
            INVALID_REQUEST
        )
        assert ping_first.initialize()["protocolVersion"] == "2025-06-18"

        # Without the envelope `server/discover` is not a known method.
        assert bare.error("server/discover")["code"] == METHOD_NOT_FOUND

        for peer in (legacy, modern, refused_first, ping_first, bare):
            assert peer.finish() == []


# --------------------------------------------------------------------------
# The official Python SDK's client
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server_id", "mode", "negotiated"),
    [
        ("python-sdk", "legacy", "2025-11-25"),
        ("python-sdk", "auto", MODERN),
        ("python-sdk", MODERN, MODERN),
        ("typescript-sdk", "auto", "2025-11-25"),
        ("server-everything", "auto", "2025-11-25"),
    ],
)
def test_python_sdk_client(
    server_id: str, mode: str, negotiated: str, installed: Installed
) -> None:
    server = SERVER_BY_ID[server_id]
    proc = subprocess.run(
        [
            str(installed.python),
            str(PYTHON_CLIENT),
            mode,
            MESSAGE,
            "--",
            *server.argv(installed),
        ],
        cwd=REPO,
        env=peer_env(),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # The client passes the server's stderr through.
    assert proc.stderr.splitlines() == list(server.stderr)
    report = json.loads(proc.stdout)
    assert report["protocol_version"] == negotiated
    if mode == MODERN:  # adopted without a probe: the server never named itself
        assert report["server_info"] is None
    else:
        assert report["server_info"]["name"] == server.name
    assert "echo" in report["tools"]
    assert report["echo"] == {"is_error": False, "texts": [server.echo(MESSAGE)]}


# --------------------------------------------------------------------------
# The conformance suite (Streamable HTTP only), against server-everything
# --------------------------------------------------------------------------


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_conformance_suite_runs(installed: Installed, tmp_path: Path) -> None:
    version = subprocess.run(
        [*peers.conformance_command(), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert version.stdout.strip() == peers.CONFORMANCE_VERSION

    port = _free_loopback_port()
    http = subprocess.Popen(
        peers.server_everything_command("streamableHttp", installed.node_project),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**peer_env(), "PORT": str(port)},
        cwd=tmp_path,
    )
    assert http.stderr is not None
    log = _Pump(http.stderr)
    try:
        log.wait_for(f"listening on port {port}", timeout=READ_TIMEOUT)
        for scenario in ("server-initialize", "tools-list"):
            out = tmp_path / scenario
            proc = subprocess.run(
                [
                    *peers.conformance_command(),
                    "server",
                    "--url",
                    f"http://127.0.0.1:{port}/mcp",
                    "--scenario",
                    scenario,
                    "--output-dir",
                    str(out),
                ],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "Passed: 1/1, 0 failed" in proc.stdout
            (checks_file,) = out.glob("*/checks.json")
            checks = json.loads(checks_file.read_text("utf-8"))
            assert [check["status"] for check in checks] == ["SUCCESS"]
    finally:
        http.terminate()
        http.wait(timeout=EXIT_TIMEOUT)
        log.join()

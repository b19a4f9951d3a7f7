"""Tasks kept in SQLite survive a server killed with SIGKILL, within their TTL.

A real server process (`task_restart_server.py`, Streamable HTTP, 2025-11-25
tasks) creates tasks and is killed; another one on the same file answers
`tasks/get`, `tasks/result` and `tasks/list` for them, to their owner only.
A task that was `working` when its process died is `failed` with "The server
stopped before the task finished." (nothing can finish it), and after the
TTL no task is found.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

SERVER = Path(__file__).with_name("task_restart_server.py")
LIMIT = 30.0
PROTOCOL = "2025-11-25"
TTL_MS = 60_000
STOPPED = "The server stopped before the task finished."


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    """One server process on the task file, killed with SIGKILL at the end."""

    def __init__(self, db: Path | str, clock_offset_s: float = 0.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), str(db), str(self.port), str(clock_offset_s)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + LIMIT
        while True:
            assert self.process.poll() is None, "the server exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                assert time.monotonic() < deadline, "the server does not listen"
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()


class Session:
    """A 2025-11-25 session of `user` over Streamable HTTP."""

    def __init__(self, server: Server, user: str) -> None:
        self.url = server.url
        self.client = httpx.Client(timeout=LIMIT)
        try:
            self._start(user)
        except BaseException:
            self.client.close()
            raise

    def _start(self, user: str) -> None:
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "x-test-user": user,
        }
        self.ids = iter(range(1, 1_000_000))
        started = self.send(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "restart-test", "version": "1"},
            },
        )
        assert started["result"]["capabilities"]["tasks"]["requests"] == {
            "tools": {"call": {}}
        }
        self.headers["MCP-Protocol-Version"] = PROTOCOL
        notified = self.client.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=self.headers,
        )
        assert notified.status_code == 202, notified.text

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC answer to one request (a JSON body or an SSE event)."""
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        response = self.client.post(
            self.url, json={**body, "params": params}, headers=self.headers
        )
        assert response.status_code == 200, response.text
        if "mcp-session-id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        if response.headers["content-type"].startswith("text/event-stream"):
            events = [
                json.loads(line.removeprefix("data:"))
                for line in response.text.splitlines()
                if line.startswith("data:") and line.removeprefix("data:").strip()
            ]
            answer: dict[str, Any] = next(e for e in events if "id" in e)
            return answer
        message: dict[str, Any] = response.json()
        return message

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.send(method, params)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def call_as_task(self, name: str, arguments: dict[str, Any]) -> str:
        created = self.result(
            "tools/call",
            {"name": name, "arguments": arguments, "task": {"ttl": TTL_MS}},
        )
        task_id: str = created["task"]["taskId"]
        return task_id

    def status(self, task_id: str) -> str:
        status: str = self.result("tasks/get", {"taskId": task_id})["status"]
        return status

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        self.client.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "tasks.db"


@pytest.fixture
def first_life(db: Path) -> Iterator[tuple[str, str]]:
    """(finished, running): two tasks of alice's, made by a server that was
    then killed with SIGKILL while `running` was still working."""
    server = Server(db)
    try:
        with Session(server, "alice") as alice:
            finished = alice.call_as_task("finish", {"text": "kept"})
            running = alice.call_as_task("hang", {})
            deadline = time.monotonic() + LIMIT
            while alice.status(finished) != "completed":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert alice.status(running) == "working"
    finally:
        server.kill()
    assert server.process.returncode == -signal.SIGKILL
    yield finished, running


def test_a_finished_task_is_answered_after_a_restart(
    db: Path, first_life: tuple[str, str]
) -> None:
    finished, _ = first_life
    server = Server(db)
    try:
        with Session(server, "alice") as alice:
            task = alice.result("tasks/get", {"taskId": finished})
            assert task["status"] == "completed" and task["ttl"] == TTL_MS
            result = alice.result("tasks/result", {"taskId": finished})
            assert result["content"] == [{"type": "text", "text": "kept"}]
            assert result["_meta"]["io.modelcontextprotocol/related-task"] == {
                "taskId": finished
            }
    finally:
        server.kill()


def test_a_task_working_when_its_server_died_is_failed(
    db: Path, first_life: tuple[str, str]
) -> None:
    _, running = first_life
    server = Server(db)
    try:
        with Session(server, "alice") as alice:
            task = alice.result("tasks/get", {"taskId": running})
            assert task["status"] == "failed" and task["statusMessage"] == STOPPED
            answer = alice.send("tasks/result", {"taskId": running})
            assert answer["error"]["code"] == -32603
            assert answer["error"]["message"] == STOPPED
    finally:
        server.kill()


def test_after_a_restart_tasks_are_still_their_owner_s_only(
    db: Path, first_life: tuple[str, str]
) -> None:
    finished, running = first_life
    server = Server(db)
    try:
        with Session(server, "alice") as alice:
            listed = alice.result("tasks/list", {})["tasks"]
            assert sorted(t["taskId"] for t in listed) == sorted([finished, running])
        with Session(server, "bob") as bob:
            assert bob.result("tasks/list", {})["tasks"] == []
            refused = bob.send("tasks/get", {"taskId": finished})
            assert refused["error"]["code"] == -32602
    finally:
        server.kill()


def test_after_the_ttl_a_restarted_server_knows_no_task(
    db: Path, first_life: tuple[str, str]
) -> None:
    finished, running = first_life
    server = Server(db, clock_offset_s=TTL_MS / 1000 + 1)
    try:
        with Session(server, "alice") as alice:
            for task_id in (finished, running):
                answer = alice.send("tasks/get", {"taskId": task_id})
                assert answer["error"]["code"] == -32602
            assert alice.result("tasks/list", {})["tasks"] == []
    finally:
        server.kill()

"""The scaffold's `countdown` example does what its comments say when run as a
task: a raw 2025-11-25 client, over stdio as a host starts the server, gets
its answer through `tasks/result` and stops it with `tasks/cancel`."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

import pytest

from mcp_specgen.scaffold import create_project

LIMIT = 30.0
PROTOCOL = "2025-11-25"


class StdioPeer:
    """JSON-RPC lines to and from a server process; answers matched by id."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin: IO[str] = process.stdin
        self.lines: queue.Queue[str] = queue.Queue()
        self.ids = iter(range(1, 1_000_000))
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)

    def notify(self, method: str) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.stdin.flush()

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        self.stdin.write(json.dumps({**message, "params": params}) + "\n")
        self.stdin.flush()
        while True:
            answer: dict[str, Any] = json.loads(self.lines.get(timeout=LIMIT))
            if answer.get("id") == request_id and "method" not in answer:
                return answer

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.send(method, params)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioPeer]:
    project = create_project("demo", tmp_path_factory.mktemp("scaffold"))
    with subprocess.Popen(
        [sys.executable, "-m", "demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
    ) as process:
        peer = StdioPeer(process)
        try:
            started = peer.result(
                "initialize",
                {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            )
            tasks = started["capabilities"]["tasks"]
            assert tasks["requests"] == {"tools": {"call": {}}}
            peer.notify("notifications/initialized")
            yield peer
        finally:
            process.kill()


def test_countdown_is_listed_as_optionally_a_task(server: StdioPeer) -> None:
    tools = {t["name"]: t for t in server.result("tools/list", {})["tools"]}
    assert tools["countdown"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["echo"]


def test_countdown_as_a_task_answers_through_tasks_result(server: StdioPeer) -> None:
    created = server.result(
        "tools/call",
        {
            "name": "countdown",
            "arguments": {"steps": 2, "seconds_per_step": 0},
            "task": {"ttl": 60_000},
        },
    )
    task_id = created["task"]["taskId"]
    result = server.result("tasks/result", {"taskId": task_id})
    assert result["content"] == [{"type": "text", "text": "counted down 2 steps"}]
    assert server.result("tasks/get", {"taskId": task_id})["status"] == "completed"


def test_countdown_as_a_task_stops_on_tasks_cancel(server: StdioPeer) -> None:
    created = server.result(
        "tools/call",
        {
            "name": "countdown",
            "arguments": {"steps": 100, "seconds_per_step": 10},
            "task": {"ttl": 60_000},
        },
    )
    task_id = created["task"]["taskId"]
    assert created["task"]["status"] == "working"
    cancelled = server.result("tasks/cancel", {"taskId": task_id})
    assert cancelled["status"] == "cancelled"
    assert server.result("tasks/get", {"taskId": task_id})["status"] == "cancelled"
    answer = server.send("tasks/result", {"taskId": task_id})
    assert "error" in answer, answer
    echoed = server.result(
        "tools/call", {"name": "echo", "arguments": {"message": "still here"}}
    )
    assert echoed["content"] == [{"type": "text", "text": "still here"}]

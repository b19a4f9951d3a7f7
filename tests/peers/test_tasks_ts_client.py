"""Tasks (2025-11-25) of our `App` against the official TypeScript SDK client's
experimental task API (npm `@modelcontextprotocol/sdk@1.32.2`), over
Streamable HTTP.

The server is `tests/unit/runtime/app/task_app.py http PORT` (uvicorn); the
client `programs/ts_sdk_tasks_client.mjs` runs `callToolStream` on tools of
each task support (one of them asks the user through elicitation inside the
task, which the SDK answers on its `tasks/result` stream), cancels, lists and
probes the errors; it reports what it saw.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import peers
from benchmarks._common import REPO

CLIENT = Path(__file__).parent / "programs" / "ts_sdk_tasks_client.mjs"
SERVER = REPO / "tests" / "unit" / "runtime" / "app" / "task_app.py"
RELATED = "io.modelcontextprotocol/related-task"
CLIENT_TIMEOUT = 90.0
READY_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def accepting(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(port)],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + READY_TIMEOUT
            while not accepting(port):
                assert proc.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            proc.wait(15)
            stderr.seek(0)
            log = stderr.read().decode(errors="replace")
        assert "Traceback" not in log, log


@pytest.fixture(scope="module")
def report(server: str) -> dict[str, Any]:
    peers.ensure_node_peers(print)
    proc = subprocess.run(
        [str(peers.node_executable()), str(CLIENT), server],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def kinds(seen: list[dict[str, Any]]) -> list[str]:
    return [message["type"] for message in seen]


def test_the_sdk_sees_the_capability_and_each_tools_support(
    report: dict[str, Any],
) -> None:
    assert report["protocol_version"] == "2025-11-25"
    assert report["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    support = report["task_support"]
    assert (support["slow"], support["must"], support["plain"]) == (
        "optional",
        "required",
        None,
    )


def test_call_tool_stream_creates_polls_and_gets_the_result(
    report: dict[str, Any],
) -> None:
    seen = report["slow"]
    assert kinds(seen)[0] == "taskCreated" and kinds(seen)[-1] == "result"
    assert seen[0]["status"] == "working"
    assert [m["status"] for m in seen if m["type"] == "taskStatus"][-1] == "completed"
    result = seen[-1]["result"]
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result["_meta"] == {RELATED: {"taskId": seen[0]["taskId"]}}


def test_an_elicitation_inside_a_task_reaches_the_sdk(report: dict[str, Any]) -> None:
    seen = report["ask"]
    task_id = seen[0]["taskId"]
    assert {"type": "taskStatus", "status": "input_required"} in seen
    assert seen[-1]["result"]["content"] == [{"type": "text", "text": "hello Ts"}]
    assert report["elicited"] == [
        {"message": "Your name?", "meta": {RELATED: {"taskId": task_id}}}
    ]


def test_required_tools_run_as_tasks_and_refuse_plain_calls(
    report: dict[str, Any],
) -> None:
    assert report["must"][-1]["result"]["content"][0]["text"] == "done"
    assert report["plain_must"]["error"]["code"] == -32601


def test_a_tool_error_is_a_failed_task(report: dict[str, Any]) -> None:
    seen = report["fail"]
    assert {"type": "taskStatus", "status": "failed"} in seen
    assert seen[-1]["type"] == "error"


def test_cancel_get_and_errors(report: dict[str, Any]) -> None:
    task_id = report["created"]["taskId"]
    assert report["created"]["ttl"] == 60_000
    assert report["cancel"]["result"]["status"] == "cancelled"
    assert report["after_cancel"]["result"]["status"] == "cancelled"
    assert report["cancel_again"]["error"]["code"] == -32602
    assert report["cancelled_result"]["error"]["code"] == -32800
    assert report["unknown"]["error"]["code"] == -32602
    listed = report["list"]["result"]["tasks"]
    assert listed[-1]["taskId"] == task_id
    assert [t["status"] for t in listed] == [
        "completed",
        "completed",
        "completed",
        "failed",
        "cancelled",
    ]

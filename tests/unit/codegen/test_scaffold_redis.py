"""The scaffold on Redis: `python -m PKG --http --redis URL --workers 2` runs
two worker processes on one port that are one server to the clients (a
legacy session and a task answered whichever worker a request lands on);
more workers without Redis, or an unreachable Redis, are refused in one
line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.redis_server import RedisServer, free_port
from mcp_specgen.scaffold import create_project

LIMIT = 60.0
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
WORKER_TOOL = '''

@app.tool()
def worker() -> int:
    """The id of the worker process serving the call (added by the test)."""
    import os

    return os.getpid()
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = create_project("demo", tmp_path_factory.mktemp("scaffold"))
    with (made / "demo" / "server.py").open("a") as server:
        server.write(WORKER_TOOL)
    return made


def run(project: Path, *args: str, **popen: Any) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_")}
    return subprocess.Popen(
        [sys.executable, "-m", "demo", *args],
        cwd=project,
        env={**env, "PYTHONPATH": str(project)},
        text=True,
        start_new_session=True,
        **popen,
    )


@pytest.fixture
def workers(project: Path, redis_server: RedisServer) -> Iterator[str]:
    """Two workers on one port, on the shared Redis; their base URL."""
    port = free_port()
    process = run(
        project,
        *("--http", "--port", str(port), "--workers", "2"),
        *("--redis", redis_server.url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + LIMIT
        while True:
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the workers did not start"
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def rpc(
    client: httpx.Client, request_id: int, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a JSON or SSE response."""
    import json

    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data: ") and '"id"' in line:
                found: dict[str, Any] = json.loads(line[6:])
                return found
        raise AssertionError(response.text)
    answer: dict[str, Any] = response.json()
    return answer


def landed_on(client: httpx.Client) -> int:
    """The worker holding `client`'s connection (a stateless 2026 call)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    response = client.post(
        "/mcp",
        json=rpc(client, 1, "tools/call", {"name": "worker", "_meta": meta}),
        headers={
            "accept": ACCEPT,
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "worker",
        },
    )
    pid: int = answer_of(response)["result"]["structuredContent"]["result"]
    return pid


class Legacy:
    """A legacy session whose every request goes on a fresh connection."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.ids = iter(range(2, 1_000_000))
        self.landings: set[int] = set()
        with httpx.Client(base_url=base) as client:
            opened = client.post(
                "/mcp",
                json=rpc(
                    client,
                    1,
                    "initialize",
                    {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                ),
                headers={"accept": ACCEPT},
            )
            assert answer_of(opened)["result"]["protocolVersion"] == LEGACY
            self.session_id = opened.headers["mcp-session-id"]
            done = client.post(
                "/mcp",
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=self.headers,
            )
            assert done.status_code == 202

    @property
    def headers(self) -> dict[str, str]:
        return {
            "accept": ACCEPT,
            "mcp-session-id": self.session_id,
            "mcp-protocol-version": LEGACY,
        }

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`method`'s result, on a new connection; notes which worker took it."""
        with httpx.Client(base_url=self.base, timeout=LIMIT) as client:
            self.landings.add(landed_on(client))
            body = rpc(client, next(self.ids), method, params)
            answer = answer_of(client.post("/mcp", json=body, headers=self.headers))
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result


def test_two_workers_on_redis_serve_a_legacy_session_and_a_task(workers: str) -> None:
    pids: set[int] = set()
    for _ in range(200):
        with httpx.Client(base_url=workers) as client:
            pids.add(landed_on(client))
        if len(pids) == 2:
            break
    assert len(pids) == 2, "every connection went to one worker"
    session = Legacy(workers)
    for n in range(200):
        echoed = session.result(
            "tools/call", {"name": "echo", "arguments": {"message": f"m{n}"}}
        )
        assert echoed["content"] == [{"type": "text", "text": f"m{n}"}]
        if session.landings == pids and n >= 3:
            break
    assert session.landings == pids
    task = session.result(
        "tools/call",
        {
            "name": "countdown",
            "arguments": {"steps": 1, "seconds_per_step": 0},
            "task": {"ttl": 60_000},
        },
    )["task"]
    session.landings.clear()
    for _ in range(200):
        status = session.result("tasks/get", {"taskId": task["taskId"]})["status"]
        if status == "completed" and session.landings == pids:
            break
    assert session.landings == pids
    result = session.result("tasks/result", {"taskId": task["taskId"]})
    assert result["content"] == [{"type": "text", "text": "counted down 1 steps"}]


def test_more_workers_without_redis_are_refused(project: Path) -> None:
    refused = run(
        project,
        *("--http", "--workers", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = refused.communicate(timeout=LIMIT)
    assert refused.returncode == 2
    assert "2 workers need Redis (--redis URL or $MCP_REDIS_URL)" in err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_unreachable_redis_is_one_line(project: Path, workers: str) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    refused = run(
        project,
        *("--http", "--port", str(free_port()), "--workers", workers),
        *("--redis", url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = refused.communicate(timeout=LIMIT)
    assert refused.returncode == 1
    assert err.strip().splitlines() == [
        f"error: cannot reach Redis at {url}: " + err.strip().split(f"{url}: ", 1)[1]
    ]

"""Several servers on one Redis are one task service.

Two real server processes (`task_restart_server.py` with a `RedisTaskStore`,
Streamable HTTP, 2025-11-25 tasks) share a Redis: a task one of them created
is answered by the other (`tasks/get`, `tasks/result`, `tasks/list`), to its
owner only, and is cancelled there when still working; a server killed with
SIGKILL loses no finished task. Without Redis, task requests fail cleanly.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest

from benchmarks.redis_server import RedisServer, free_port
from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore

from .task_app import make_app
from .test_task_restart import LIMIT, TTL_MS, Server, Session
from .test_tasks import connected, get, refused


@pytest.fixture
def servers(
    redis_server: RedisServer, redis_prefix: str
) -> Iterator[tuple[Server, Server]]:
    target = f"{redis_server.url}#{redis_prefix}"
    first = Server(target)
    try:
        second = Server(target)
        try:
            yield first, second
        finally:
            second.kill()
    finally:
        first.kill()


def wait_for(session: Session, task_id: str, status: str) -> None:
    deadline = time.monotonic() + LIMIT
    while session.status(task_id) != status:
        assert time.monotonic() < deadline, f"{task_id} never became {status}"
        time.sleep(0.05)


def test_a_task_made_on_one_server_is_answered_by_the_other(
    servers: tuple[Server, Server],
) -> None:
    first, second = servers
    with Session(first, "alice") as on_first:
        finished = on_first.call_as_task("finish", {"text": "shared"})
        wait_for(on_first, finished, "completed")
    first.kill()
    assert first.process.returncode == -signal.SIGKILL
    with Session(second, "alice") as on_second:
        task = on_second.result("tasks/get", {"taskId": finished})
        assert task["status"] == "completed" and task["ttl"] == TTL_MS
        result = on_second.result("tasks/result", {"taskId": finished})
        assert result["content"] == [{"type": "text", "text": "shared"}]
        listed = on_second.result("tasks/list", {})["tasks"]
        assert [t["taskId"] for t in listed] == [finished]
    with Session(second, "bob") as bob:
        assert bob.result("tasks/list", {})["tasks"] == []
        assert bob.send("tasks/get", {"taskId": finished})["error"]["code"] == -32602


def test_a_working_task_is_seen_and_cancelled_from_the_other_server(
    servers: tuple[Server, Server],
) -> None:
    first, second = servers
    with Session(first, "alice") as on_first, Session(second, "alice") as on_second:
        running = on_first.call_as_task("hang", {})
        assert on_second.status(running) == "working"
        cancelled = on_second.result("tasks/cancel", {"taskId": running})
        assert cancelled["status"] == "cancelled"
        wait_for(on_first, running, "cancelled")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_with_redis_down_task_requests_fail_and_the_server_keeps_serving(
    anyio_backend: str,
) -> None:
    """No Redis behind the store: each task request is one -32603 error
    saying so, and plain requests are answered as before."""
    url = f"redis://127.0.0.1:{free_port()}/0"
    store = RedisTaskStore(url)
    async with connected(make_app(task_store=store)) as session:
        error = await refused(
            session,
            "tools/call",
            {"name": "slow", "arguments": {"text": "x"}, "task": {"ttl": 1000}},
        )
        assert error.code == -32603
        error = await refused(session, "tasks/get", {"taskId": "x"})
        assert error.code == -32603
        assert error.message.startswith(
            f"the task store is unreachable (Redis at {url})"
        )
        plain = {"name": "slow", "arguments": {"text": "plain"}}
        answer = await get(session, "tools/call", plain)
        assert answer["content"] == [{"type": "text", "text": "plain"}]
    await store.aclose()

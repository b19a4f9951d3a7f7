"""`http_app(..., redis=URL)` / `serve_http(..., redis=URL)`: a plain
`ServerSession` served as one instance of several on one Redis; the start
refused in one line when that Redis is out of reach; uvicorn's graceful
shutdown bounded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from benchmarks.redis_server import RedisServer, free_port
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore
from mcp_specgen_runtime.transports.http import server as http_server
from mcp_specgen_runtime.transports.http.cluster import Cluster
from mcp_specgen_runtime.transports.http.server import McpHttpApp, http_app
from tests.unit.runtime.app.test_app_redis import lifespan
from tests.unit.runtime.session_programs.echo_session import HANDLERS

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def echo_session() -> ServerSession:
    return ServerSession(
        [HANDLERS["2025-11-25"](), HANDLERS["2026-07-28"]()],
        name="echo",
        version="1",
    )


@asynccontextmanager
async def instance(url: str | None, prefix: str) -> AsyncIterator[httpx.AsyncClient]:
    app = http_app(echo_session(), redis=url, redis_prefix=prefix, legacy_sse=False)
    async with (
        lifespan(app) as started,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://127.0.0.1:8000"
        ) as client,
    ):
        assert started["type"] == "lifespan.startup.complete", started
        client.app = app  # type: ignore[attr-defined]
        yield client


async def post(
    client: httpx.AsyncClient, body: dict[str, Any], session_id: str | None = None
) -> httpx.Response:
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    if session_id is not None:
        headers |= {"mcp-session-id": session_id, "mcp-protocol-version": LEGACY}
    return await client.post("/mcp", json=body, headers=headers)


def result_of(response: httpx.Response) -> Any:
    """The result of a JSON or SSE answer."""
    if response.headers["content-type"].startswith("text/event-stream"):
        import json

        for line in response.text.splitlines():
            if line.startswith("data: ") and '"result"' in line:
                return json.loads(line[6:])["result"]
        raise AssertionError(response.text)
    return response.json()["result"]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.mark.anyio
async def test_a_legacy_session_opened_on_one_instance_is_served_by_the_other(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    async with (
        instance(redis_server.url, redis_prefix) as first,
        instance(redis_server.url, redis_prefix) as second,
    ):
        app: Any = first.app  # type: ignore[attr-defined]
        assert isinstance(app, McpHttpApp) and isinstance(app.cluster, Cluster)
        assert app.event_store is app.cluster.events
        opened = await post(first, INITIALIZE)
        session_id = opened.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(second, note, session_id)).status_code == 202
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "across"}},
        }
        answered = await post(second, call, session_id)
        assert answered.status_code == 200, answered.text
        assert result_of(answered)["content"][0]["text"] == "across"


@pytest.mark.anyio
async def test_without_redis_the_app_is_alone(
    monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer, redis_prefix: str
) -> None:
    """`redis=None` wins over `$MCP_REDIS_URL`; left out, the variable counts."""
    monkeypatch.setenv("MCP_REDIS_URL", redis_server.url)
    alone = http_app(echo_session(), redis=None, legacy_sse=False)
    assert alone.cluster is None
    session = echo_session()
    joined = http_app(session, redis_prefix=redis_prefix, legacy_sse=False)
    assert isinstance(joined.cluster, Cluster)
    assert session.redis_keys is not None
    await joined.aclose()


def test_a_session_running_tasks_keeps_them_in_redis() -> None:
    from mcp_specgen_runtime.protocol.tasks.manager import TaskManager

    tasks = TaskManager()
    session = ServerSession(
        [HANDLERS["2025-11-25"]()],
        name="echo",
        version="1",
        tasks=tasks,
        task_requests=("tools/call",),
    )
    http_app(session, redis="redis://127.0.0.1:1/0", redis_prefix="p:")
    assert isinstance(tasks.store, RedisTaskStore)
    assert tasks.store.prefix == b"p:tasks:"


def test_serve_http_refuses_an_unreachable_redis_in_one_line() -> None:
    url = f"redis://user:secret@127.0.0.1:{free_port()}/0"
    program = (
        "from tests.unit.runtime.transports.http.test_redis_switch import "
        "echo_session\n"
        "from mcp_specgen_runtime.transports.http.server import serve_http\n"
        f"serve_http(echo_session(), port={free_port()}, redis={url!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"error: cannot reach Redis at {url.replace('secret', '***')}: "
    )
    assert "secret" not in done.stderr


def test_serve_http_bounds_the_graceful_shutdown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(
        http_server, "serve_announced", lambda config, _announce: seen.append(config)
    )
    http_server.serve_http(echo_session(), redis=None)
    http_server.serve_http(echo_session(), redis=None, shutdown_timeout_s=30)
    http_server.serve_http(echo_session(), redis=None, shutdown_timeout_s=None)
    assert [c.timeout_graceful_shutdown for c in seen] == [5, 30, None]


def test_serve_workers_runs_a_factory_in_processes_sharing_redis(
    monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer, redis_prefix: str
) -> None:
    import os

    import uvicorn

    from mcp_specgen_runtime.transports.http.workers import serve_workers

    seen: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **o: seen.append((app, o)))
    # Set first, so that the test's end restores it as it was.
    monkeypatch.setenv("MCP_REDIS_URL", "")
    monkeypatch.delenv("MCP_REDIS_URL")
    with pytest.raises(ValueError, match="2 workers need Redis"):
        serve_workers("pkg:make", workers=2, redis=None)
    with pytest.raises(ValueError, match="at least 1"):
        serve_workers("pkg:make", workers=0, redis=redis_server.url)
    assert seen == []
    serve_workers(
        "pkg:make", workers=3, redis=redis_server.url, redis_prefix=redis_prefix
    )
    app, options = seen[0]
    assert app == "pkg:make"
    assert options["factory"] is True and options["workers"] == 3
    assert options["timeout_graceful_shutdown"] == 5
    assert os.environ["MCP_REDIS_URL"] == redis_server.url
    with pytest.raises(SystemExit, match="error: cannot reach Redis at "):
        serve_workers("pkg:make", workers=2, redis=f"redis://127.0.0.1:{free_port()}")


def test_a_cluster_leaves_out_http_sse_and_refuses_it_when_asked() -> None:
    """HTTP+SSE sessions cannot move between instances: not mounted with a
    cluster by default, refused when asked for."""
    from mcp_specgen_runtime.transports.http.legacy_sse import LegacySseApp

    alone = http_app(echo_session(), redis=None)
    assert isinstance(alone, LegacySseApp)
    clustered = http_app(echo_session(), redis="redis://127.0.0.1:1/0")
    assert isinstance(clustered, McpHttpApp)
    assert clustered.cluster is not None
    with pytest.raises(ValueError, match=r"HTTP\+SSE .* cannot move"):
        http_app(echo_session(), redis="redis://127.0.0.1:1/0", legacy_sse=True)


def test_without_an_idle_timeout_the_cluster_records_do_not_expire() -> None:
    url = "redis://127.0.0.1:1/0"
    timed = McpHttpApp(echo_session(), cluster=Cluster.from_url(url))
    assert timed.cluster is not None
    assert timed.cluster.sessions.ttl_ms == 1_800_000
    forever = McpHttpApp(
        echo_session(), cluster=Cluster.from_url(url), idle_timeout_s=None
    )
    assert forever.cluster is not None
    assert forever.cluster.sessions.ttl_ms == 0


def test_serve_workers_passes_the_redis_prefix_to_the_workers(
    monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer, redis_prefix: str
) -> None:
    """The workers are fresh processes: the prefix reaches them through
    `$MCP_REDIS_PREFIX`, which `App` and `http_app` read when not given one."""
    import os

    import uvicorn

    from mcp_specgen_runtime.app import App
    from mcp_specgen_runtime.transports.http.workers import serve_workers

    monkeypatch.setattr(uvicorn, "run", lambda app, **o: None)
    monkeypatch.setenv("MCP_REDIS_URL", "")
    monkeypatch.setenv("MCP_REDIS_PREFIX", "")
    serve_workers(
        "pkg:make", workers=2, redis=redis_server.url, redis_prefix=redis_prefix
    )
    assert os.environ["MCP_REDIS_PREFIX"] == redis_prefix
    assert App("worker", redis=None).redis_prefix == redis_prefix
    assert App("worker", redis=None, redis_prefix="other:").redis_prefix == "other:"
    monkeypatch.setenv("MCP_REDIS_PREFIX", "")
    assert App("worker", redis=None).redis_prefix == "mcp:"

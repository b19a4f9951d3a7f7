"""Several `McpHttpApp` instances on one Redis serving legacy sessions as one
server (`Cluster`): each instance is served by uvicorn on loopback, every
one with its own `App` and `Cluster`, all on the test's Redis prefix.

The tool `where` answers the name of the instance that ran it, so a test
sees which instance served a request it sent to another.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import uvicorn

from benchmarks.redis_server import RedisServer
from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.transports.http import SSEParser
from mcp_specgen_runtime.transports.http.cluster import ABANDONED, Cluster, Op
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from tests.unit.runtime.transports.http.test_server import (
    BASE,
    LIMIT,
    error_of,
    initialize,
    no_errors_logged,  # noqa: F401 - the autouse fixture, for these tests too
    rpc,
    session_headers,
    sse_messages,
)

pytestmark = pytest.mark.anyio

LEASE_S = 1.0
"""Short, so that a dead instance is noticed within a second."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Gates:
    """Events the tools wait on, shared by every instance of a test."""

    def __init__(self) -> None:
        self.step = anyio.Event()
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.cancelled = anyio.Event()


def make_app(name: str, gates: Gates) -> App:
    app = App(f"cluster-{name}", version="1.0.0", subscriptions=True)

    @app.tool()
    def where() -> str:
        """The instance serving the call."""
        return name

    @app.tool()
    async def steps(ctx: Context) -> str:
        """Progress 1, wait for the step gate, progress 2, done."""
        await ctx.report_progress(1, 2)
        await gates.step.wait()
        await ctx.report_progress(2, 2)
        return f"done on {name}"

    @app.tool()
    async def block() -> str:
        """Wait for the release gate (set `started`; `cancelled` if so)."""
        gates.started.set()
        try:
            await gates.release.wait()
        except anyio.get_cancelled_exc_class():
            gates.cancelled.set()
            raise
        return f"released on {name}"

    @app.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots, asked of it."""
        found = await ctx.list_roots()
        return f"{name}: " + ",".join(root["uri"] for root in found)

    @app.tool()
    async def shout(level: str, ctx: Context) -> str:
        """Log at `level`."""
        sent = await ctx.log(level, "hello")
        return f"{name}: {'sent' if sent else 'filtered'}"

    @app.resource("mem://a")
    def a() -> str:
        """A resource to subscribe to."""
        return "a"

    return app


class Instance:
    """One served instance: its App, HTTP app and endpoint URL."""

    def __init__(self, app: App, http: McpHttpApp, url: str) -> None:
        self.app = app
        self.http = http
        self.url = url

    @property
    def cluster(self) -> Cluster:
        assert self.http.cluster is not None
        return self.http.cluster


@asynccontextmanager
async def serve(app: McpHttpApp) -> AsyncIterator[str]:
    """Serve `app` with uvicorn on a free loopback port (its lifespan
    shutdown closes it); the endpoint's URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        log_level="warning",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[listener]))
    try:
        with anyio.fail_after(LIMIT):
            while not server.started:
                assert not task.done(), "uvicorn did not start"
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        with anyio.fail_after(LIMIT):
            await task
        listener.close()


@asynccontextmanager
async def instances(
    redis_server: RedisServer,
    prefix: str,
    gates: Gates,
    count: int = 3,
    http_options: dict[str, Any] | None = None,
    **cluster_options: Any,
) -> AsyncIterator[list[Instance]]:
    """`count` instances, each with `cluster_options` for its `Cluster` and
    `http_options` for its `McpHttpApp`."""
    async with AsyncExitStack() as stack:
        found: list[Instance] = []
        for name in "abc"[:count]:
            app = make_app(name, gates)
            cluster = Cluster.from_url(
                redis_server.url, prefix=prefix, lease_s=LEASE_S, **cluster_options
            )
            http = McpHttpApp(app.session(), cluster=cluster, **(http_options or {}))
            url = await stack.enter_async_context(serve(http))
            found.append(Instance(app, http, url))
        yield found


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=LIMIT) as found:
        yield found


async def post(
    client: httpx.AsyncClient,
    url: str,
    body: Any,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(url, json=body, headers={**BASE, **(headers or {})})


async def open_on(
    client: httpx.AsyncClient,
    url: str,
    version: str = "2025-11-25",
    **capabilities: Any,
) -> str:
    response = await post(client, url, initialize(0, version, **capabilities))
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = await post(
        client,
        url,
        rpc(None, "notifications/initialized"),
        session_headers(session_id, version),
    )
    assert done.status_code == 202
    return session_id


def call(request_id: int, name: str, progress: bool = False, **arguments: Any) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress:
        params["_meta"] = {"progressToken": request_id}
    return rpc(request_id, "tools/call", params)


async def served_by(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    request_id: int = 1,
) -> str:
    """The name of the instance that served a `where` call POSTed to `url`."""
    response = await post(client, url, call(request_id, "where"), headers)
    assert response.status_code == 200, response.text
    return text_of(answer_of(response))


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """A POST's answer, JSON or the last message of its SSE stream."""
    if response.headers["content-type"] == "application/json":
        found: dict[str, Any] = response.json()
        return found
    return sse_messages(response)[-1]


def text_of(message: dict[str, Any]) -> str:
    text: str = message["result"]["content"][0]["text"]
    return text


class Events:
    """The SSE events of a streamed response, as (id, message or None)."""

    def __init__(self, response: httpx.Response) -> None:
        assert response.headers["content-type"] == "text/event-stream"
        self._chunks = response.aiter_bytes()
        self._parser = SSEParser()
        self._ready: list[tuple[str, dict[str, Any] | None]] = []

    async def next(self) -> tuple[str, dict[str, Any] | None]:
        while not self._ready:
            chunk = await anext(self._chunks)
            for event in self._parser.feed(chunk):
                message = json.loads(event.data) if event.data else None
                self._ready.append((event.id, message))
        return self._ready.pop(0)

    async def message(self) -> tuple[str, dict[str, Any]]:
        while True:
            event_id, message = await self.next()
            if message is not None:
                return event_id, message


# --- forwarding ---------------------------------------------------------------------


async def test_a_post_landing_on_another_instance_is_served_by_the_home_as_json(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates()) as (a, b, c):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        for instance in (b, c, a):
            response = await post(client, instance.url, call(1, "where"), headers)
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert response.headers["mcp-session-id"] == session_id
            assert text_of(response.json()) == "a"
        assert session_id not in b.http.sessions
        assert session_id not in c.http.sessions


async def test_an_sse_answer_is_relayed_with_the_stored_event_ids(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    gates.step.set()
    async with instances(redis_server, redis_prefix, gates, 2) as (a, b):
        session_id = await open_on(client, a.url)
        response = await post(
            client, b.url, call(1, "steps", progress=True), session_headers(session_id)
        )
        messages = sse_messages(response)
        assert [m.get("method") for m in messages] == [
            "notifications/progress",
            "notifications/progress",
            None,
        ]
        assert text_of(messages[-1]) == "done on a"
        ids = [e.id for e in SSEParser().feed(response.content) if e.data]
        assert all(i.count(".") == 1 for i in ids)


async def test_a_session_is_unknown_on_every_instance_to_another_principal(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates(), 2) as (_, b):
        response = await post(
            client, b.url, call(1, "where"), session_headers("no-such-session")
        )
        assert response.status_code == 404
        assert "Session not found" in error_of(response)["message"]


async def test_a_refusal_of_the_home_is_the_same_answer_through_another_instance(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    async with instances(redis_server, redis_prefix, gates, 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        async with client.stream(
            "POST", a.url, json=call(7, "block"), headers={**BASE, **headers}
        ) as blocked:
            await gates.started.wait()
            reused = await post(client, b.url, call(7, "where"), headers)
            assert reused.status_code == 400
            assert reused.json()["id"] == 7
            assert "already in flight" in error_of(reused)["message"]
            bad = await post(
                client,
                b.url,
                call(8, "where"),
                {**headers, "mcp-protocol-version": "1999-01-01"},
            )
            assert bad.status_code == 400
            local = await post(
                client,
                a.url,
                call(8, "where"),
                {**headers, "mcp-protocol-version": "1999-01-01"},
            )
            assert bad.json() == local.json()
            assert error_of(bad)["data"]["requested"] == "1999-01-01"
            gates.release.set()
            await blocked.aread()


async def test_a_server_request_is_answered_through_a_third_instance(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates()) as (a, b, c):
        session_id = await open_on(client, a.url, roots={})
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", b.url, json=call(1, "roots"), headers=headers
        ) as response:
            events = Events(response)
            _, asked = await events.message()
            assert asked["method"] == "roots/list"
            answer = {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"roots": [{"uri": "file:///r"}]},
            }
            accepted = await client.post(c.url, json=answer, headers=headers)
            assert accepted.status_code == 202
            _, result = await events.message()
            assert text_of(result) == "a: file:///r"


async def test_a_cancellation_sent_to_another_instance_cancels_at_the_home(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    async with instances(redis_server, redis_prefix, gates) as (a, b, c):
        session_id = await open_on(client, a.url)
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", b.url, json=call(5, "block"), headers=headers
        ) as response:
            await gates.started.wait()
            cancel = rpc(None, "notifications/cancelled", {"requestId": 5})
            accepted = await client.post(c.url, json=cancel, headers=headers)
            assert accepted.status_code == 202
            await gates.cancelled.wait()
            events = Events(response)
            _, ended = await events.message()
            assert ended["id"] == 5
            assert ended["error"]["code"] == -32800


async def test_a_get_stream_through_another_instance_carries_the_home_messages(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = {"accept": "text/event-stream", **session_headers(session_id)}
        subscribe = rpc(1, "resources/subscribe", {"uri": "mem://a"})
        done = await post(client, b.url, subscribe, session_headers(session_id))
        assert done.json()["result"] == {}
        async with client.stream("GET", b.url, headers=headers) as response:
            events = Events(response)
            primed, nothing = await events.next()
            assert nothing is None and "." in primed
            await a.app.notify_resource_updated("mem://a")
            _, updated = await events.message()
            assert updated["method"] == "notifications/resources/updated"


async def test_delete_through_another_instance_ends_the_session_everywhere(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = {**BASE, **session_headers(session_id)}
        deleted = await client.delete(b.url, headers=headers)
        assert deleted.status_code == 200
        assert session_id not in a.http.sessions
        for instance in (a, b):
            gone = await post(client, instance.url, call(1, "where"), headers)
            assert gone.status_code == 404
        again = await client.delete(b.url, headers=headers)
        assert again.status_code == 404


# --- resuming, dying, leaving -------------------------------------------------------


async def test_a_stream_resumes_on_another_instance_mid_way_then_goes_on_live(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    async with instances(redis_server, redis_prefix, gates) as (a, b, c):
        session_id = await open_on(client, a.url)
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", b.url, json=call(1, "steps", progress=True), headers=headers
        ) as response:
            seen, progress = await Events(response).message()
            assert progress["params"]["progress"] == 1
        resumed_headers = {**headers, "last-event-id": seen}
        async with client.stream("GET", c.url, headers=resumed_headers) as resumed:
            events = Events(resumed)
            gates.step.set()
            _, second = await events.message()
            assert second["params"]["progress"] == 2
            _, result = await events.message()
            assert text_of(result) == "done on a"


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait (polling) until `condition` holds."""
    for _ in range(int(LIMIT / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


def kill(instance: Instance) -> None:
    """Stop an instance's heartbeat and inbox reader as a SIGKILL would,
    leaving its sessions running (nothing of them is ever stored again)."""
    cluster = instance.cluster
    for task in [*cluster._tasks, cluster._reader]:
        assert task is not None
        task.cancel()


async def expire(redis_server: RedisServer, instance: Instance) -> None:
    from redis.asyncio import Redis

    raw = Redis.from_url(redis_server.url)
    try:
        await raw.delete(instance.cluster.instance_key(instance.cluster.instance_id))
    finally:
        await raw.aclose()


async def test_a_request_in_flight_on_a_dead_home_is_answered_32603(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    async with instances(redis_server, redis_prefix, gates, 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", b.url, json=call(3, "block"), headers=headers
        ) as response:
            await gates.started.wait()
            kill(a)
            a.http._live.clear()
            for stored in list(a.http._tasks):
                if "_answer_forwarded" in repr(stored.get_coro()):
                    stored.cancel()
            await expire(redis_server, a)
            events = Events(response)
            _, answer = await events.message()
            assert answer["id"] == 3
            assert answer["error"] == {"code": -32603, "message": ABANDONED}
        gates.release.set()
        assert await served_by(client, b.url, headers, 4) == "b"


async def test_a_rebuilt_session_keeps_revision_log_level_and_subscriptions(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url, "2025-03-26")
        headers = session_headers(session_id, "2025-03-26")
        level = await post(
            client, a.url, rpc(1, "logging/setLevel", {"level": "error"}), headers
        )
        assert level.json()["result"] == {}
        subscribe = rpc(2, "resources/subscribe", {"uri": "mem://a"})
        assert (await post(client, b.url, subscribe, headers)).json()["result"] == {}
        original = a.http.sessions.find(session_id)
        assert original is not None
        kill(a)
        await expire(redis_server, a)
        no_version = {"mcp-session-id": session_id}
        filtered = await post(
            client, b.url, call(3, "shout", level="warning"), no_version
        )
        assert text_of(filtered.json()) == "b: filtered"
        rebuilt = b.http.sessions.find(session_id)
        assert rebuilt is not None
        assert rebuilt.handler.protocol_version == "2025-03-26"
        assert rebuilt.handler.key == original.handler.key
        batch = [call(4, "where"), call(5, "shout", level="error")]
        answered = sse_messages(await post(client, b.url, batch, no_version))
        assert answered[0]["method"] == "notifications/message"
        replies = answered[1]
        assert sorted(text_of(m) for m in replies) == ["b", "b: sent"]
        stream_headers = {"accept": "text/event-stream", **headers}
        async with client.stream("GET", b.url, headers=stream_headers) as response:
            events = Events(response)
            await b.app.notify_resource_updated("mem://a")
            _, updated = await events.message()
            assert updated["method"] == "notifications/resources/updated"


async def test_a_graceful_shutdown_hands_sessions_over_and_finishes_requests(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    async with instances(redis_server, redis_prefix, gates, 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", b.url, json=call(1, "block"), headers=headers
        ) as response:
            await gates.started.wait()
            leaving = asyncio.get_running_loop().create_task(a.http.aclose())
            await eventually(lambda: a.http._leaving)
            assert await served_by(client, b.url, headers, 2) == "b"
            gates.release.set()
            events = Events(response)
            _, finished = await events.message()
            assert text_of(finished) == "released on a"
            await leaving
        assert not await b.cluster.alive(a.cluster.instance_id)


async def test_an_unreachable_session_store_is_503_with_a_json_rpc_error(
    client: httpx.AsyncClient,
) -> None:
    app = make_app("x", Gates())
    cluster = Cluster.from_url("redis://127.0.0.1:1", lease_s=LEASE_S, timeout_s=1.0)
    async with serve(McpHttpApp(app.session(), cluster=cluster)) as url:
        response = await post(client, url, initialize())
        assert response.status_code == 503
        assert response.headers["retry-after"]
        error = error_of(response)
        assert error["code"] == -32603
        assert error["message"].startswith("the session store is unreachable: ")
        other = await post(client, url, call(1, "where"), session_headers("s" * 43))
        assert other.status_code == 503


async def test_a_post_left_in_the_inbox_of_a_leaving_home_moves_with_its_session(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    from redis.asyncio import Redis

    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        reader = a.cluster._reader
        assert reader is not None
        reader.cancel()  # the op will wait in the inbox
        posting = asyncio.get_running_loop().create_task(
            post(client, b.url, call(1, "where"), session_headers(session_id))
        )
        raw = Redis.from_url(redis_server.url)
        try:
            inbox = a.cluster.inbox_key(a.cluster.instance_id)
            for _ in range(int(LIMIT / 0.01)):
                if await raw.xlen(inbox):
                    break
                await asyncio.sleep(0.01)
        finally:
            await raw.aclose()
        await a.http.aclose()
        moved = await posting
        assert text_of(moved.json()) == "b"
        assert b.http.sessions.find(session_id) is not None


async def test_a_rebuilt_session_never_reuses_the_old_home_request_ids(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """A stale answer to the dead home's request must not resolve the new
    home's: the two ask with different ids."""
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url, roots={})
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", a.url, json=call(1, "roots"), headers=headers
        ) as first:
            _, asked_a = await Events(first).message()
            kill(a)
            await expire(redis_server, a)
            async with client.stream(
                "POST", b.url, json=call(2, "roots"), headers=headers
            ) as second:
                events = Events(second)
                _, asked_b = await events.message()
                assert asked_a["id"] != asked_b["id"]
                for asked in (asked_a, asked_b):
                    assert 0 < asked["id"] < 2**53
                answer = {
                    "jsonrpc": "2.0",
                    "id": asked_b["id"],
                    "result": {"roots": [{"uri": "file:///b"}]},
                }
                stale = {**answer, "id": asked_a["id"]}
                stale["result"] = {"roots": [{"uri": "file:///a"}]}
                for body in (stale, answer):
                    accepted = await client.post(b.url, json=body, headers=headers)
                    assert accepted.status_code == 202
                _, result = await events.message()
                assert text_of(result) == "b: file:///b"


async def test_a_leaving_home_fails_its_requests_to_the_client(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Their answers would reach the next home: the tool sees the failure."""
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, _):
        session_id = await open_on(client, a.url, roots={})
        headers = {**BASE, **session_headers(session_id)}
        async with client.stream(
            "POST", a.url, json=call(1, "roots"), headers=headers
        ) as response:
            events = Events(response)
            _, asked = await events.message()
            assert asked["method"] == "roots/list"
            await a.http.aclose()
            _, result = await events.message()
            assert "moved to another server instance" in json.dumps(result)


async def test_a_session_record_keeps_the_effect_of_what_succeeded_not_a_history(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        for number, level in enumerate(["debug", "info", "error"] * 20):
            url = b.url if number % 2 else a.url
            params = {"level": level}
            answered = await post(
                client, url, rpc(number, "logging/setLevel", params), headers
            )
            assert answered.json()["result"] == {}
        for number, method in enumerate(["resources/subscribe"] * 3, 100):
            subscribe = rpc(number, method, {"uri": "mem://a"})
            assert (await post(client, b.url, subscribe, headers)).json()[
                "result"
            ] == {}
        failed = await post(
            client, b.url, rpc(200, "logging/setLevel", {"level": "loud"}), headers
        )
        assert "error" in failed.json()
        redis = await a.cluster.client()
        record, subscriptions = a.cluster.sessions.keys(session_id)
        assert (
            await redis.execute_command("HGET", record, "level") == b'{"level":"error"}'
        )
        assert await redis.execute_command("HGET", record, "initialized") == b"1"
        assert await redis.execute_command("SMEMBERS", subscriptions) == {b"mem://a"}
        unsubscribe = rpc(300, "resources/unsubscribe", {"uri": "mem://a"})
        assert (await post(client, a.url, unsubscribe, headers)).json()["result"] == {}
        assert not await redis.execute_command("SMEMBERS", subscriptions)


async def test_a_get_stream_relayed_through_another_instance_holds_its_session(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """As a GET at home does: neither the home's registry nor the record in
    Redis expires while the stream is open; once its client left, the home
    holds the session no longer."""
    idle_s = 1.0
    gates = Gates()
    async with AsyncExitStack() as stack:
        found: list[Instance] = []
        for name in "ab":
            app = make_app(name, gates)
            cluster = Cluster.from_url(
                redis_server.url, prefix=redis_prefix, lease_s=LEASE_S
            )
            http = McpHttpApp(app.session(), cluster=cluster, idle_timeout_s=idle_s)
            found.append(
                Instance(app, http, await stack.enter_async_context(serve(http)))
            )
        a, b = found
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        stream_headers = {"accept": "text/event-stream", **headers}
        async with client.stream("GET", b.url, headers=stream_headers) as response:
            assert response.status_code == 200
            await eventually(lambda: bool(a.http._detaching))
            await asyncio.sleep(idle_s * 2.5)
            for url in (b.url, a.url):
                assert await served_by(client, url, headers, 1) == "a"
        await eventually(lambda: not a.http._detaching)


class Who:
    """A principal object whose binding is its subject alone."""

    def __init__(self, subject: str, roles: tuple[str, ...]) -> None:
        self.subject = subject
        self.roles = roles

    @property
    def binding(self) -> str:
        return self.subject

    def __repr__(self) -> str:
        return f"Who({self.subject!r}, {self.roles!r})"


async def test_a_forwarded_request_is_authenticated_again_at_the_home(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Its handler sees the principal object, as at home; credentials that
    fail, or name another principal than the session's, are refused there."""
    from mcp_specgen_runtime.transports.http.server import http_principal

    def make(name: str) -> McpHttpApp:
        app = App(f"p-{name}", version="1")

        @app.tool()
        def whoami() -> str:
            """Who calls."""
            return repr(http_principal())

        async def authenticate(request: Any) -> object:
            user = request.headers.get("x-user")
            token = request.headers.get("x-token")
            if user is None or request.client is None:
                return None
            if name == "b" or token == "good":  # b takes any token
                return Who(user, ("admin",))
            if token == "other":  # a reads it as another principal
                return Who("mallory", ())
            return None

        cluster = Cluster.from_url(
            redis_server.url, prefix=redis_prefix, lease_s=LEASE_S
        )
        return McpHttpApp(app.session(), cluster=cluster, authenticate=authenticate)

    async with serve(make("a")) as a_url, serve(make("b")) as b_url:
        alice = {"x-user": "alice", "x-token": "good"}
        opened = await post(client, a_url, initialize(0, "2025-11-25"), alice)
        session_id = opened.headers["mcp-session-id"]
        headers = {**session_headers(session_id), **alice}
        for number, url in enumerate((a_url, b_url)):
            answered = await post(client, url, call(number, "whoami"), headers)
            assert text_of(answered.json()) == "Who('alice', ('admin',))"
        other = await post(
            client, b_url, call(4, "whoami"), {**headers, "x-token": "other"}
        )
        assert other.status_code == 404
        refused = await post(
            client, b_url, call(5, "whoami"), {**headers, "x-token": "bad"}
        )
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"


async def test_leaving_with_a_frozen_redis_takes_one_bounded_wait(
    redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Each Redis call may wait its socket timeout (here longer than LIMIT);
    leaving releases every session in one call and bounds all of its Redis
    steps together by `CLOSE_TIMEOUT_S`."""
    import signal

    from benchmarks.redis_server import ensure_redis_server
    from mcp_specgen_runtime.transports.http.relay import CLOSE_TIMEOUT_S

    assert CLOSE_TIMEOUT_S < LIMIT
    with RedisServer(ensure_redis_server()) as own:
        assert own._proc is not None
        cluster = Cluster.from_url(
            own.url, prefix=redis_prefix, lease_s=LEASE_S, timeout_s=LIMIT
        )
        http = McpHttpApp(make_app("a", Gates()).session(), cluster=cluster)
        async with serve(http) as url:
            for _ in range(4):
                await open_on(client, url)
            own._proc.send_signal(signal.SIGSTOP)
            try:
                with anyio.fail_after(LIMIT):
                    await http.aclose()
            finally:
                own._proc.send_signal(signal.SIGCONT)


async def stop_reading(instance: Instance) -> None:
    """Stop the inbox reader of `instance`: the ops sent to it wait."""
    reader = instance.cluster._reader
    assert reader is not None
    reader.cancel()
    await asyncio.wait([reader])


def read_again(instance: Instance) -> None:
    cluster = instance.cluster
    cluster._reader = asyncio.get_running_loop().create_task(
        cluster._read(instance.http._serve_op)
    )


async def inbox_length(instance: Instance) -> int:
    client = await instance.cluster.client()
    key = instance.cluster.inbox_key(instance.cluster.instance_id)
    return int(await client.execute_command("XLEN", key))


async def test_a_full_inbox_refuses_new_ops_and_keeps_every_unread_one(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:

    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        await stop_reading(a)
        b.cluster.inbox_max = 2
        waiting = asyncio.get_running_loop().create_task(
            post(client, b.url, call(1, "where"), headers)
        )
        for _ in range(int(LIMIT / 0.01)):
            if await inbox_length(a):
                break
            await asyncio.sleep(0.01)
        notice = b'{"jsonrpc":"2.0","method":"notifications/x"}'
        await b.cluster.send(
            a.cluster.instance_id, Op("notify", session_id, body=notice)
        )
        refused = await post(client, b.url, call(2, "where"), headers)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"]
        error = error_of(refused)
        assert error["code"] == -32603
        assert "overloaded; try again" in error["message"]
        read_again(a)
        assert text_of((await waiting).json()) == "a"
        await eventually_async(lambda: inbox_length(a), 0)


async def eventually_async(value: Callable[[], Any], expected: Any) -> None:
    for _ in range(int(LIMIT / 0.01)):
        if await value() == expected:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {expected!r}")


async def test_a_post_the_live_home_does_not_take_is_answered_send_it_again(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """The home, alive, does not read its inbox: the forwarder gives up after
    a bounded wait, and the home, reading it later, skips the op."""
    from mcp_specgen_runtime.transports.http.relay import NOT_TAKEN

    gates = Gates()
    async with instances(redis_server, redis_prefix, gates, 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        await stop_reading(a)
        refused = await post(client, b.url, call(1, "block"), headers)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"]
        assert refused.json()["id"] == 1
        assert error_of(refused) == {"code": -32603, "message": NOT_TAKEN}
        read_again(a)
        assert await served_by(client, b.url, headers, 2) == "a"
        assert not gates.started.is_set()


async def test_the_heartbeat_and_inbox_survive_a_starved_request_pool(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Request traffic holding every connection of the instance's pool
    starves neither its heartbeat nor its inbox reader."""
    from mcp_specgen_runtime.stores.redis_scripts import blocking

    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        requests = await a.cluster.client()
        pool: Any = getattr(requests, "connection_pool")  # noqa: B009
        pool.max_connections = len(pool._available_connections) + len(
            pool._in_use_connections
        )
        held: list[asyncio.Future[Any]] = []
        while pool.can_get_connection():  # take every one, as ~100 tails do
            held.append(
                asyncio.ensure_future(
                    blocking(requests, "BLPOP", redis_prefix + "never", LEASE_S * 3)
                )
            )
            await asyncio.sleep(0.01)
        await asyncio.sleep(LEASE_S * 2)
        assert await b.cluster.alive(a.cluster.instance_id)
        notice = b'{"jsonrpc":"2.0","method":"notifications/x"}'
        inbox = a.cluster.inbox_key(a.cluster.instance_id)
        await b.cluster.send(
            a.cluster.instance_id, Op("notify", session_id, body=notice)
        )
        await eventually_async(lambda: b_len(b, inbox), 0)
        await asyncio.gather(*held, return_exceptions=True)


async def b_len(instance: Instance, key: bytes) -> int:
    client = await instance.cluster.client()
    return int(await client.execute_command("XLEN", key))


async def test_a_home_whose_lease_lapsed_drops_its_copies(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Once its lease lapsed, another instance may have claimed its sessions:
    at its next beat the old home ends its copies, so that one instance
    serves each session."""
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        a.cluster._tasks[0].cancel()  # its heartbeat stalls...
        await expire(redis_server, a)  # ...past its lease
        assert await served_by(client, b.url, headers, 1) == "b"
        assert session_id in a.http.sessions
        a.cluster._tasks[0] = asyncio.get_running_loop().create_task(
            a.cluster._heartbeat()
        )
        await eventually(lambda: session_id not in a.http.sessions)
        for instance in (a, b):
            assert await served_by(client, instance.url, headers, 2) == "b"


async def test_a_copy_whose_record_names_another_home_ends_at_its_renewal(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    async with instances(redis_server, redis_prefix, Gates(), 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = session_headers(session_id)
        a.cluster._tasks[0].cancel()  # a's lease lapses, b claims the session
        await expire(redis_server, a)
        assert await served_by(client, b.url, headers, 1) == "b"
        a.cluster._lapsed = None  # only the renewal may notice
        await a.cluster.beat()
        a.http._touched.clear()
        await post(client, a.url, call(2, "where"), headers)
        await eventually(lambda: session_id not in a.http.sessions)
        assert await served_by(client, a.url, headers, 3) == "b"


# --- relayed streams: one reader, limits, replacement, a bounded pool -------------


async def connections_of(redis_server: RedisServer, instance: Instance) -> int:
    """The Redis connections `instance` holds (named after it)."""
    from redis.asyncio import Redis

    raw = Redis.from_url(redis_server.url)
    try:
        clients: list[dict[str, Any]] = await raw.client_list()
    finally:
        await raw.aclose()
    name = "mcp-" + instance.cluster.instance_id
    return sum(1 for found in clients if found.get("name") == name)


async def rest_of(events: Events) -> list[dict[str, Any] | None]:
    """What is left of a streamed response, to its end."""
    found: list[dict[str, Any] | None] = []
    with anyio.fail_after(LIMIT):
        try:
            while True:
                found.append((await events.next())[1])
        except (StopAsyncIteration, httpx.ReadError):
            return found


async def test_many_more_relayed_streams_than_connections_all_get_their_events(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Forty answers relayed through b at once, its request pool four
    connections: b holds a bounded number of connections, and every stream
    gets all of its events."""
    gates = Gates()
    pool, streams, sessions = 4, 40, 4
    async with instances(
        redis_server, redis_prefix, gates, 2, max_connections=pool
    ) as (a, b):
        opened = [await open_on(client, a.url) for _ in range(sessions)]
        async with AsyncExitStack() as stack:
            followed: list[Events] = []
            for number in range(streams):
                headers = {**BASE, **session_headers(opened[number % sessions])}
                response = await stack.enter_async_context(
                    client.stream(
                        "POST",
                        b.url,
                        json=call(number, "steps", progress=True),
                        headers=headers,
                    )
                )
                followed.append(Events(response))
            for events in followed:
                _, first = await events.message()
                assert first["params"]["progress"] == 1
            assert b.cluster.tails.count == streams
            held = await connections_of(redis_server, b)
            gates.step.set()
            for number, events in enumerate(followed):
                _, second = await events.message()
                assert second["params"]["progress"] == 2
                _, result = await events.message()
                assert result["id"] == number
                assert text_of(result) == "done on a"
        # the request pool, the heartbeat and inbox, the relayed streams
        assert held <= pool + 2 + 2, held
        await eventually(lambda: b.cluster.tails.count == 0)


async def test_a_relayed_stream_past_the_instance_limit_is_refused_503(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    gates = Gates()
    async with instances(
        redis_server, redis_prefix, gates, 2, max_relayed_streams=2
    ) as (a, b):
        first, second = [await open_on(client, a.url) for _ in range(2)]
        loop = asyncio.get_running_loop()
        blocked = [
            loop.create_task(post(client, b.url, call(1, "block"), session_headers(s)))
            for s in (first, second)
        ]
        await eventually(lambda: b.cluster.tails.count == 2)
        headers = session_headers(first)
        refused = await post(client, b.url, call(2, "where"), headers)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"]
        error = error_of(refused)
        assert error["code"] == -32603
        assert "max_relayed_streams=2" in error["message"]
        assert error["data"] == {"limit": "max_relayed_streams", "value": 2}
        assert await served_by(client, a.url, headers, 3) == "a"
        gates.release.set()
        for task in blocked:
            assert text_of(answer_of(await task)) == "released on a"
        assert await served_by(client, b.url, headers, 4) == "a"


async def test_a_relayed_stream_past_the_session_limit_is_refused_503(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """Set on `McpHttpApp`: a session with a GET stream relayed through b
    has no POST relayed there; another session has."""
    options = {"max_relayed_streams_per_session": 1}
    async with instances(
        redis_server, redis_prefix, Gates(), 2, http_options=options
    ) as (a, b):
        first, second = [await open_on(client, a.url) for _ in range(2)]
        stream_headers = {"accept": "text/event-stream", **session_headers(first)}
        async with client.stream("GET", b.url, headers=stream_headers) as response:
            assert response.status_code == 200
            refused = await post(
                client, b.url, call(1, "where"), session_headers(first)
            )
            assert refused.status_code == 503, refused.text
            assert refused.headers["retry-after"]
            error = error_of(refused)
            assert "max_relayed_streams_per_session=1" in error["message"]
            assert error["data"]["limit"] == "max_relayed_streams_per_session"
            assert await served_by(client, b.url, session_headers(second), 1) == "a"


async def test_a_new_resume_of_a_stream_ends_its_older_relay(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """A client resuming again and again through b, each time before the
    previous response ended: each older relay ends, one tail remains, and
    the newest gets the rest of the stream."""
    gates = Gates()
    async with instances(redis_server, redis_prefix, gates, 2) as (a, b):
        session_id = await open_on(client, a.url)
        headers = {**BASE, **session_headers(session_id)}
        async with AsyncExitStack() as stack:
            answer = await stack.enter_async_context(
                client.stream(
                    "POST", b.url, json=call(1, "steps", progress=True), headers=headers
                )
            )
            older = Events(answer)
            seen, progress = await older.message()
            assert progress["params"]["progress"] == 1
            for _ in range(5):
                resumed = await stack.enter_async_context(
                    client.stream(
                        "GET", b.url, headers={**headers, "last-event-id": seen}
                    )
                )
                assert resumed.status_code == 200
                assert await rest_of(older) == []
                assert b.cluster.tails.count == 1
                older = Events(resumed)
            gates.step.set()
            _, second = await older.message()
            assert second["params"]["progress"] == 2
            _, result = await older.message()
            assert text_of(result) == "done on a"


async def test_a_request_finding_no_free_redis_connection_is_503_not_a_hang(
    redis_server: RedisServer, redis_prefix: str, client: httpx.AsyncClient
) -> None:
    """b's request pool (one connection) is held: a request through b waits
    `pool_timeout_s`, then 503 saying why; b's heartbeat goes on."""
    from mcp_specgen_runtime.stores.redis_scripts import blocking

    async with instances(
        redis_server, redis_prefix, Gates(), 2, max_connections=1, pool_timeout_s=0.2
    ) as (a, b):
        session_id = await open_on(client, a.url)
        requests = await b.cluster.client()
        pool: Any = getattr(requests, "connection_pool")  # noqa: B009
        held = asyncio.ensure_future(
            blocking(requests, "BLPOP", redis_prefix + "never", LEASE_S * 3)
        )
        await eventually(lambda: not pool.can_get_connection())
        refused = await post(
            client, b.url, call(1, "where"), session_headers(session_id)
        )
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"]
        error = error_of(refused)
        assert error["code"] == -32603
        assert "no free Redis connection (max_connections=1" in error["message"]
        await asyncio.sleep(LEASE_S * 1.5)
        assert await a.cluster.alive(b.cluster.instance_id)
        await held
        assert await served_by(client, b.url, session_headers(session_id), 2) == "a"

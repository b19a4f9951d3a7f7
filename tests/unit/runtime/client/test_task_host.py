"""The client as a 2025-11-25 task receiver (`Client(host_tasks=True)`): a
raw server connection sends it task-augmented `sampling/createMessage` and
`elicitation/create`, then `tasks/get`, `tasks/result`, `tasks/list` and
`tasks/cancel`."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.client import task_host
from mcp_specgen_runtime.client.task_host import TaskHost
from mcp_specgen_runtime.errors import MethodNotFoundError, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.tasks import RATE_LIMITED
from mcp_specgen_runtime.stores.tasks import MemoryTaskStore
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import latest

LIMIT = 10.0
RELATED = "io.modelcontextprotocol/related-task"
SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 5,
}
ELICIT = {
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
Body = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Server:
    """The server end: answers the handshake, notes what the client sends,
    and sends the client requests."""

    def __init__(self, version: str = "2025-11-25") -> None:
        self.version = version
        self.seen: list[tuple[str, Body]] = []
        self.notified = anyio.Event()
        self.connection: Connection | None = None

    async def handle(self, method: str, params: bytes | None) -> bytes | None:
        body: Body = json.loads(params or b"{}")
        self.seen.append((method, body))
        if method == "notifications/tasks/status":
            self.notified.set()
        if method.startswith("notifications/"):
            return None
        if method == "server/discover" and self.version != "2026-07-28":
            raise MethodNotFoundError(method)
        if method == "server/discover":
            return json.dumps(
                {
                    "supportedVersions": [self.version],
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                    "cacheScope": "private",
                    "ttlMs": 0,
                }
            ).encode()
        if method == "initialize":
            return json.dumps(
                {
                    "protocolVersion": self.version,
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                }
            ).encode()
        raise MethodNotFoundError(method)

    async def ask(self, method: str, params: Body) -> Body:
        assert self.connection is not None
        answer: Body = await self.connection.request(method, params, dict[str, Any])
        return answer

    def declared(self) -> Body:
        initialize = next(body for method, body in self.seen if method == "initialize")
        capabilities: Body = initialize["capabilities"]
        return capabilities


class Gate:
    """Callbacks that wait until the test opens the gate."""

    def __init__(self) -> None:
        self.open = anyio.Event()
        self.started = anyio.Event()
        self.refuse = False

    async def sampling(
        self, params: latest.CreateMessageRequestParams
    ) -> latest.CreateMessageResult:
        self.started.set()
        await self.open.wait()
        return latest.CreateMessageResult(
            role="assistant", content=latest.TextContent(text="sampled"), model="m"
        )

    async def elicitation(
        self, params: latest.ElicitRequestParams
    ) -> latest.ElicitResult:
        self.started.set()
        await self.open.wait()
        if self.refuse:
            raise RpcError(-32042, "the user walked away", {"why": "gone"})
        return latest.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def hosting(
    gate: Gate, version: str = "2025-11-25", **options: Any
) -> AsyncGenerator[Server]:
    server = Server(version)
    client_end, server_end = memory_pair()
    options.setdefault("host_tasks", True)
    with anyio.fail_after(LIMIT):
        async with Connection(server_end, server.handle) as connection:
            server.connection = connection
            async with Client(
                client_end,
                cache=None,
                sampling=gate.sampling,
                elicitation=gate.elicitation,
                **options,
            ):
                yield server


async def start(
    server: Server, method: str, params: Body, ttl: int | None = 60_000
) -> str:
    task = {} if ttl is None else {"ttl": ttl}
    created = await server.ask(method, {**params, "task": task})
    assert set(created) == {"task"}
    assert created["task"]["status"] == "working"
    task_id: str = created["task"]["taskId"]
    return task_id


@pytest.mark.anyio
async def test_the_client_declares_the_tasks_it_hosts() -> None:
    async with hosting(Gate()) as server:
        assert server.declared()["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {
                "sampling": {"createMessage": {}},
                "elicitation": {"create": {}},
            },
        }
    only_sampling = Server()
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, only_sampling.handle),
            Client(client_end, cache=None, sampling=Gate().sampling, host_tasks=True),
        ):
            requests = only_sampling.declared()["tasks"]["requests"]
            assert requests == {"sampling": {"createMessage": {}}}


@pytest.mark.anyio
async def test_without_host_tasks_nothing_is_declared_or_served() -> None:
    gate = Gate()
    gate.open.set()
    async with hosting(gate, host_tasks=False) as server:
        assert "tasks" not in server.declared()
        with pytest.raises(RpcError) as refused:
            await server.ask("tasks/get", {"taskId": "x"})
        assert refused.value.code == -32601


@pytest.mark.anyio
async def test_a_2026_session_declares_no_client_hosted_tasks() -> None:
    gate = Gate()
    async with hosting(gate, "2026-07-28") as server:
        discover = next(
            body for method, body in server.seen if method == "server/discover"
        )
        capabilities = discover["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert "tasks" not in capabilities
        assert "sampling" in capabilities


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "params"),
    [("sampling/createMessage", SAMPLE), ("elicitation/create", ELICIT)],
)
async def test_a_task_augmented_request_runs_in_the_background(
    method: str, params: Body
) -> None:
    gate = Gate()
    async with hosting(gate) as server:
        task_id = await start(server, method, params, ttl=1234)
        await gate.started.wait()
        got = await server.ask("tasks/get", {"taskId": task_id})
        assert got["status"] == "working"
        assert got["ttl"] == 1234
        assert got["pollInterval"] == task_host.POLL_INTERVAL_MS
        assert got["createdAt"].endswith("Z")
        async with anyio.create_task_group() as group:
            results: list[Body] = []

            async def fetch() -> None:
                results.append(await server.ask("tasks/result", {"taskId": task_id}))

            group.start_soon(fetch)
            await anyio.wait_all_tasks_blocked()
            assert results == []  # tasks/result waits for the end
            gate.open.set()
        result = results[0]
        assert result["_meta"][RELATED] == {"taskId": task_id}
        if method == "sampling/createMessage":
            assert result["content"] == {"type": "text", "text": "sampled"}
        else:
            assert result["content"] == {"name": "Ada"}
        assert (await server.ask("tasks/get", {"taskId": task_id}))[
            "status"
        ] == "completed"
        await server.notified.wait()
        statuses = [b for m, b in server.seen if m == "notifications/tasks/status"]
        assert statuses[-1]["taskId"] == task_id
        assert statuses[-1]["status"] == "completed"


@pytest.mark.anyio
async def test_a_plain_request_is_answered_at_once_as_before() -> None:
    gate = Gate()
    gate.open.set()
    async with hosting(gate) as server:
        answer = await server.ask("sampling/createMessage", SAMPLE)
        assert answer["content"]["text"] == "sampled"
        assert "task" not in answer


@pytest.mark.anyio
async def test_a_callback_error_fails_the_task_with_that_error() -> None:
    gate = Gate()
    gate.refuse = True
    gate.open.set()
    async with hosting(gate) as server:
        task_id = await start(server, "elicitation/create", ELICIT)
        with pytest.raises(RpcError) as failed:
            await server.ask("tasks/result", {"taskId": task_id})
        assert (failed.value.code, failed.value.message) == (
            -32042,
            "the user walked away",
        )
        assert failed.value.data == {"why": "gone"}
        got = await server.ask("tasks/get", {"taskId": task_id})
        assert got["status"] == "failed"
        assert "walked away" in got["statusMessage"]


@pytest.mark.anyio
async def test_a_cancelled_task_stays_cancelled() -> None:
    gate = Gate()
    async with hosting(gate) as server:
        task_id = await start(server, "sampling/createMessage", SAMPLE)
        await gate.started.wait()
        cancelled = await server.ask("tasks/cancel", {"taskId": task_id})
        assert cancelled["status"] == "cancelled"
        gate.open.set()
        with pytest.raises(RpcError) as again:
            await server.ask("tasks/cancel", {"taskId": task_id})
        assert again.value.code == -32602
        with pytest.raises(RpcError) as no_result:
            await server.ask("tasks/result", {"taskId": task_id})
        assert "cancelled" in no_result.value.message
        assert (await server.ask("tasks/get", {"taskId": task_id}))[
            "status"
        ] == "cancelled"


@pytest.mark.anyio
async def test_tasks_are_listed_page_by_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_host, "PAGE_SIZE", 2)
    gate = Gate()
    async with hosting(gate) as server:
        ids = [await start(server, "sampling/createMessage", SAMPLE) for _ in range(3)]
        first = await server.ask("tasks/list", {})
        assert [t["taskId"] for t in first["tasks"]] == ids[:2]
        second = await server.ask("tasks/list", {"cursor": first["nextCursor"]})
        assert [t["taskId"] for t in second["tasks"]] == ids[2:]
        assert "nextCursor" not in second
        gate.open.set()


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["tasks/get", "tasks/result", "tasks/cancel"])
@pytest.mark.parametrize("params", [{"taskId": "no-such-task"}, {"taskId": 7}, {}])
async def test_an_unknown_or_missing_task_id_is_invalid_params(
    method: str, params: Body
) -> None:
    async with hosting(Gate()) as server:
        with pytest.raises(RpcError) as refused:
            await server.ask(method, params)
        assert refused.value.code == -32602


@pytest.mark.anyio
@pytest.mark.parametrize("task", [{"ttl": -1}, {"ttl": "soon"}, "yes", {"ttl": True}])
async def test_a_bad_task_field_is_invalid_params(task: Any) -> None:
    async with hosting(Gate()) as server:
        with pytest.raises(RpcError) as refused:
            await server.ask("sampling/createMessage", {**SAMPLE, "task": task})
        assert refused.value.code == -32602


@pytest.mark.anyio
async def test_a_ttl_is_capped_and_defaulted() -> None:
    gate = Gate()
    async with hosting(gate) as server:
        long = await start(server, "sampling/createMessage", SAMPLE, ttl=10**12)
        default = await start(server, "sampling/createMessage", SAMPLE, ttl=None)
        assert (await server.ask("tasks/get", {"taskId": long}))[
            "ttl"
        ] == task_host.MAX_TTL_MS
        got = await server.ask("tasks/get", {"taskId": default})
        assert got["ttl"] == task_host.DEFAULT_TTL_MS
        gate.open.set()


# --- limits -------------------------------------------------------------------


class Clock:
    """Unix seconds the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Counted(MemoryTaskStore):
    """A memory store that notes each purge."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock=clock)
        self.purges = 0
        self.purged = anyio.Event()

    async def purge_expired(self) -> int:
        self.purges += 1
        self.purged.set()
        return await super().purge_expired()


async def quiet(method: str, params: Any) -> None:
    """A `notify` that sends nothing."""


class Failing(MemoryTaskStore):
    """A memory store whose purge fails each time."""

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0
        self.twice = anyio.Event()

    async def purge_expired(self) -> int:
        self.tries += 1
        if self.tries == 2:
            self.twice.set()
        raise OSError("the disk is gone")


def sampling_task(ttl: int = 60_000) -> bytes:
    return json.dumps({**SAMPLE, "task": {"ttl": ttl}}).encode()


@pytest.mark.anyio
async def test_active_tasks_are_capped_and_the_excess_refused() -> None:
    gate = Gate()
    options = {"max_active": 2, "rate": None}
    async with hosting(gate, host_task_options=options) as server:
        first = await start(server, "sampling/createMessage", SAMPLE)
        await start(server, "elicitation/create", ELICIT)
        with pytest.raises(RpcError) as refused:
            await start(server, "sampling/createMessage", SAMPLE)
        assert refused.value.code == RATE_LIMITED
        assert "Too many active tasks: at most 2" in refused.value.message
        assert refused.value.data == {"maxActiveTasks": 2}
        await server.ask("tasks/cancel", {"taskId": first})
        await start(server, "sampling/createMessage", SAMPLE)  # a slot is free
        gate.open.set()


@pytest.mark.anyio
async def test_the_default_cap_bounds_a_flood_of_task_requests() -> None:
    started = 0

    async def inner(method: str, params: bytes | None) -> bytes | None:
        nonlocal started
        started += 1
        await anyio.sleep_forever()

    host = TaskHost(inner, {"sampling/createMessage"}, rate=None)
    refused: list[RpcError] = []
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            host.start(group, quiet)
            for _ in range(task_host.DEFAULT_MAX_ACTIVE + 50):
                try:
                    await host("sampling/createMessage", sampling_task())
                except RpcError as exc:
                    refused.append(exc)
            await anyio.wait_all_tasks_blocked()
            group.cancel_scope.cancel()
    assert started == task_host.DEFAULT_MAX_ACTIVE
    assert len(refused) == 50
    assert {exc.code for exc in refused} == {RATE_LIMITED}


@pytest.mark.anyio
async def test_task_creation_is_rate_limited() -> None:
    gate = Gate()
    options = {"rate": 0.001, "burst": 3, "max_active": None}
    async with hosting(gate, host_task_options=options) as server:
        for _ in range(3):
            await start(server, "sampling/createMessage", SAMPLE)
        with pytest.raises(RpcError) as refused:
            await start(server, "sampling/createMessage", SAMPLE)
        assert refused.value.code == RATE_LIMITED
        assert "Too many task operations (create)" in refused.value.message
        assert refused.value.data["retryAfterMs"] > 0
        gate.open.set()


@pytest.mark.anyio
async def test_a_task_past_its_ttl_is_stopped_and_frees_its_slot() -> None:
    cancelled = anyio.Event()

    async def sampling(
        params: latest.CreateMessageRequestParams,
    ) -> latest.CreateMessageResult:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("never reached")

    server = Server()
    client_end, server_end = memory_pair()
    options = {"max_active": 1, "rate": None}
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, server.handle) as connection,
            Client(
                client_end,
                cache=None,
                sampling=sampling,
                host_tasks=True,
                host_task_options=options,
            ),
        ):
            server.connection = connection
            task_id = await start(server, "sampling/createMessage", SAMPLE, ttl=20)
            await cancelled.wait()
            try:  # gone, or failed if the wall clock lags the event loop's
                got = await server.ask("tasks/get", {"taskId": task_id})
                assert (got["status"], got["statusMessage"]) == (
                    "failed",
                    task_host.EXPIRED_MESSAGE,
                )
            except RpcError as gone:
                assert gone.code == -32602
            await start(server, "sampling/createMessage", SAMPLE)


@pytest.mark.anyio
async def test_finished_tasks_are_purged_once_expired() -> None:
    async def inner(method: str, params: bytes | None) -> bytes | None:
        return b'{"role": "assistant", "content": {}, "model": "m"}'

    clock = Clock()
    store = Counted(clock)
    host = TaskHost(inner, {"sampling/createMessage"}, store, clock=clock)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            host.start(group, quiet)
            created = json.loads(
                await host("sampling/createMessage", sampling_task(ttl=1000)) or b""
            )
            task_id = created["task"]["taskId"]
            await host("tasks/result", json.dumps({"taskId": task_id}).encode())
            assert await host.purge() == 0
            clock.now += 2
            assert await host.purge() == 1
            assert store._records == {}  # pyright: ignore[reportPrivateUsage]
            group.cancel_scope.cancel()


@pytest.mark.anyio
async def test_the_host_purges_on_its_own() -> None:
    async def inner(method: str, params: bytes | None) -> bytes | None:
        return None

    store = Counted(Clock())
    host = TaskHost(inner, {"sampling/createMessage"}, store, purge_interval_s=0.01)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            host.start(group, quiet)
            await store.purged.wait()
            group.cancel_scope.cancel()
    assert store.purges >= 1


def test_the_limits_have_documented_defaults() -> None:
    host = TaskHost(Server().handle, {"sampling/createMessage"})
    assert host.max_active == task_host.DEFAULT_MAX_ACTIVE == 16
    assert host.limiter.rate == task_host.DEFAULT_RATE == 2.0
    assert host.limiter.burst == task_host.DEFAULT_BURST == 32
    assert host.purge_interval_s == task_host.PURGE_INTERVAL_S == 60.0


@pytest.mark.anyio
async def test_a_failing_purge_is_logged_and_the_host_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def inner(method: str, params: bytes | None) -> bytes | None:
        return None

    store = Failing()
    host = TaskHost(inner, {"sampling/createMessage"}, store, purge_interval_s=0.001)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as group:
            host.start(group, quiet)
            await store.twice.wait()  # the loop survived the first failure
            created = await host("sampling/createMessage", sampling_task())
            assert created is not None and b'"working"' in created
            group.cancel_scope.cancel()
    assert "the disk is gone" in caplog.text

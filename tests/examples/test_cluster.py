"""Three server instances on one Redis behind the round-robin proxy, driven
by our `Client` over HTTP in both eras (`benchmarks.cluster`).

Real processes and a real `redis-server` (the `redis_server` fixture, which
fails under CI rather than skip). The proxy runs in this process, so a test
can plan or pin where each request goes and read how many each instance
took; elsewhere it rotates, so consecutive requests of one client land on
different instances.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from benchmarks.cluster import ClusterHarness
from mcp_specgen_runtime import Client
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_types import latest

if TYPE_CHECKING:
    from benchmarks.proxy import RoundRobinProxy
    from benchmarks.redis_server import RedisServer

pytestmark = pytest.mark.anyio

LEGACY = ("2025-11-25", "2025-06-18")
MODERN = "2026-07-28"
ERAS = (*LEGACY, MODERN)
SEND_AGAIN = "send it again"
"""In the -32603 message of a request whose instance died before answering."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster(redis_server: RedisServer) -> Iterator[ClusterHarness]:
    """Three instances for the tests that stop none."""
    with ClusterHarness(3, redis_url=redis_server.url, prefix="cluster-test:") as up:
        yield up


def proxy_of(cluster: ClusterHarness) -> RoundRobinProxy:
    assert cluster.proxy is not None
    return cluster.proxy


def text_of(result: latest.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, latest.TextContent), block
    return block.text


def client(url: str, version: str, **options: Any) -> Client:
    return Client(url, versions=[version], timeout=15, **options)


async def named(_params: latest.ElicitRequestParams) -> latest.ElicitResult:
    return latest.ElicitResult(action="accept", content={"name": "ada"})


# --- many clients, every answer counted ---------------------------------------


@dataclass
class Tally:
    """What a load run got back."""

    ok: Counter[str] = field(default_factory=Counter[str])
    resent: Counter[str] = field(default_factory=Counter[str])
    """Requests answered -32603 "send it again" (or, 2026, cut off), resent."""
    wrong: list[str] = field(default_factory=list[str])


async def echo_load(url: str, cid: str, version: str, calls: int, tally: Tally) -> None:
    """`calls` echo calls, one after the other, each answer checked."""
    async with client(url, version) as session:
        assert session.protocol_version == version
        for n in range(calls):
            message = f"{cid}:{n}"
            got = text_of(await session.call_tool("echo", {"message": message}))
            if got == message:
                tally.ok[version] += 1
            else:
                tally.wrong.append(f"{message} -> {got}")


def era_of(index: int) -> str:
    return ERAS[index % len(ERAS)]


async def test_sixteen_clients_both_eras_every_answer_right(
    redis_server: RedisServer,
) -> None:
    # 16 x 2,000 (32,000 requests, about 100 s on this machine) by default;
    # MCP_CLUSTER_LOAD_CALLS lowers the calls per client for local runs.
    clients, calls = 16, int(os.environ.get("MCP_CLUSTER_LOAD_CALLS", "2000"))
    tally = Tally()
    with ClusterHarness(3, redis_url=redis_server.url, prefix="load:") as up:
        async with anyio.create_task_group() as tasks:
            for index in range(clients):
                tasks.start_soon(
                    echo_load, up.url, f"c{index}", era_of(index), calls, tally
                )
        counts = list(proxy_of(up).counts)
        alive = [instance.alive for instance in up.instances]
        logs = [up.log(index)[-2000:] for index in range(3)]
    assert alive == [True] * 3, logs
    assert tally.wrong == []
    assert sum(tally.ok.values()) == clients * calls
    assert set(tally.ok) == set(ERAS)
    assert min(counts) > 0, (counts, logs)  # every instance served
    print(f"{clients} clients x {calls} calls: {dict(tally.ok)}; per instance {counts}")


# --- 2026-07-28: tasks and MRTR across instances ------------------------------


async def test_a_2026_mrtr_round_started_on_one_instance_completes_on_another(
    cluster: ClusterHarness,
) -> None:
    proxy = proxy_of(cluster)

    async def answer_then_move(
        params: latest.ElicitRequestParams,
    ) -> latest.ElicitResult:
        proxy.pinned = 2  # the retried call carrying the answer goes to c
        return await named(params)

    async with client(cluster.url, MODERN, elicitation=answer_then_move) as session:
        proxy.pinned = 0
        before = list(proxy.counts)
        result = await session.call_tool("ask", {"question": "your name?"})
        after = list(proxy.counts)
        proxy.pinned = None
    assert text_of(result) == "hello ada"
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 0, 1]


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_a_task_created_through_one_instance_is_read_through_another(
    cluster: ClusterHarness, version: str
) -> None:
    proxy = proxy_of(cluster)
    async with client(cluster.url, version) as session:
        proxy.pinned = 0
        handle = await session.call_tool_as_task("slow", {"seconds": 0.3})
        proxy.pinned = 1
        state = await handle.status()
        proxy.pinned = 2
        result = await handle.result(timeout=20)
        proxy.pinned = None
    assert state.task_id == handle.task_id
    assert text_of(result) == "slept 0.3"


# --- legacy sessions across instances -------------------------------------------


async def test_a_legacy_elicitation_is_answered_through_another_instance(
    cluster: ClusterHarness,
) -> None:
    proxy = proxy_of(cluster)

    async def answer_elsewhere(
        params: latest.ElicitRequestParams,
    ) -> latest.ElicitResult:
        proxy.pinned = 2  # the answer's POST lands on c
        return await named(params)

    proxy.pinned = 0  # initialize, hence the session's home: a
    async with client(cluster.url, "2025-11-25", elicitation=answer_elsewhere) as s:
        proxy.pinned = 1  # the call lands on b
        before = list(proxy.counts)
        result = await s.call_tool("ask", {"question": "your name?"})
        after = list(proxy.counts)
        proxy.pinned = None
    assert text_of(result) == "hello ada"
    delta = [b - a for a, b in zip(before, after, strict=True)]
    assert delta[1] >= 1 and delta[2] >= 1, delta


@pytest.mark.parametrize("version", LEGACY)
async def test_a_legacy_session_is_served_by_every_instance(
    cluster: ClusterHarness, version: str
) -> None:
    proxy = proxy_of(cluster)
    seen: list[str] = []
    async with client(cluster.url, version) as session:
        for n in range(6):
            proxy.pinned = n % 3
            seen.append(text_of(await session.call_tool("echo", {"message": str(n)})))
        proxy.pinned = None
    assert seen == [str(n) for n in range(6)]


# --- an instance stopped mid-run -------------------------------------------------


@dataclass
class Chatter:
    """One client's calls of `chatty` and what came back for each."""

    progress: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    logs: dict[str, list[str]] = field(default_factory=dict[str, list[str]])


STEPS = 3


@dataclass
class Milestone:
    """Calls finished so far; `reached` is set at `target`."""

    target: int
    count: int = 0
    reached: anyio.Event = field(default_factory=anyio.Event)

    def one_more(self) -> None:
        self.count += 1
        if self.count >= self.target:
            self.reached.set()


async def chat_load(
    url: str,
    cid: str,
    version: str,
    calls: int,
    tally: Tally,
    done: Milestone,
) -> None:
    """`calls` calls of `chatty`, each checked for its result and all its
    notifications; a "send it again" answer (or, 2026, a cut answer) is resent
    and counted."""
    chatter = Chatter()

    async def on_log(params: latest.LoggingMessageNotificationParams) -> None:
        tag, _, step = str(params.data).rpartition(" ")
        chatter.logs.setdefault(tag, []).append(step)

    async with client(url, version, on_log=on_log, log_level="info") as session:
        for n in range(calls):
            tag = f"{cid}:{n}"
            for _attempt in range(5):
                got: list[float] = []

                async def on_progress(
                    progress: float, _total: float | None, _msg: str | None
                ) -> None:
                    got.append(progress)  # noqa: B023 - this attempt's list

                chatter.logs.pop(tag, None)
                try:
                    result = await session.call_tool(
                        "chatty",
                        {"tag": tag, "steps": STEPS, "delay_ms": 20},
                        on_progress=on_progress,
                    )
                except RpcError as exc:
                    if SEND_AGAIN in exc.message or version == MODERN:
                        tally.resent[version] += 1
                        continue
                    tally.wrong.append(f"{tag}: {exc!r}")
                    break
                if text_of(result) != f"{tag} done {STEPS}":
                    tally.wrong.append(f"{tag}: {text_of(result)}")
                elif got != [float(s) for s in range(1, STEPS + 1)]:
                    tally.wrong.append(f"{tag}: progress {got}")
                else:
                    tally.ok[version] += 1
                chatter.progress[tag] = got
                break
            else:
                tally.wrong.append(f"{tag}: five attempts failed")
            done.one_more()
        await anyio.sleep(0.2)  # the last log lines
    for tag in chatter.progress:
        if chatter.logs.get(tag) != [str(s) for s in range(1, STEPS + 1)]:
            tally.wrong.append(f"{tag}: logs {chatter.logs.get(tag)}")


@dataclass
class LongCall:
    """A legacy call in flight on the stopped instance, through its own proxy."""

    outcome: list[str] = field(default_factory=list[str])
    progress: list[float] = field(default_factory=list[float])
    logs: list[str] = field(default_factory=list[str])
    resent: int = 0
    started: anyio.Event = field(default_factory=anyio.Event)


LONG_STEPS, LONG_DELAY_MS = 3, 2_700
"""Longer than uvicorn's graceful 5 s: a SIGTERM cuts the call's stream."""


async def long_call(url: str, proxy: RoundRobinProxy, call: LongCall) -> None:
    """Open a session on instance b and call `chatty` there slowly; once it
    runs, let the proxy rotate (b will be stopped); resend on "send it again"."""

    async def on_log(params: latest.LoggingMessageNotificationParams) -> None:
        call.logs.append(str(params.data))

    async def on_progress(
        progress: float, _total: float | None, _m: str | None
    ) -> None:
        call.progress.append(progress)
        proxy.pinned = None
        call.started.set()

    proxy.pinned = 1  # the session's home and the call: b
    async with client(url, "2025-11-25", on_log=on_log, log_level="info") as session:
        arguments = {"tag": "long", "steps": LONG_STEPS, "delay_ms": LONG_DELAY_MS}
        for _attempt in range(3):
            call.progress.clear()
            call.logs.clear()
            try:
                result = await session.call_tool(
                    "chatty", arguments, on_progress=on_progress, timeout=60
                )
            except RpcError as exc:
                call.outcome.append(exc.message)
                if SEND_AGAIN not in exc.message:
                    return
                call.resent += 1
                continue
            call.outcome.append(text_of(result))
            await anyio.sleep(0.2)  # the last log line
            return


async def stop_one_mid_run(
    redis_server: RedisServer, sig: int
) -> tuple[Tally, LongCall, int]:
    """Nine clients (three per revision) calling `chatty` through the proxy,
    and one long legacy call on b; b is stopped once a third of the calls
    are done and the long call runs. The tally, the long call, and how many
    streams clients resumed (GET with Last-Event-ID, both proxies)."""
    clients, calls = 9, 40
    tally = Tally()
    done = Milestone(clients * calls // 3)
    long = LongCall()
    prefix = f"kill-{sig}:"
    with ClusterHarness(3, redis_url=redis_server.url, prefix=prefix) as up:
        apart, port = up.add_proxy()
        async with anyio.create_task_group() as tasks:
            for index in range(clients):
                version = era_of(index)
                tasks.start_soon(
                    chat_load, up.url, f"c{index}", version, calls, tally, done
                )
            await done.reached.wait()
            tasks.start_soon(long_call, f"http://127.0.0.1:{port}/mcp", apart, long)
            await long.started.wait()
            status = await anyio.to_thread.run_sync(up.stop_instance, 1, sig)
        resumes = proxy_of(up).resumes + apart.resumes
        assert status != 0 or sig == signal.SIGTERM
    assert tally.wrong == [], tally.wrong[:10]
    assert sum(tally.ok.values()) == clients * calls
    assert long.outcome[-1] == f"long done {LONG_STEPS}", long.outcome
    steps = range(1, LONG_STEPS + 1)
    assert long.progress == [float(s) for s in steps]
    assert long.logs == [f"long {s}" for s in steps]
    return tally, long, resumes


async def test_an_instance_stopped_gracefully_mid_run_loses_nothing(
    redis_server: RedisServer,
) -> None:
    tally, long, resumes = await stop_one_mid_run(redis_server, signal.SIGTERM)
    print(
        f"after SIGTERM: resent {dict(tally.resent)}, {long.resent}; resumed {resumes}"
    )
    assert sum(tally.resent.values()) == 0, tally.resent
    assert resumes >= 1  # the long call's stream, cut by the shutdown
    # The long call outlives uvicorn's 5 s grace: b's shutdown lets it
    # finish (its answer stored) before ending the session, and the client,
    # resumed elsewhere, gets it, never "send it again".
    assert long.resent == 0, long.outcome


async def test_an_instance_killed_mid_run_answers_or_says_send_it_again(
    redis_server: RedisServer,
) -> None:
    tally, long, resumes = await stop_one_mid_run(redis_server, signal.SIGKILL)
    print(
        f"after SIGKILL: resent {dict(tally.resent)}, {long.resent}; resumed {resumes}"
    )

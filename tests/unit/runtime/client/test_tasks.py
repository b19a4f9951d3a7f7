"""`Client` tasks in both eras against the fake task servers of
`task_servers` (2025-11-25 core tasks, the 2026-07-28 tasks extension):
start, poll, wait, result, failures, input, cancel, list, timeouts, and the
errors raised before anything is sent."""

from __future__ import annotations

import gc
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.client.tasks import (
    TaskCancelledError,
    TaskState,
    TaskSupportError,
)
from mcp_specgen_runtime.errors import (
    CapabilityError,
    ProtocolError,
    RequestTimeoutError,
    RpcError,
)
from mcp_specgen_types import latest, v2025_11_25

from .task_servers import CAPS, EXTENSION, FAILURE, FakeTaskServer, fake_server

LIMIT = 10.0
ERAS = ["legacy", "modern"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def sampling(
    params: latest.CreateMessageRequestParams,
) -> latest.CreateMessageResult:
    return latest.CreateMessageResult(
        role="assistant", content=latest.TextContent(text="a haiku"), model="m"
    )


async def elicitation(params: latest.ElicitRequestParams) -> latest.ElicitResult:
    assert params.message == "Your name?"  # type: ignore[union-attr]
    return latest.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def connected(
    era: str, **options: Any
) -> AsyncGenerator[tuple[FakeTaskServer, Client]]:
    with anyio.fail_after(LIMIT):
        async with fake_server(era) as (server, transport):
            options.setdefault("sampling", sampling)
            options.setdefault("elicitation", elicitation)
            async with Client(transport, cache=None, **options) as client:
                yield server, client


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


class Statuses:
    """An `on_status` callback noting each status it hears."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, state: TaskState) -> None:
        self.seen.append(state.status)


# --- the happy path ---------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_task_is_polled_waited_for_and_gives_its_result(era: str) -> None:
    statuses = Statuses()
    async with connected(era) as (server, client):
        handle = await client.call_tool_as_task(
            "slow", {"x": 1}, ttl_ms=5000, on_status=statuses
        )
        assert handle.task_id == "task-1"
        assert not handle.immediate
        assert (await handle.status()).status == "working"
        server.release.set()
        state = await handle.wait()
        assert state.status == "completed" and state.terminal
        result = await handle.result()
        assert isinstance(result, latest.CallToolResult)
        assert text_of(result) == "done"
        assert statuses.seen[-1] == "completed"
        call = next(body for method, body in server.seen if method == "tools/call")
        assert call["arguments"] == {"x": 1}
        if era == "legacy":
            assert call["task"] == {"ttl": 5000}
            assert "tasks/result" in server.methods()
        else:
            assert "task" not in call
            assert call["_meta"][CAPS]["extensions"] == {EXTENSION: {}}
            gets = [body for method, body in server.seen if method == "tasks/get"]
            assert all(EXTENSION in b["_meta"][CAPS]["extensions"] for b in gets)


@pytest.mark.anyio
async def test_a_result_comes_in_the_revision_asked_for() -> None:
    async with connected("legacy") as (server, client):
        handle = await client.call_tool_as_task("slow")
        server.release.set()
        result = await handle.result_as(v2025_11_25.CallToolResult)
        assert isinstance(result, v2025_11_25.CallToolResult)
        assert text_of(result) == "done"
        call = next(body for method, body in server.seen if method == "tools/call")
        assert call["task"] == {}


@pytest.mark.anyio
async def test_legacy_status_callbacks_come_from_polling_without_notifications() -> (
    None
):
    statuses = Statuses()
    async with connected("legacy") as (server, client):
        server.notify = False
        handle = await client.call_tool_as_task("slow", on_status=statuses)

        async def release_once_polled() -> None:
            await server.until("tasks/get", 2)
            server.release.set()

        async with anyio.create_task_group() as group:
            group.start_soon(release_once_polled)
            assert (await handle.wait()).status == "completed"
        assert statuses.seen == ["completed"]
        assert "notifications/tasks/status" not in server.methods()


@pytest.mark.anyio
async def test_legacy_status_notifications_reach_the_callbacks() -> None:
    statuses = Statuses()
    async with connected("legacy") as (_server, client):
        handle = await client.call_tool_as_task("ask", on_status=statuses)
        result = await handle.result()
        assert text_of(result) == "you said Ada"
        # input_required and back to working are only told by notifications
        # (tasks/result is the only request while the task runs).
        assert statuses.seen[:2] == ["input_required", "working"]
        assert statuses.seen[-1] == "completed"


# --- what a 2026 server does with a call --------------------------------------


@pytest.mark.anyio
async def test_a_2026_server_answering_at_once_gives_a_finished_handle() -> None:
    async with connected("modern") as (server, client):
        handle = await client.call_tool_as_task("quick")
        assert handle.immediate and handle.state.terminal
        assert (await handle.status()).status == "completed"
        assert text_of(await handle.result()) == "quick at once"
        assert (await handle.cancel()).status == "completed"
        assert [m for m in server.methods() if m.startswith("tasks/")] == []


@pytest.mark.anyio
async def test_call_tool_waits_on_a_2026_task_transparently() -> None:
    async with connected("modern", accept_tasks=True) as (server, client):
        server.release.set()
        result = await client.call_tool("slow")
        assert isinstance(result, latest.CallToolResult)
        assert text_of(result) == "done"
        assert "tasks/get" in server.methods()
        assert text_of(await client.call_tool("ask")) == "you said Ada"
        with pytest.raises(RpcError) as failed:
            await client.call_tool("fail")
        assert failed.value.code == FAILURE["code"]


@pytest.mark.anyio
async def test_call_tool_without_accept_tasks_declares_no_extension() -> None:
    async with connected("modern") as (server, client):
        assert text_of(await client.call_tool("slow")) == "slow at once"
        call = next(body for method, body in server.seen if method == "tools/call")
        assert "extensions" not in call["_meta"][CAPS]


# --- failures -----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_failed_task_raises_its_json_rpc_error(era: str) -> None:
    async with connected(era) as (_, client):
        handle = await client.call_tool_as_task("fail")
        with pytest.raises(RpcError) as failed:
            await handle.result()
        assert failed.value.code == FAILURE["code"]
        assert failed.value.message == FAILURE["message"]
        assert failed.value.data == FAILURE["data"]
        assert handle.state.status == "failed"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_error_is_a_result_with_is_error(era: str) -> None:
    async with connected(era) as (_, client):
        handle = await client.call_tool_as_task("tool_error")
        result = await handle.result()
        assert result.is_error is True
        assert text_of(result) == "bad"
        # 2025-11-25 fails the task of an isError result; SEP-2663 completes it.
        assert handle.state.status == ("failed" if era == "legacy" else "completed")


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_an_unknown_task_id_is_refused(era: str) -> None:
    async with connected(era) as (_, client):
        handle = client.task("no-such-task")
        with pytest.raises(RpcError) as refused:
            await handle.status()
        assert refused.value.code == -32602
        with pytest.raises(RpcError):
            await handle.result()


# --- input ---------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("tool", "expected"), [("ask", "you said Ada"), ("sample", "a haiku")]
)
async def test_input_required_is_answered_by_the_callbacks(
    era: str, tool: str, expected: str
) -> None:
    statuses = Statuses()
    async with connected(era) as (server, client):
        handle = await client.call_tool_as_task(tool, on_status=statuses)
        assert text_of(await handle.result()) == expected
        assert "input_required" in statuses.seen
        if era == "modern":
            updates = [b for m, b in server.seen if m == "tasks/update"]
            assert len(updates) == 1  # answered once, however often polled
            assert list(updates[0]["inputResponses"]) == ["q1"]


@pytest.mark.anyio
async def test_input_the_client_cannot_give_fails_the_wait() -> None:
    async with connected("modern", elicitation=None) as (_, client):
        handle = await client.call_tool_as_task("ask")
        with pytest.raises(RpcError) as refused:
            await handle.wait()
        assert refused.value.code == -32601


# --- cancel ----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_cancelled_task_has_no_result(era: str) -> None:
    statuses = Statuses()
    async with connected(era) as (server, client):
        handle = await client.call_tool_as_task("slow", on_status=statuses)
        state = await handle.cancel()
        assert state.status == "cancelled"
        assert "cancelled" in statuses.seen
        with pytest.raises(TaskCancelledError) as cancelled:
            await handle.result()
        assert cancelled.value.state.task_id == handle.task_id
        if era == "legacy":
            with pytest.raises(RpcError) as again:
                await handle.cancel()
            assert again.value.code == -32602
        else:
            assert (await handle.cancel()).status == "cancelled"
        server.release.set()
        assert (await handle.status()).status == "cancelled"


# --- timeouts ----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_wait_ends_at_its_timeout_and_the_task_goes_on(era: str) -> None:
    async with connected(era) as (server, client):
        handle = await client.call_tool_as_task("slow")
        with pytest.raises(RequestTimeoutError):
            await handle.wait(timeout=0.1)
        with pytest.raises(RequestTimeoutError):
            await handle.result(timeout=0.1)
        assert handle.state.status == "working"
        server.release.set()
        assert text_of(await handle.result()) == "done"


@pytest.mark.anyio
async def test_the_client_timeout_bounds_a_wait_by_default() -> None:
    async with connected("modern", timeout=0.1, accept_tasks=True) as (_, client):
        handle = await client.call_tool_as_task("slow")
        with pytest.raises(RequestTimeoutError):
            await handle.wait()
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("slow")


# --- list --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_legacy_tasks_are_listed_page_by_page() -> None:
    async with connected("legacy") as (_, client):
        for _ in range(3):
            await client.call_tool_as_task("slow")
        first = await client.list_tasks()
        assert [t.task_id for t in first.tasks] == ["task-1", "task-2"]
        assert first.next_cursor is not None
        second = await client.list_tasks(first.next_cursor)
        assert [t.task_id for t in second.tasks] == ["task-3"]
        assert second.next_cursor is None
        assert {t.status for t in first.tasks + second.tasks} == {"working"}


@pytest.mark.anyio
async def test_2026_has_no_task_list() -> None:
    async with connected("modern") as (server, client):
        with pytest.raises(CapabilityError, match="no tasks/list"):
            await client.list_tasks()
        assert "tasks/list" not in server.methods()


# --- refused before sending -----------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_server_without_tasks_is_refused_before_sending(era: str) -> None:
    async with fake_server(era) as (server, transport):
        server.capabilities = {"tools": {}}
        async with Client(transport, cache=None) as client:
            with pytest.raises(CapabilityError) as refused:
                await client.call_tool_as_task("slow")
            assert "tasks" in refused.value.capability
            if era == "legacy":
                with pytest.raises(CapabilityError):
                    await client.list_tasks()
    assert "tools/call" not in server.methods()
    assert "tasks/list" not in server.methods()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "support"),
    [("plain", "forbidden"), ("forbidden", "forbidden"), ("nope", None)],
)
async def test_a_tool_that_runs_no_task_is_refused_before_sending(
    tool: str, support: str | None
) -> None:
    async with connected("legacy") as (server, client):
        with pytest.raises(TaskSupportError) as refused:
            await client.call_tool_as_task(tool)
        assert refused.value.tool == tool
        assert isinstance(refused.value, CapabilityError)
        if support is not None:
            assert repr(support) in str(refused.value)
        assert "tools/call" not in server.methods()


# --- TaskState and notifications ------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [{}, {"taskId": "", "status": "working"}, {"taskId": "t", "status": "sleeping"}],
)
def test_a_task_without_id_or_with_an_unknown_status_is_a_protocol_error(
    body: dict[str, Any],
) -> None:
    with pytest.raises(ProtocolError):
        TaskState.from_wire(body)


def test_both_eras_ttl_and_poll_interval_are_read() -> None:
    legacy = TaskState.from_wire(
        {"taskId": "t", "status": "working", "ttl": None, "pollInterval": 20}
    )
    assert (legacy.ttl_ms, legacy.poll_interval_ms) == (None, 20)
    modern = TaskState.from_wire(
        {"taskId": "t", "status": "working", "ttlMs": 9, "pollIntervalMs": 30}
    )
    assert (modern.ttl_ms, modern.poll_interval_ms) == (9, 30)
    odd = TaskState.from_wire(
        {"taskId": "t", "status": "working", "ttl": "long", "pollInterval": True}
    )
    assert (odd.ttl_ms, odd.poll_interval_ms) == (None, None)


@pytest.mark.anyio
async def test_a_late_notification_does_not_undo_an_ended_task() -> None:
    statuses = Statuses()
    async with connected("legacy") as (server, client):
        server.notify = False
        handle = await client.call_tool_as_task("slow", on_status=statuses)
        server.release.set()
        await handle.wait()
        late = {"taskId": handle.task_id, "status": "working"}
        await client._watch.notified(late)  # pyright: ignore[reportPrivateUsage]
        assert handle.state.status == "completed"
        assert statuses.seen == ["completed"]
        await client._watch.notified(
            {"status": "working"}
        )  # pyright: ignore[reportPrivateUsage]


@pytest.mark.anyio
async def test_a_tasks_get_about_another_task_is_a_protocol_error() -> None:
    async with connected("modern") as (server, client):
        handle = await client.call_tool_as_task("slow")
        server.tasks["task-1"]["taskId"] = "task-9"
        with pytest.raises(ProtocolError, match="answered task task-9"):
            await handle.status()


@pytest.mark.anyio
async def test_progress_of_a_task_reaches_the_callback_until_it_ends() -> None:
    """2025-11-25: the call's progress token stays valid for the task's
    lifetime; the callback is dropped once the task has ended."""
    heard: list[float] = []
    both = anyio.Event()

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        heard.append(progress)
        if len(heard) == 2:
            both.set()

    async with connected("legacy") as (server, client):
        handle = await client.call_tool_as_task("steps", on_progress=on_progress)
        await both.wait()  # sent after the CreateTaskResult
        progress = client._notifications.progress  # pyright: ignore[reportPrivateUsage]
        assert len(progress) == 1
        server.release.set()
        assert text_of(await handle.result()) == "stepped"
        assert heard == [1, 2]
        assert progress == {}
        call = next(body for method, body in server.seen if method == "tools/call")
        assert "progressToken" in call["_meta"]


@pytest.mark.anyio
async def test_a_transparent_wait_drops_its_progress_callback_even_on_timeout() -> None:
    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        pass

    async with connected("modern", accept_tasks=True) as (_, client):
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("slow", timeout=0.1, on_progress=on_progress)
        assert (
            client._notifications.progress == {}
        )  # pyright: ignore[reportPrivateUsage]
        assert client._watch.handles == {}  # pyright: ignore[reportPrivateUsage]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("era", "method", "answer"),
    [
        ("legacy", "tools/call", {"content": []}),
        ("legacy", "tools/call", {"task": "t"}),
        ("legacy", "tools/call", {"task": {"taskId": "t", "status": "asleep"}}),
        ("modern", "tools/call", {"resultType": "task", "status": "working"}),
        ("modern", "tasks/get", {"taskId": "task-1", "resultType": "complete"}),
        ("legacy", "tasks/list", {"tasks": "none"}),
    ],
)
async def test_a_malformed_task_answer_is_a_protocol_error(
    era: str, method: str, answer: Any
) -> None:
    async with connected(era) as (server, client):
        if method != "tools/call":
            handle = await client.call_tool_as_task("slow")
        server.overrides[method] = answer
        with pytest.raises(ProtocolError):
            if method == "tools/call":
                await client.call_tool_as_task("slow")
            elif method == "tasks/get":
                await handle.status()
            else:
                await client.list_tasks()


class StatusHandlers(v2025_11_25.ClientHandlers):
    """User handlers that also listen for task statuses."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        self.completed = anyio.Event()

    async def notifications_tasks_status(
        self, params: v2025_11_25.TaskStatusNotificationParams
    ) -> None:
        self.heard.append(params.status)
        if params.status == "completed":
            self.completed.set()


@pytest.mark.anyio
async def test_status_notifications_still_reach_the_users_handlers() -> None:
    handlers = StatusHandlers()
    statuses = Statuses()
    async with connected("legacy", handlers=handlers) as (server, client):
        handle = await client.call_tool_as_task("slow", on_status=statuses)
        server.release.set()
        await handle.result()
        await handlers.completed.wait()
    assert statuses.seen[-1] == "completed"
    assert handlers.heard[-1] == "completed"


# --- handles no one keeps -----------------------------------------------------


async def no_progress(
    progress: float, total: float | None, message: str | None
) -> None:
    pass


def held(client: Client) -> tuple[int, int]:
    """The handles the client watches and the progress callbacks it keeps."""
    watch = client._watch  # pyright: ignore[reportPrivateUsage]
    progress = client._notifications.progress  # pyright: ignore[reportPrivateUsage]
    return len(watch), len(progress)


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_dropped_handle_releases_its_watch_and_progress(era: str) -> None:
    """Fire and forget: the tasks never end (2026 sends no status either),
    so only dropping the handle can free what the client holds for it."""
    async with connected(era) as (_, client):
        kept = await client.call_tool_as_task("slow", on_progress=no_progress)
        for _ in range(20):
            await client.call_tool_as_task("slow", on_progress=no_progress)
        gc.collect()
        assert held(client) == (1, 1)
        del kept
        gc.collect()
        assert held(client) == (0, 0)


@pytest.mark.anyio
async def test_a_resumed_handle_no_one_keeps_is_forgotten() -> None:
    async with connected("legacy") as (_, client):
        kept = client.task("task-7")
        for i in range(20):
            client.task(f"task-{i}")
        gc.collect()
        assert held(client) == (1, 0)
        assert kept.task_id == "task-7"


@pytest.mark.anyio
async def test_a_detached_handle_releases_its_watch_and_progress() -> None:
    statuses = Statuses()
    async with connected("legacy") as (server, client):
        handle = await client.call_tool_as_task(
            "slow", on_progress=no_progress, on_status=statuses
        )
        handle.detach()
        assert held(client) == (0, 0)
        watch = client._watch  # pyright: ignore[reportPrivateUsage]
        await watch.notified({"taskId": handle.task_id, "status": "failed"})
        assert statuses.seen == []
        server.release.set()
        assert (await handle.wait()).status == "completed"  # it still polls


@pytest.mark.anyio
async def test_a_kept_handle_still_hears_its_status_notifications() -> None:
    statuses = Statuses()
    async with connected("legacy") as (_, client):
        handle = client.task("task-3", on_status=statuses)
        gc.collect()
        watch = client._watch  # pyright: ignore[reportPrivateUsage]
        await watch.notified({"taskId": "task-3", "status": "input_required"})
        assert statuses.seen == ["input_required"]
        assert handle.state.status == "input_required"

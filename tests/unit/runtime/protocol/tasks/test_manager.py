"""`TaskManager`: the lifecycle, races, owners, limits and expiry of tasks."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.protocol.tasks import RATE_LIMITED, RunningTask, TaskManager
from mcp_specgen_runtime.stores.tasks import MemoryTaskStore, TaskRecord

LIMIT = 10.0
ERA = "2025-11-25"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def status_of(tasks: TaskManager, task_id: str) -> str | None:
    """The stored status, read without spending the rate limit."""
    record = await tasks.store.get(task_id)
    return None if record is None else record.status


@asynccontextmanager
async def manager(**options: Any) -> AsyncIterator[TaskManager]:
    with anyio.fail_after(LIMIT):
        async with TaskManager(**options) as tasks:
            yield tasks


async def done(result: dict[str, Any] | None = None) -> Any:
    async def run(_: RunningTask) -> dict[str, Any]:
        return result if result is not None else {"content": []}

    return run


class Gate:
    """Work that waits until released; records whether it was cancelled."""

    def __init__(self, result: dict[str, Any] | None = None) -> None:
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.cancelled = False
        self.result = result or {"content": [{"type": "text", "text": "ok"}]}

    async def __call__(self, _: RunningTask) -> dict[str, Any]:
        self.started.set()
        try:
            await self.release.wait()
        except BaseException:
            self.cancelled = True
            raise
        return self.result


@pytest.mark.anyio
async def test_a_task_is_stored_working_before_start_returns() -> None:
    async with manager() as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate)
        assert record.status == "working"
        stored = await tasks.store.get(record.task_id)
        assert stored is not None and stored.status == "working"
        assert (stored.owner, stored.era, stored.method) == ("alice", ERA, "tools/call")
        gate.release.set()


@pytest.mark.anyio
async def test_working_then_completed_with_the_result() -> None:
    async with manager() as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate)
        await gate.started.wait()
        assert (await tasks.get("alice", record.task_id)).status == "working"
        gate.release.set()
        final = await tasks.wait("alice", record.task_id)
        assert final.status == "completed"
        assert final.result == gate.result and final.error is None


@pytest.mark.anyio
async def test_an_rpc_error_fails_the_task_with_that_error() -> None:
    async def run(_: RunningTask) -> dict[str, Any]:
        raise RpcError(-32602, "Unknown tool: x", {"name": "x"})

    async with manager() as tasks:
        record = await tasks.start("alice", ERA, "tools/call", run)
        final = await tasks.wait("alice", record.task_id)
        assert final.status == "failed"
        assert final.error == {
            "code": -32602,
            "message": "Unknown tool: x",
            "data": {"name": "x"},
        }
        assert final.status_message == "Unknown tool: x"


@pytest.mark.anyio
async def test_an_exception_fails_the_task_without_its_text() -> None:
    async def run(_: RunningTask) -> dict[str, Any]:
        raise KeyError("secret detail")

    async with manager() as tasks:
        record = await tasks.start("alice", ERA, "tools/call", run)
        final = await tasks.wait("alice", record.task_id)
        assert final.status == "failed"
        assert final.error is not None
        assert final.error["code"] == ErrorCode.INTERNAL_ERROR
        assert "secret" not in str(final.error) + str(final.status_message)


@pytest.mark.anyio
async def test_failed_when_makes_a_result_failed_and_keeps_it() -> None:
    error_result = {"content": [], "isError": True}

    async def run(_: RunningTask) -> dict[str, Any]:
        return error_result

    async with manager() as tasks:
        failing = await tasks.start(
            "alice", ERA, "tools/call", run, failed_when=lambda r: bool(r["isError"])
        )
        plain = await tasks.start("alice", ERA, "tools/call", run)
        failed = await tasks.wait("alice", failing.task_id)
        assert (failed.status, failed.result) == ("failed", error_result)
        assert (await tasks.wait("alice", plain.task_id)).status == "completed"


@pytest.mark.anyio
async def test_cancel_stops_the_work_and_is_sticky() -> None:
    async with manager() as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate)
        await gate.started.wait()
        cancelled = await tasks.cancel("alice", record.task_id)
        assert cancelled.status == "cancelled"
        assert cancelled.status_message == "The task was cancelled by request."
        final = await tasks.wait("alice", record.task_id)
        assert final.status == "cancelled" and final.result is None
        await anyio.wait_all_tasks_blocked()
        assert gate.cancelled


@pytest.mark.anyio
@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
async def test_cancelling_a_terminal_task_is_invalid_params(status: str) -> None:
    async def run(_: RunningTask) -> dict[str, Any]:
        if status == "failed":
            raise RpcError(-32603, "boom")
        return {}

    async with manager() as tasks:
        gate = Gate()
        record = await tasks.start(
            "alice", ERA, "tools/call", gate if status == "cancelled" else run
        )
        if status == "cancelled":
            await tasks.cancel("alice", record.task_id)
        await tasks.wait("alice", record.task_id)
        with pytest.raises(RpcError) as caught:
            await tasks.cancel("alice", record.task_id)
        assert caught.value.code == ErrorCode.INVALID_PARAMS
        assert caught.value.message == (
            f"Cannot cancel task: already in terminal status '{status}'"
        )


@pytest.mark.anyio
async def test_cancel_racing_completion_ends_in_exactly_one_state() -> None:
    outcomes: set[str] = set()
    async with manager(rate=None) as tasks:
        for i in range(200):
            gate = Gate()
            record = await tasks.start("alice", ERA, "tools/call", gate)
            await gate.started.wait()
            refused: list[RpcError] = []

            async def cancel(task_id: str, into: list[RpcError]) -> None:
                try:
                    await tasks.cancel("alice", task_id)
                except RpcError as exc:
                    into.append(exc)

            async with anyio.create_task_group() as group:
                if i % 2:
                    gate.release.set()
                    group.start_soon(cancel, record.task_id, refused)
                else:
                    group.start_soon(cancel, record.task_id, refused)
                    gate.release.set()
            final = await tasks.wait("alice", record.task_id)
            outcomes.add(final.status)
            if final.status == "cancelled":
                assert final.result is None and not refused
            else:
                assert final.status == "completed" and final.result == gate.result
                assert len(refused) == 1
                assert "already in terminal status 'completed'" in refused[0].message
            again = await tasks.get("alice", record.task_id)
            assert again.status == final.status
    assert outcomes == {"completed", "cancelled"}  # both sides of the race won


@pytest.mark.anyio
@pytest.mark.parametrize("operation", ["get", "wait", "cancel"])
async def test_unknown_and_foreign_ids_are_one_error(operation: str) -> None:
    async with manager() as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate)
        errors: list[tuple[int, str]] = []
        for owner, task_id in (("mallory", record.task_id), ("alice", "no-such-id")):
            with pytest.raises(RpcError) as caught:
                await getattr(tasks, operation)(owner, task_id)
            errors.append((caught.value.code, caught.value.message))
        assert errors[0] == errors[1]
        assert errors[0] == (-32602, "Failed to retrieve task: Task not found")
        assert (await tasks.get("alice", record.task_id)).status == "working"
        gate.release.set()


@pytest.mark.anyio
async def test_an_anonymous_task_is_not_another_owners() -> None:
    async with manager() as tasks:
        record = await tasks.start(None, ERA, "tools/call", await done())
        with pytest.raises(RpcError):
            await tasks.get("alice", record.task_id)
        assert (await tasks.wait(None, record.task_id)).status == "completed"


@pytest.mark.anyio
async def test_ttl_defaults_and_is_capped() -> None:
    async with manager(default_ttl_ms=5_000, max_ttl_ms=60_000) as tasks:
        run = await done()
        assert (await tasks.start("a", ERA, "tools/call", run)).ttl_ms == 5_000
        assert (await tasks.start("a", ERA, "tools/call", run, 10_000)).ttl_ms == 10_000
        assert (await tasks.start("a", ERA, "tools/call", run, 10**9)).ttl_ms == 60_000
    async with manager(default_ttl_ms=None, max_ttl_ms=None) as tasks:
        assert (await tasks.start("a", ERA, "tools/call", run)).ttl_ms is None


@pytest.mark.anyio
async def test_an_expired_task_is_not_found_and_its_work_stops() -> None:
    offset = [0.0]
    store = MemoryTaskStore(clock=lambda: time.time() + offset[0])
    async with manager(store=store) as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate, 1_000)
        await gate.started.wait()
        offset[0] = 2.0
        with pytest.raises(RpcError) as caught:
            await tasks.get("alice", record.task_id)
        assert caught.value.code == -32602
        assert await tasks.purge() == 0  # already dropped on access
        await anyio.wait_all_tasks_blocked()
        assert gate.cancelled
        assert await tasks.list("alice") == ([], None)


@pytest.mark.anyio
async def test_purge_deletes_expired_records() -> None:
    offset = [0.0]
    store = MemoryTaskStore(clock=lambda: time.time() + offset[0])
    async with manager(store=store) as tasks:
        for ttl in (1_000, 1_000, 60_000):
            record = await tasks.start("alice", ERA, "tools/call", await done(), ttl)
            await tasks.wait("alice", record.task_id)
        offset[0] = 5.0
        assert await tasks.purge() == 2


@pytest.mark.anyio
async def test_list_pages_only_the_owners_tasks() -> None:
    async with manager(page_size=2) as tasks:
        mine = [
            (await tasks.start("alice", ERA, "tools/call", await done())).task_id
            for _ in range(5)
        ]
        await tasks.start("bob", ERA, "tools/call", await done())
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page, cursor = await tasks.list("alice", cursor)
            pages += 1
            assert len(page) <= 2
            seen += [r.task_id for r in page]
            if cursor is None:
                break
        assert seen == mine and pages == 3
        bobs, _ = await tasks.list("bob")
        assert len(bobs) == 1 and bobs[0].owner == "bob"


@pytest.mark.anyio
@pytest.mark.parametrize("cursor", ["garbage", "", "AAAA", "not base64!"])
async def test_a_cursor_not_issued_is_invalid_params(cursor: str) -> None:
    async with manager() as tasks:
        with pytest.raises(RpcError) as caught:
            await tasks.list("alice", cursor)
        assert caught.value.code == -32602


@pytest.mark.anyio
async def test_a_cursor_is_bound_to_its_owner() -> None:
    async with manager(page_size=1) as tasks:
        for _ in range(2):
            await tasks.start("alice", ERA, "tools/call", await done())
        _, cursor = await tasks.list("alice")
        assert cursor is not None
        with pytest.raises(RpcError) as caught:
            await tasks.list("mallory", cursor)
        assert caught.value.code == -32602


@pytest.mark.anyio
async def test_operations_over_the_rate_are_refused_clearly() -> None:
    async with manager(rate=0.001, burst=3) as tasks:
        record = await tasks.start("alice", ERA, "tools/call", await done())
        await tasks.get("alice", record.task_id)
        await tasks.list("alice")
        with pytest.raises(RpcError) as caught:
            await tasks.get("alice", record.task_id)
        assert caught.value.code == RATE_LIMITED
        assert "Too many task operations (get)" in caught.value.message
        assert caught.value.data["retryAfterMs"] > 0
        # Another owner has a bucket of its own.
        await tasks.list("bob")


@pytest.mark.anyio
async def test_active_tasks_per_owner_are_capped() -> None:
    async with manager(max_active_per_owner=2) as tasks:
        gates = [Gate(), Gate()]
        records = [await tasks.start("alice", ERA, "tools/call", g) for g in gates]
        with pytest.raises(RpcError) as caught:
            await tasks.start("alice", ERA, "tools/call", Gate())
        assert caught.value.code == RATE_LIMITED
        assert "at most 2" in caught.value.message
        await tasks.start("bob", ERA, "tools/call", await done())
        gates[0].release.set()
        await tasks.wait("alice", records[0].task_id)
        await tasks.start("alice", ERA, "tools/call", await done())
        gates[1].release.set()


@pytest.mark.anyio
async def test_awaiting_input_is_input_required_then_working() -> None:
    seen: list[str] = []
    async with manager() as tasks:
        inside = anyio.Event()
        resume = anyio.Event()

        async def run(handle: RunningTask) -> dict[str, Any]:
            async with handle.awaiting_input(), handle.awaiting_input():
                inside.set()
                await resume.wait()
            record = await handle.record()
            assert record is not None
            seen.append(record.status)
            return {}

        record = await tasks.start("alice", ERA, "tools/call", run)
        await inside.wait()
        assert (await tasks.get("alice", record.task_id)).status == "input_required"
        resume.set()
        assert (await tasks.wait("alice", record.task_id)).status == "completed"
        assert seen == ["working"]


@pytest.mark.anyio
async def test_parked_questions_wait_for_answers() -> None:
    async with manager() as tasks:
        asked = {
            "name": ("elicitation/create", {"message": "Name?"}),
            "age": ("elicitation/create", {"message": "Age?"}),
        }

        async def run(handle: RunningTask) -> dict[str, Any]:
            answers = await handle.ask(asked)
            return {"answers": answers}

        record = await tasks.start("alice", "2026-07-28", "tools/call", run)
        while (await status_of(tasks, record.task_id)) != "input_required":
            await anyio.lowlevel.checkpoint()
        waiting = await tasks.get("alice", record.task_id)
        assert waiting.input_requests == {
            "name": {"method": "elicitation/create", "params": {"message": "Name?"}},
            "age": {"method": "elicitation/create", "params": {"message": "Age?"}},
        }
        partial = await tasks.answer("alice", record.task_id, {"name": "Ann", "zzz": 1})
        assert partial.status == "input_required"
        assert partial.input_requests is not None and list(partial.input_requests) == [
            "age"
        ]
        resumed = await tasks.answer("alice", record.task_id, {"age": 7})
        assert resumed.status in ("working", "completed")
        final = await tasks.wait("alice", record.task_id)
        assert final.result == {"answers": {"name": "Ann", "age": 7}}
        assert final.input_requests is None
        with pytest.raises(RpcError):
            await tasks.answer("mallory", record.task_id, {"age": 1})


@pytest.mark.anyio
async def test_answering_a_task_that_asks_nothing_changes_nothing() -> None:
    async with manager() as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate)
        after = await tasks.answer("alice", record.task_id, {"x": 1})
        assert after.status == "working"
        gate.release.set()


@pytest.mark.anyio
async def test_listeners_and_notify_hear_each_status_change() -> None:
    heard: list[tuple[str, str]] = []
    notified: list[str] = []

    async def listener(record: TaskRecord) -> None:
        heard.append((record.task_id, record.status))

    async def notify(record: TaskRecord) -> None:
        notified.append(record.status)

    async with manager() as tasks:
        remove = tasks.add_listener(listener)

        async def run(handle: RunningTask) -> dict[str, Any]:
            async with handle.awaiting_input():
                await handle.set_status_message("asking")  # not a status change
            return {}

        record = await tasks.start("alice", ERA, "tools/call", run, notify=notify)
        await tasks.wait("alice", record.task_id)
        assert notified == ["input_required", "working", "completed"]
        assert heard == [(record.task_id, s) for s in notified]
        remove()
        second = await tasks.start("alice", ERA, "tools/call", await done())
        await tasks.wait("alice", second.task_id)
        assert len(heard) == 3


@pytest.mark.anyio
async def test_a_failing_listener_does_not_break_the_task() -> None:
    async def broken(_: TaskRecord) -> None:
        raise RuntimeError("listener bug")

    async with manager() as tasks:
        tasks.add_listener(broken)
        record = await tasks.start("alice", ERA, "tools/call", await done())
        assert (await tasks.wait("alice", record.task_id)).status == "completed"


@pytest.mark.anyio
async def test_aclose_fails_running_tasks_and_refuses_new_ones() -> None:
    store = MemoryTaskStore()
    tasks = TaskManager(store)
    gate = Gate()
    record = await tasks.start("alice", ERA, "tools/call", gate)
    await gate.started.wait()
    await tasks.aclose()
    assert gate.cancelled
    final = await store.get(record.task_id)
    assert final is not None and final.status == "failed"
    assert final.status_message == "The server stopped before the task finished."
    with pytest.raises(RpcError):
        await tasks.start("alice", ERA, "tools/call", Gate())


@pytest.mark.anyio
async def test_wait_sees_a_change_made_by_another_instance() -> None:
    """Two managers on one store: the one waiting re-reads the store."""
    store = MemoryTaskStore()
    async with (
        manager(store=store, recheck_s=0.01) as first,
        manager(store=store) as second,
    ):
        gate = Gate()
        record = await first.start("alice", ERA, "tools/call", gate)
        waited: list[TaskRecord] = []

        async def wait() -> None:
            waited.append(await second.wait("alice", record.task_id))

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            gate.release.set()
        assert waited[0].status == "completed"


class PurgeWatch(MemoryTaskStore):
    """Sets `purged` once `purge_expired` deleted something."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.purged = anyio.Event()

    async def purge_expired(self) -> int:
        deleted = await super().purge_expired()
        if deleted:
            self.purged.set()
        return deleted


@pytest.mark.anyio
async def test_the_purge_loop_deletes_expired_tasks_unasked() -> None:
    offset = [0.0]
    store = PurgeWatch(clock=lambda: time.time() + offset[0])
    async with manager(store=store, purge_interval_s=0.001) as tasks:
        record = await tasks.start("alice", ERA, "tools/call", await done(), 1_000)
        await tasks.wait("alice", record.task_id)
        offset[0] = 5.0
        await store.purged.wait()  # nothing reads the task: only the loop can go
        assert record.task_id not in store._records


@pytest.mark.anyio
async def test_creation_and_outcome_are_logged_for_audit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="mcp_specgen_runtime.protocol.tasks.manager")
    async with manager() as tasks:
        record = await tasks.start("owner-key", ERA, "tools/call", await done())
        await tasks.wait("owner-key", record.task_id)
    text = caplog.text
    assert (
        f"task {record.task_id} created: tools/call (2025-11-25) for owner-key" in text
    )
    assert f"task {record.task_id} completed" in text


class SlowStore(MemoryTaskStore):
    """Yields while creating (as SQLite does), or fails when told to."""

    fail = False

    async def create(self, record: TaskRecord) -> None:
        await anyio.sleep(0.001)
        if self.fail:
            raise OSError("disk full")
        await super().create(record)


@pytest.mark.anyio
async def test_concurrent_creations_cannot_overshoot_the_cap() -> None:
    async with manager(store=SlowStore(), max_active_per_owner=2) as tasks:
        gate = Gate()
        outcomes: list[str] = []

        async def start() -> None:
            try:
                await tasks.start("alice", ERA, "tools/call", gate)
                outcomes.append("started")
            except RpcError as exc:
                outcomes.append(str(exc.code))

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(start)
        assert outcomes.count("started") == 2
        assert outcomes.count(str(RATE_LIMITED)) == 18
        gate.release.set()


@pytest.mark.anyio
async def test_a_failed_creation_gives_its_slot_back() -> None:
    store = SlowStore()
    async with manager(store=store, max_active_per_owner=1) as tasks:
        store.fail = True
        with pytest.raises(OSError):
            await tasks.start("alice", ERA, "tools/call", Gate())
        store.fail = False
        gate = Gate()
        await tasks.start("alice", ERA, "tools/call", gate)
        gate.release.set()


@pytest.mark.anyio
async def test_active_tasks_of_all_owners_are_capped() -> None:
    async with manager(max_active_total=3) as tasks:
        gate = Gate()
        records = [
            await tasks.start(owner, ERA, "tools/call", gate)
            for owner in ("a", "b", "c")
        ]
        with pytest.raises(RpcError) as caught:
            await tasks.start("d", ERA, "tools/call", Gate())
        assert caught.value.code == RATE_LIMITED
        assert "too many tasks (at most 3 at once)" in caught.value.message
        assert caught.value.data == {"maxActiveTasksTotal": 3}
        gate.release.set()
        await tasks.wait("a", records[0].task_id)
        await tasks.wait("b", records[1].task_id)
        await tasks.wait("c", records[2].task_id)
        await tasks.start("d", ERA, "tools/call", await done())


@pytest.mark.anyio
async def test_waiting_on_unknown_ids_keeps_no_state() -> None:
    async with manager() as tasks:
        for n in range(50):
            with pytest.raises(RpcError):
                await tasks.wait("alice", f"bogus-{n}")
        record = await tasks.start("alice", ERA, "tools/call", await done())
        with pytest.raises(RpcError):
            await tasks.wait("bob", record.task_id)
        assert tasks._changed == {}  # pyright: ignore[reportPrivateUsage]


@pytest.mark.anyio
async def test_a_task_that_vanishes_while_waited_on_leaves_no_state() -> None:
    offset = [0.0]
    store = MemoryTaskStore(clock=lambda: time.time() + offset[0])
    async with manager(store=store, recheck_s=0.01) as tasks:
        gate = Gate()
        record = await tasks.start("alice", ERA, "tools/call", gate, 1_000)
        async with anyio.create_task_group() as group:

            async def waiter() -> None:
                with pytest.raises(RpcError):
                    await tasks.wait("alice", record.task_id)

            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            offset[0] = 2.0  # expired: the next re-check finds nothing
        assert tasks._changed == {}  # pyright: ignore[reportPrivateUsage]
        gate.release.set()


@pytest.mark.anyio
@pytest.mark.parametrize("asked", [-1, 0, 1, 999])
async def test_a_task_is_never_granted_less_than_the_minimum_ttl(asked: int) -> None:
    async with manager(min_ttl_ms=1_000) as tasks:
        record = await tasks.start("a", ERA, "tools/call", Gate(), asked)
        assert record.ttl_ms == 1_000
        assert (await tasks.get("a", record.task_id)).status == "working"


@pytest.mark.anyio
async def test_the_manager_closes_when_its_last_holder_releases_it() -> None:
    async with manager() as tasks:
        tasks.hold()
        tasks.hold()
        await tasks.release()
        record = await tasks.start("a", ERA, "tools/call", await done())
        assert (await tasks.wait("a", record.task_id)).status == "completed"
        await tasks.release()
        with pytest.raises(RpcError) as caught:
            await tasks.start("a", ERA, "tools/call", await done())
        assert "shutting down" in caught.value.message


@pytest.mark.anyio
async def test_releasing_a_manager_never_held_closes_it() -> None:
    async with manager() as tasks:
        await tasks.release()
        with pytest.raises(RpcError):
            await tasks.start("a", ERA, "tools/call", await done())

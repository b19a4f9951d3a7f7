"""`TaskManager`: runs tasks, whatever the wire that created them.

The engine both task designs share (2025-11-25 core tasks and the 2026-07-28
tasks extension): a wire layer calls `start(...)` with the work to run and
answers its requestor at once; the work runs in the background, its outcome
goes to the store; the wire's `get`, `wait`, `cancel`, `list` and `answer`
read and steer it.

Decisions worth knowing:

- Lifetime: the manager runs each task's work in an asyncio task of its own,
  not in the request that created it, so a task outlives the HTTP POST (or
  the stdio request) that started it. `aclose()` (or leaving `async with`)
  cancels what still runs, marks those tasks failed, and stops the purge
  loop; the serving transport calls it on shutdown (`ServerSession.aclose`:
  the stdio server's end, the HTTP app's lifespan). Sessions that share a
  manager (an `App`'s) `hold` it, and `ServerSession.aclose` releases it:
  the last release closes it, so one session ending stops no other's tasks.
- Outcome: a result is `completed` (or `failed` when `failed_when(result)`,
  the 2025-11-25 rule for tool results with `isError: true`); an `RpcError`
  is `failed` with that error; any other exception is `failed` with -32603
  and no traceback on the wire.
- Terminal states are sticky and the store decides races: a cancel racing
  the work's completion ends in exactly one terminal state.
- Unknown, expired and another owner's ids are one error (-32602, "Task not
  found"), so ids cannot be probed; cursors of `list` are sealed (HMAC) and
  bound to their owner.
- Limits: `max_active_per_owner` tasks running at once per owner (in this
  process), `max_active_total` for all owners together, and a per-owner
  token bucket over every operation (creation, polling, listing,
  cancelling): over any, `RATE_LIMITED` with a message. Anonymous 2026
  callers (no owner) are told apart for limits by address or connection
  (`owner.limit_key`). A slot is reserved before the record is stored, so
  concurrent creations cannot overshoot a cap.
- Audit: creation and the terminal state of every task are logged at INFO
  (`mcp_specgen_runtime.protocol.tasks.manager`) with the owner key (a
  digest, never the principal's claims).
- TTL: the requested one, else `default_ttl_ms`, at least `min_ttl_ms` (a
  task is never created expired) and at most `max_ttl_ms`.
  Expired tasks vanish on access (the store's rule) and a purge loop deletes
  them every `purge_interval_s`, cancelling the work of any still running.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import msgspec

from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.stores.tasks import (
    MemoryTaskStore,
    TaskExistsError,
    TaskRecord,
    TaskStore,
)

from .ids import new_task_id
from .limits import RATE_LIMITED, RateLimiter
from .owner import limit_key
from .running import RunningTask

__all__ = [
    "RATE_LIMITED",
    "StatusListener",
    "TaskManager",
    "TaskRun",
    "task_not_found",
]

logger = logging.getLogger(__name__)

TaskRun = Callable[[RunningTask], Awaitable[dict[str, Any]]]
"""A task's work: given its handle, the request's result as builtins."""
StatusListener = Callable[[TaskRecord], Awaitable[None]]
"""Called with the record after each change of a task's status."""

CANCELLED_MESSAGE = "The task was cancelled by request."
SHUTDOWN_MESSAGE = "The server stopped before the task finished."


def task_not_found() -> RpcError:
    """The one error of an unknown, expired or foreign task id."""
    return RpcError(ErrorCode.INVALID_PARAMS, "Failed to retrieve task: Task not found")


class _Parked:
    """The questions a 2026 task waits on, and the answers so far."""

    def __init__(self, keys: list[str]) -> None:
        self.pending = dict.fromkeys(keys)
        self.answers: dict[str, Any] = {}
        self.done = anyio.Event()


class TaskManager:
    """Runs and keeps tasks; see the module docstring.

    Args:
        store: where records live (default: a `MemoryTaskStore`, closed with
            the manager; a store given is left open).
        default_ttl_ms: the TTL of a task whose requestor named none.
        max_ttl_ms: the longest TTL granted (None: unbounded).
        min_ttl_ms: the shortest TTL granted (a shorter request gets it).
        poll_interval_ms: the polling interval suggested to requestors.
        max_active_per_owner: tasks one owner may have running at once.
        max_active_total: tasks running at once in this manager, whoever
            owns them (None: no ceiling).
        rate, burst: task operations per second per owner, and the burst
            allowed (rate None: no limit).
        page_size: tasks per page of `list`.
        purge_interval_s: how often expired tasks are deleted.
        recheck_s: how often `wait` re-reads the store when no change was
            seen here (another instance may finish the task).
        cursor_key: 32 bytes signing `list` cursors (random when None; share
            one between instances).
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        default_ttl_ms: int | None = 3_600_000,
        max_ttl_ms: int | None = 86_400_000,
        min_ttl_ms: int = 1000,
        poll_interval_ms: int | None = 1000,
        max_active_per_owner: int | None = 100,
        max_active_total: int | None = 1000,
        rate: float | None = 50.0,
        burst: int = 200,
        page_size: int = 50,
        purge_interval_s: float = 60.0,
        recheck_s: float = 1.0,
        cursor_key: bytes | None = None,
    ) -> None:
        self._owns_store = store is None
        self.store: TaskStore = MemoryTaskStore() if store is None else store
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.min_ttl_ms = min_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_active_per_owner = max_active_per_owner
        self.max_active_total = max_active_total
        self.limiter = RateLimiter(rate, burst)
        self.page_size = page_size
        self.purge_interval_s = purge_interval_s
        self.recheck_s = recheck_s
        self.cursor_key = cursor_key or os.urandom(32)
        """The key signing `list` cursors (set it to share one)."""
        self.default_store = store is None
        """Whether the store is the in-memory one made here."""
        self._running: dict[str, asyncio.Task[None]] = {}
        self._active: dict[str | None, int] = {}
        self._active_total = 0
        self._holders = 0
        self._notify: dict[str, StatusListener] = {}
        self._changed: dict[str, anyio.Event] = {}
        self._parked: dict[str, _Parked] = {}
        self._listeners: list[StatusListener] = []
        self._purger: asyncio.Task[None] | None = None
        self._closing = False

    async def __aenter__(self) -> TaskManager:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def use_store(self, store: TaskStore) -> None:
        """Keep tasks in `store` from now on (set up before serving: tasks
        kept so far stay behind); the manager closes it with itself.

        Raises:
            RuntimeError: tasks are running.
        """
        if self._running:
            raise RuntimeError("the task store cannot change while tasks run")
        self.store = store
        self._owns_store = True
        self.default_store = False

    # -- the public API --

    async def start(
        self,
        owner: str | None,
        era: str,
        method: str,
        run: TaskRun,
        ttl_ms: int | None = None,
        notify: StatusListener | None = None,
        *,
        failed_when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> TaskRecord:
        """Create a task and start `run` in the background; the record, stored
        (durable) before this returns.

        `notify` is called after each status change of this task (the wire
        tells the requestor); `failed_when(result)` makes a result `failed`.

        Raises:
            RpcError: `RATE_LIMITED` (too many operations, or too many tasks
                running for `owner` or in all); -32603 once the manager is
                closed.
        """
        if self._closing:
            raise RpcError(ErrorCode.INTERNAL_ERROR, "The server is shutting down")
        key = limit_key(owner)
        self.limiter.take(key, "create")
        self._reserve(key)
        try:
            record = await self._create(owner, era, method, ttl_ms)
        except BaseException:
            self._release(key)
            raise
        logger.info(
            "task %s created: %s (%s) for %s", record.task_id, method, era, owner
        )
        if notify is not None:
            self._notify[record.task_id] = notify
        work = self._execute(record, key, run, failed_when)
        task = asyncio.get_running_loop().create_task(work)
        self._running[record.task_id] = task
        self._start_purger()
        return record

    def _reserve(self, key: str | None) -> None:
        active = self._active.get(key, 0)
        if (
            self.max_active_per_owner is not None
            and active >= self.max_active_per_owner
        ):
            raise RpcError(
                RATE_LIMITED,
                f"Too many active tasks: at most {self.max_active_per_owner} "
                "may run at once; wait for one to finish",
                {"maxActiveTasks": self.max_active_per_owner},
            )
        if (
            self.max_active_total is not None
            and self._active_total >= self.max_active_total
        ):
            raise RpcError(
                RATE_LIMITED,
                f"The server is running too many tasks (at most "
                f"{self.max_active_total} at once); retry later",
                {"maxActiveTasksTotal": self.max_active_total},
            )
        self._active[key] = active + 1
        self._active_total += 1

    def _release(self, key: str | None) -> None:
        self._active_total -= 1
        left = self._active.get(key, 1) - 1
        if left > 0:
            self._active[key] = left
        else:
            self._active.pop(key, None)

    async def _create(
        self, owner: str | None, era: str, method: str, ttl_ms: int | None
    ) -> TaskRecord:
        now = time.time()
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            era=era,
            method=method,
            created_at=now,
            last_updated_at=now,
            ttl_ms=self._ttl(ttl_ms),
            poll_interval_ms=self.poll_interval_ms,
        )
        try:
            await self.store.create(record)
        except TaskExistsError:  # 192 random bits: never, but never silently
            record = msgspec.structs.replace(record, task_id=new_task_id())
            await self.store.create(record)
        return record

    async def get(self, owner: str | None, task_id: str) -> TaskRecord:
        """The task as it is now.

        Raises:
            RpcError: -32602 (not found), or `RATE_LIMITED`.
        """
        self.limiter.take(limit_key(owner), "get")
        return await self._lookup(owner, task_id)

    async def wait(self, owner: str | None, task_id: str) -> TaskRecord:
        """The task once terminal (blocks until then).

        Raises:
            RpcError: -32602 (not found, or expired while waiting), or
                `RATE_LIMITED`.
        """
        self.limiter.take(limit_key(owner), "result")
        record = await self._lookup(owner, task_id)
        # Only a task that exists gets an event, and the last waiter drops it.
        changed: anyio.Event | None = None
        try:
            while not record.terminal:
                changed = self._changed.setdefault(task_id, anyio.Event())
                # Read again once the event is there, so no change is missed.
                record = await self._lookup(owner, task_id)
                if record.terminal:
                    break
                with anyio.move_on_after(self.recheck_s):
                    await changed.wait()
            return record
        finally:
            if (
                changed is not None
                and self._changed.get(task_id) is changed
                and changed.statistics().tasks_waiting == 0
            ):
                del self._changed[task_id]

    async def cancel(self, owner: str | None, task_id: str) -> TaskRecord:
        """Cancel an active task: `cancelled` before this returns, and its
        work is stopped (when it runs in this process).

        Raises:
            RpcError: -32602 (not found, or already terminal), or
                `RATE_LIMITED`.
        """
        self.limiter.take(limit_key(owner), "cancel")
        record = await self._lookup(owner, task_id)
        if not record.terminal:
            updated = await self._change(
                task_id, status="cancelled", status_message=CANCELLED_MESSAGE
            )
            if updated is not None:
                running = self._running.get(task_id)
                if running is not None:
                    running.cancel()
                return updated
            record = await self._lookup(owner, task_id)  # finished meanwhile
        raise RpcError(
            ErrorCode.INVALID_PARAMS,
            f"Cannot cancel task: already in terminal status '{record.status}'",
        )

    async def list(
        self, owner: str | None, cursor: str | None = None
    ) -> tuple[list[TaskRecord], str | None]:
        """One page of `owner`'s live tasks, oldest first, and the cursor of
        the next page (None on the last).

        Raises:
            RpcError: -32602 (a cursor this manager did not give `owner`), or
                `RATE_LIMITED`.
        """
        self.limiter.take(limit_key(owner), "list")
        after = None if cursor is None else self._open_cursor(owner, cursor)
        found = await self.store.list(owner, after=after, limit=self.page_size + 1)
        page = found[: self.page_size]
        if len(found) > self.page_size:
            return page, self._seal_cursor(owner, page[-1].task_id)
        return page, None

    async def answer(
        self, owner: str | None, task_id: str, responses: Mapping[str, Any]
    ) -> TaskRecord:
        """Deliver answers to the questions a task waits on, by key (keys not
        asked are ignored); once all are answered the task is `working` and
        its work resumes. The task after the change.

        Raises:
            RpcError: -32602 (not found), or `RATE_LIMITED`.
        """
        self.limiter.take(limit_key(owner), "update")
        record = await self._lookup(owner, task_id)
        parked = self._parked.get(task_id)
        if parked is None or record.terminal:
            return record
        for key, value in responses.items():
            if key in parked.pending:
                del parked.pending[key]
                parked.answers[key] = value
        if parked.pending:
            remaining = record.input_requests or {}
            changed = await self._change(
                task_id,
                input_requests={
                    k: v for k, v in remaining.items() if k in parked.pending
                },
            )
        else:
            del self._parked[task_id]
            parked.done.set()
            changed = await self._change(task_id, status="working", input_requests=None)
        return record if changed is None else changed

    def hold(self) -> None:
        """One more server session serves on this manager; its `release`
        closes the manager only once no other holds it."""
        self._holders += 1

    async def release(self) -> None:
        """A holder is done: close the manager when it was the last (or the
        manager was never held)."""
        self._holders -= 1
        if self._holders <= 0:
            await self.aclose()

    def add_listener(self, listener: StatusListener) -> Callable[[], None]:
        """Call `listener` after every task's status changes; returns what
        removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def aclose(self) -> None:
        """Stop: running work is cancelled (its tasks end `failed`), the
        purge loop ends, and a store the manager made is closed."""
        self._closing = True
        if self._purger is not None:
            self._purger.cancel()
        running = list(self._running.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        if self._owns_store:
            await self.store.aclose()

    # -- for the in-task handle and the wire layers --

    async def touch(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Change an active task (`status`, `status_message`...); listeners
        hear of a status change. None when the task is terminal or gone."""
        return await self._change(task_id, **changes)

    async def park(
        self, task_id: str, questions: Mapping[str, tuple[str, Any]]
    ) -> dict[str, Any]:
        """`RunningTask.ask`: the questions on the record until answered."""
        parked = _Parked(list(questions))
        self._parked[task_id] = parked
        requests: dict[str, dict[str, Any]] = {}
        for key, (method, params) in questions.items():
            request: dict[str, Any] = {"method": method}
            if params is not None:
                request["params"] = params
            requests[key] = request
        await self._change(task_id, status="input_required", input_requests=requests)
        await parked.done.wait()
        return parked.answers

    def ttl_of(self, requested: int | None) -> int | None:
        """The TTL granted for `requested` (see the module docstring)."""
        return self._ttl(requested)

    # -- inside --

    def _ttl(self, requested: int | None) -> int | None:
        ttl = (
            self.default_ttl_ms
            if requested is None
            else max(self.min_ttl_ms, requested)
        )
        if self.max_ttl_ms is not None and (ttl is None or ttl > self.max_ttl_ms):
            return self.max_ttl_ms
        return ttl

    async def _lookup(self, owner: str | None, task_id: str) -> TaskRecord:
        record = await self.store.get(task_id)
        if record is None or record.owner != owner:
            raise task_not_found()
        return record

    async def _change(self, task_id: str, **changes: Any) -> TaskRecord | None:
        before = None
        if "status" in changes:
            before = await self.store.get(task_id)
        changes.setdefault("last_updated_at", time.time())
        record = await self.store.update(task_id, **changes)
        if record is None:
            return None
        if before is not None and before.status != record.status:
            await self._tell(record)
        return record

    async def _tell(self, record: TaskRecord) -> None:
        changed = self._changed.pop(record.task_id, None)
        if changed is not None:
            changed.set()
        targets = list(self._listeners)
        notify = self._notify.get(record.task_id)
        if notify is not None:
            targets.append(notify)
        for target in targets:
            try:
                await target(record)
            except Exception:
                logger.warning("a task status listener failed", exc_info=True)

    async def _execute(
        self,
        record: TaskRecord,
        key: str | None,
        run: TaskRun,
        failed_when: Callable[[dict[str, Any]], bool] | None,
    ) -> None:
        task_id = record.task_id
        changes: dict[str, Any]
        try:
            result = await run(RunningTask(self, record))
        except RpcError as exc:
            changes = {
                "status": "failed",
                "status_message": exc.message,
                "error": _error_of(exc),
            }
        except asyncio.CancelledError:
            # Cancelled by `cancel` (the record says so already) or by aclose.
            changes = {
                "status": "failed",
                "status_message": SHUTDOWN_MESSAGE,
                "error": _error_of(
                    RpcError(ErrorCode.INTERNAL_ERROR, SHUTDOWN_MESSAGE)
                ),
            }
        except BaseException as exc:  # the work's failure, never the server's
            logger.warning("task %s of %s failed", task_id, record.method, exc_info=exc)
            message = f"Task failed: {type(exc).__name__}"
            changes = {
                "status": "failed",
                "status_message": message,
                "error": _error_of(RpcError(ErrorCode.INTERNAL_ERROR, message)),
            }
        else:
            failed = failed_when is not None and failed_when(result)
            changes = {"status": "failed" if failed else "completed", "result": result}
        final: TaskRecord | None = None
        try:
            with anyio.CancelScope(shield=True):
                final = await self._change(task_id, **changes)
            if final is not None:
                logger.info("task %s %s", task_id, final.status)
        finally:
            self._finish(record, key)

    def _finish(self, record: TaskRecord, key: str | None) -> None:
        task_id = record.task_id
        self._running.pop(task_id, None)
        self._notify.pop(task_id, None)
        parked = self._parked.pop(task_id, None)
        if parked is not None:
            parked.done.set()
        changed = self._changed.pop(task_id, None)
        if changed is not None:
            changed.set()
        self._release(key)

    def _start_purger(self) -> None:
        if self._purger is None or self._purger.done():
            self._purger = asyncio.get_running_loop().create_task(self._purge_loop())

    async def _purge_loop(self) -> None:
        while True:
            await asyncio.sleep(self.purge_interval_s)
            await self.purge()

    async def purge(self) -> int:
        """Delete expired tasks now, and stop the work of any still running;
        how many records were deleted."""
        deleted = await self.store.purge_expired()
        for task_id, task in list(self._running.items()):
            if await self.store.get(task_id) is None:
                task.cancel()
        return deleted

    # -- cursors --

    def _tag(self, owner: str | None, body: bytes) -> bytes:
        import hashlib
        import hmac

        signed = msgspec.json.encode([owner]) + body
        return hmac.new(self.cursor_key, signed, hashlib.sha256).digest()[:16]

    def _seal_cursor(self, owner: str | None, task_id: str) -> str:
        body = task_id.encode()
        return base64.urlsafe_b64encode(self._tag(owner, body) + body).decode("ascii")

    def _open_cursor(self, owner: str | None, cursor: str) -> str:
        import hmac

        try:
            raw = base64.b64decode(
                cursor.encode("ascii"), altchars=b"-_", validate=True
            )
            tag, body = raw[:16], raw[16:]
            if not body or not hmac.compare_digest(tag, self._tag(owner, body)):
                raise ValueError("not signed here")
            return body.decode("ascii")
        except (ValueError, UnicodeError):
            raise RpcError(
                ErrorCode.INVALID_PARAMS, "Invalid cursor: not one this server issued"
            ) from None


def _error_of(exc: RpcError) -> dict[str, Any]:
    error: dict[str, Any] = {"code": int(exc.code), "message": exc.message}
    if exc.data is not None:
        error["data"] = exc.data
    return error

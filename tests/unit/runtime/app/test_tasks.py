"""Tasks of the 2025-11-25 design, served by `App` (and `ServerSession`).

Over the memory transport with our `ClientSession` (raw requests where the
typed client has no task form), plus the stdio run path. The HTTP side is in
`test_tasks_http.py`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from mcp_specgen_runtime.app import Context
from mcp_specgen_runtime.codec.wire import decode, to_builtins
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol import client_requests
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.tasks import RATE_LIMITED
from mcp_specgen_runtime.stores.tasks import MemoryTaskStore
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.stdio import stdio_client
from mcp_specgen_types import v2025_06_18, v2025_11_25

from .task_app import make_app

LIMIT = 10.0
LEGACY = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"
PROGRAM = Path(__file__).with_name("task_app.py")

Result = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorder(v2025_11_25.ClientHandlers):
    """A client that answers elicitations with a name and records what the
    server sends; `during_elicitation` runs inside the answer."""

    def __init__(self) -> None:
        self.statuses: list[tuple[str, str]] = []
        self.elicited: list[Any] = []
        self.progress: list[Result] = []
        self.session: ClientSession | None = None
        self.seen_status: list[str] = []

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        body = to_builtins(params)
        self.elicited.append(body)
        assert self.session is not None
        task_id = body["_meta"][RELATED]["taskId"]
        task = await get(self.session, "tasks/get", {"taskId": task_id})
        self.seen_status.append(task["status"])
        return v2025_11_25.ElicitResult(action="accept", content={"name": "Ann"})

    async def sampling_create_message(
        self, params: v2025_11_25.CreateMessageRequestParams
    ) -> v2025_11_25.CreateMessageResult:
        self.elicited.append(to_builtins(params))
        return v2025_11_25.CreateMessageResult(
            role="assistant", model="m", content=v2025_11_25.TextContent(text="42")
        )

    async def notifications_tasks_status(
        self, params: v2025_11_25.TaskStatusNotificationParams
    ) -> None:
        self.statuses.append((params.task_id, params.status))

    async def notifications_progress(
        self, params: v2025_11_25.ProgressNotificationParams
    ) -> None:
        self.progress.append(to_builtins(params))


@asynccontextmanager
async def connected(
    app: Any, version: str = LEGACY, recorder: Recorder | None = None
) -> AsyncIterator[ClientSession]:
    client_end, server_end = memory_pair()
    handlers: Sequence[Any] = (recorder,) if recorder is not None else ()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, app.session().handler()),
            ClientSession(
                client_end, name="t", version="1", versions=[version], handlers=handlers
            ) as session,
        ):
            if recorder is not None:
                recorder.session = session
            yield session


async def get(session: ClientSession, method: str, params: Result) -> Result:
    result: Result = await session.connection.request(method, params, Result)
    return result


async def call_task(
    session: ClientSession, name: str, arguments: Result | None = None, **task: Any
) -> Result:
    params = {"name": name, "arguments": arguments or {}, "task": task}
    created = await get(session, "tools/call", params)
    decode(msgspec.json.encode(created), v2025_11_25.CreateTaskResult)
    task_json: Result = created["task"]
    return task_json


async def refused(session: ClientSession, method: str, params: Result) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await get(session, method, params)
    return caught.value


# --- capabilities and negotiation ----------------------------------------------


@pytest.mark.anyio
async def test_the_capability_is_advertised_with_a_task_tool_only() -> None:
    async with connected(make_app()) as session:
        assert session.server_capabilities["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
    bare = make_app()
    for name in bare.task_tools():
        bare.remove_tool(name)
    async with connected(bare) as session:
        assert "tasks" not in session.server_capabilities
        error = await refused(session, "tasks/list", {})
        assert error.code == -32601


@pytest.mark.anyio
async def test_tools_list_names_each_tools_task_support() -> None:
    async with connected(make_app()) as session:
        tools = (await get(session, "tools/list", {}))["tools"]
        support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in tools}
        assert support["slow"] == "optional"
        assert support["must"] == "required"
        assert support["plain"] is None


@pytest.mark.anyio
async def test_older_revisions_have_no_tasks() -> None:
    async with connected(make_app(), "2025-06-18") as session:
        assert "tasks" not in session.server_capabilities
        plain = await get(
            session,
            "tools/call",
            {"name": "slow", "arguments": {"text": "hi"}, "task": {"ttl": 5}},
        )
        assert plain["content"][0]["text"] == "hi"  # the task param is ignored
        decode(msgspec.json.encode(plain), v2025_06_18.CallToolResult)
        for method in ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list"):
            error = await refused(session, method, {"taskId": "x"})
            assert error.code == -32601


def test_a_bad_task_support_value_is_refused() -> None:
    app = make_app()
    with pytest.raises(ValueError, match="task_support"):
        app.tool(task_support="sometimes")


# --- required / forbidden -----------------------------------------------------


@pytest.mark.anyio
async def test_required_refuses_a_plain_call_and_forbidden_a_task() -> None:
    async with connected(make_app()) as session:
        error = await refused(session, "tools/call", {"name": "must"})
        assert error.code == -32601
        assert "Task augmentation required" in error.message
        error = await refused(session, "tools/call", {"name": "plain", "task": {}})
        assert error.code == -32601
        assert "does not support task augmentation" in error.message
        unknown = await refused(session, "tools/call", {"name": "nope", "task": {}})
        assert unknown.code == -32602
        task = await call_task(session, "must")
        assert task["status"] == "working"
        done = await get(session, "tasks/result", {"taskId": task["taskId"]})
        assert done["content"][0]["text"] == "done"
        # Optional: a plain call is a plain call.
        plain = await get(
            session, "tools/call", {"name": "slow", "arguments": {"text": "x"}}
        )
        assert plain["content"][0]["text"] == "x" and "task" not in plain


@pytest.mark.anyio
async def test_a_malformed_task_param_is_invalid_params() -> None:
    async with connected(make_app()) as session:
        error = await refused(
            session, "tools/call", {"name": "slow", "task": {"ttl": "soon"}}
        )
        assert error.code == -32602


@pytest.mark.anyio
async def test_tools_call_params_of_the_wrong_shape_are_invalid_params() -> None:
    async with connected(make_app()) as session:
        array = await refused(session, "tools/call", ["slow"])  # type: ignore[arg-type]
        number = await refused(session, "tools/call", 5)  # type: ignore[arg-type]
        name = await refused(session, "tools/call", {"name": 5, "arguments": {}})
        served = await get(session, "tools/call", {"name": "plain", "arguments": {}})
    assert array.code == name.code == -32602
    assert number.code == -32600  # not even JSON-RPC params
    assert "params must be a JSON object" in array.message
    assert "name must be a string" in name.message
    assert "content" in served  # the session keeps serving


# --- the lifecycle ------------------------------------------------------------


@pytest.mark.anyio
async def test_create_poll_and_fetch_the_result() -> None:
    recorder = Recorder()
    app = make_app(task_options={"poll_interval_ms": 250, "default_ttl_ms": 30_000})
    async with connected(app, recorder=recorder) as session:
        task = await call_task(
            session, "slow", {"text": "hi", "seconds": 0.2}, ttl=60_000
        )
        task_id = task["taskId"]
        assert task["status"] == "working"
        assert task["ttl"] == 60_000 and task["pollInterval"] == 250
        assert task["createdAt"].endswith("Z")
        polled = await get(session, "tasks/get", {"taskId": task_id})
        decode(msgspec.json.encode(polled), v2025_11_25.GetTaskResult)
        assert polled["status"] == "working"
        result = await get(session, "tasks/result", {"taskId": task_id})
        decoded = decode(msgspec.json.encode(result), v2025_11_25.CallToolResult)
        assert decoded.content[0].text == "hi"  # type: ignore[union-attr]
        assert result["_meta"] == {RELATED: {"taskId": task_id}}
        final = await get(session, "tasks/get", {"taskId": task_id})
        assert final["status"] == "completed"
        assert RELATED not in final.get("_meta", {})
        await anyio.wait_all_tasks_blocked()
        assert recorder.statuses == [(task_id, "completed")]
        # The result stays for its TTL: asked again, the same answer.
        again = await get(session, "tasks/result", {"taskId": task_id})
        assert again == result


@pytest.mark.anyio
async def test_the_default_ttl_applies_and_is_capped() -> None:
    app = make_app(task_options={"default_ttl_ms": 5_000, "max_ttl_ms": 10_000})
    async with connected(app) as session:
        assert (await call_task(session, "slow", {"text": "a"}))["ttl"] == 5_000
        assert (await call_task(session, "slow", {"text": "a"}, ttl=10**9))[
            "ttl"
        ] == 10_000


@pytest.mark.anyio
async def test_a_tool_error_fails_the_task_and_result_returns_it() -> None:
    async with connected(make_app()) as session:
        task = await call_task(session, "fail")
        result = await get(session, "tasks/result", {"taskId": task["taskId"]})
        assert result["isError"] is True
        assert "no luck" in result["content"][0]["text"]
        assert result["_meta"][RELATED]["taskId"] == task["taskId"]
        final = await get(session, "tasks/get", {"taskId": task["taskId"]})
        assert final["status"] == "failed"


@pytest.mark.anyio
async def test_a_protocol_error_fails_the_task_and_result_is_that_error() -> None:
    app = make_app()

    @app.tool(task_support="optional")
    async def strict() -> str:
        raise RpcError(-32602, "strict refuses", {"why": "always"})

    async with connected(app) as session:
        task = await call_task(session, "strict")
        error = await refused(session, "tasks/result", {"taskId": task["taskId"]})
        assert (error.code, error.message, error.data) == (
            -32602,
            "strict refuses",
            {"why": "always"},
        )
        final = await get(session, "tasks/get", {"taskId": task["taskId"]})
        assert final["status"] == "failed"
        assert final["statusMessage"] == "strict refuses"


@pytest.mark.anyio
async def test_cancel_a_working_task() -> None:
    recorder = Recorder()
    async with connected(make_app(), recorder=recorder) as session:
        task = await call_task(session, "slow", {"text": "x", "seconds": 60})
        task_id = task["taskId"]
        cancelled = await get(session, "tasks/cancel", {"taskId": task_id})
        decode(msgspec.json.encode(cancelled), v2025_11_25.CancelTaskResult)
        assert cancelled["status"] == "cancelled"
        assert cancelled["statusMessage"] == "The task was cancelled by request."
        again = await refused(session, "tasks/cancel", {"taskId": task_id})
        assert again.code == -32602
        assert (
            again.message
            == "Cannot cancel task: already in terminal status 'cancelled'"
        )
        error = await refused(session, "tasks/result", {"taskId": task_id})
        assert error.code == -32800
        await anyio.wait_all_tasks_blocked()
        assert (task_id, "cancelled") in recorder.statuses
        assert (await get(session, "tasks/get", {"taskId": task_id}))[
            "status"
        ] == "cancelled"


@pytest.mark.anyio
async def test_cancel_a_completed_task_is_invalid_params() -> None:
    async with connected(make_app()) as session:
        task = await call_task(session, "slow", {"text": "x"})
        await get(session, "tasks/result", {"taskId": task["taskId"]})
        error = await refused(session, "tasks/cancel", {"taskId": task["taskId"]})
        assert (
            error.message
            == "Cannot cancel task: already in terminal status 'completed'"
        )


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["tasks/get", "tasks/result", "tasks/cancel"])
async def test_unknown_ids_are_invalid_params(method: str) -> None:
    async with connected(make_app()) as session:
        error = await refused(session, method, {"taskId": "no-such-task"})
        assert (error.code, error.message) == (
            -32602,
            "Failed to retrieve task: Task not found",
        )
        missing = await refused(session, method, {})
        assert missing.code == -32602


@pytest.mark.anyio
async def test_an_expired_task_is_not_found() -> None:
    offset = [0.0]
    store = MemoryTaskStore(clock=lambda: time.time() + offset[0])
    async with connected(make_app(task_store=store)) as session:
        task = await call_task(session, "slow", {"text": "x"}, ttl=1_000)
        await get(session, "tasks/result", {"taskId": task["taskId"]})
        offset[0] = 2.0
        error = await refused(session, "tasks/get", {"taskId": task["taskId"]})
        assert error.code == -32602
        assert (await get(session, "tasks/list", {}))["tasks"] == []


# --- owners, listing, limits -------------------------------------------------------


@pytest.mark.anyio
async def test_list_pages_and_shows_only_this_sessions_tasks() -> None:
    app = make_app(task_options={"page_size": 2})
    async with connected(app) as mine, connected(app) as theirs:
        ids = [
            (await call_task(mine, "slow", {"text": str(i)}))["taskId"]
            for i in range(5)
        ]
        other = (await call_task(theirs, "slow", {"text": "theirs"}))["taskId"]
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await get(
                mine, "tasks/list", {} if cursor is None else {"cursor": cursor}
            )
            decode(msgspec.json.encode(page), v2025_11_25.ListTasksResult)
            assert len(page["tasks"]) <= 2
            seen += [t["taskId"] for t in page["tasks"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert seen == ids
        assert [
            t["taskId"] for t in (await get(theirs, "tasks/list", {}))["tasks"]
        ] == [other]
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            error = await refused(theirs, method, {"taskId": ids[0]})
            assert error.message == "Failed to retrieve task: Task not found"
        bad = await refused(mine, "tasks/list", {"cursor": "forged"})
        assert bad.code == -32602


@pytest.mark.anyio
async def test_task_operations_are_rate_limited() -> None:
    app = make_app(task_options={"rate": 0.001, "burst": 3})
    async with connected(app) as session:
        task = await call_task(session, "slow", {"text": "x"})
        await get(session, "tasks/get", {"taskId": task["taskId"]})
        await get(session, "tasks/list", {})
        error = await refused(session, "tasks/get", {"taskId": task["taskId"]})
        assert error.code == RATE_LIMITED
        assert "Too many task operations" in error.message
        # The session keeps serving everything else.
        plain = await get(session, "tools/call", {"name": "plain", "arguments": {}})
        assert plain["content"][0]["text"] == "plain"


@pytest.mark.anyio
async def test_active_tasks_are_capped_per_owner() -> None:
    app = make_app(task_options={"max_active_per_owner": 1})
    async with connected(app) as session, connected(app) as other:
        await call_task(session, "slow", {"text": "x", "seconds": 60})
        error = await refused(
            session,
            "tools/call",
            {"name": "slow", "arguments": {"text": "y"}, "task": {}},
        )
        assert error.code == RATE_LIMITED
        await call_task(other, "slow", {"text": "z"})


# --- input and progress inside a task ------------------------------------------------


@pytest.mark.anyio
async def test_elicitation_inside_a_task_is_input_required() -> None:
    recorder = Recorder()
    async with connected(make_app(), recorder=recorder) as session:
        task = await call_task(session, "ask")
        task_id = task["taskId"]
        result = await get(session, "tasks/result", {"taskId": task_id})
        assert result["content"][0]["text"] == "hello Ann"
        assert recorder.elicited[0]["_meta"] == {RELATED: {"taskId": task_id}}
        assert recorder.elicited[0]["message"] == "Your name?"
        assert recorder.seen_status == ["input_required"]
        await anyio.wait_all_tasks_blocked()
        assert [s for _, s in recorder.statuses] == [
            "input_required",
            "working",
            "completed",
        ]


@pytest.mark.anyio
async def test_sampling_inside_a_task_carries_the_related_task() -> None:
    app = make_app()

    @app.tool(task_support="required")
    async def think(ctx: Context) -> str:
        answer = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "?"}}], max_tokens=5
        )
        return str(answer["content"]["text"])

    recorder = Recorder()
    async with connected(app, recorder=recorder) as session:
        task = await call_task(session, "think")
        result = await get(session, "tasks/result", {"taskId": task["taskId"]})
        assert result["content"][0]["text"] == "42"
        assert recorder.elicited[0]["_meta"] == {RELATED: {"taskId": task["taskId"]}}
        assert recorder.elicited[0]["maxTokens"] == 5


@pytest.mark.anyio
async def test_progress_of_a_task_carries_the_related_task() -> None:
    recorder = Recorder()
    async with connected(make_app(), recorder=recorder) as session:
        params = {
            "name": "progress",
            "arguments": {},
            "task": {},
            "_meta": {"progressToken": "p1"},
        }
        task = (await get(session, "tools/call", params))["task"]
        await get(session, "tasks/result", {"taskId": task["taskId"]})
        await anyio.wait_all_tasks_blocked()
        assert [p["progress"] for p in recorder.progress] == [1, 2]
        for reported in recorder.progress:
            assert reported["progressToken"] == "p1"
            assert reported["_meta"] == {RELATED: {"taskId": task["taskId"]}}


@pytest.mark.anyio
async def test_a_task_outlives_the_connection_that_started_it() -> None:
    app = make_app()
    async with connected(app) as session:
        task = await call_task(session, "slow", {"text": "late", "seconds": 0.2})
    record = await app.tasks.wait(_owner_of(app, task["taskId"]), task["taskId"])
    assert record.status == "completed"


@pytest.mark.anyio
async def test_closing_one_session_leaves_the_apps_tasks_to_the_others() -> None:
    app = make_app()
    first, second = app.session(), app.session()
    await first.aclose()
    await first.aclose()  # a second close releases nothing more
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, second.handler()),
            ClientSession(
                client_end, name="t", version="1", versions=[LEGACY]
            ) as session,
        ):
            task = await call_task(session, "slow", {"text": "still"})
            done = await get(session, "tasks/result", {"taskId": task["taskId"]})
            assert done["content"][0]["text"] == "still"
        await second.aclose()  # the last one: the manager stops
    with pytest.raises(RpcError) as caught:
        await app.tasks.start(None, LEGACY, "tools/call", _never)
    assert "shutting down" in caught.value.message


async def _never(_: Any) -> Result:
    await anyio.sleep_forever()
    raise AssertionError


def _owner_of(app: Any, task_id: str) -> str | None:
    record = app.tasks.store._records[task_id]
    owner: str | None = record.owner
    return owner


# --- stdio --------------------------------------------------------------------


@pytest.mark.anyio
async def test_over_stdio_a_task_runs_and_asks_the_client() -> None:
    recorder = Recorder()
    with anyio.fail_after(LIMIT):
        async with (
            stdio_client([sys.executable, str(PROGRAM)], stderr="capture") as transport,
            ClientSession(
                transport, name="t", version="1", versions=[LEGACY], handlers=[recorder]
            ) as session,
        ):
            recorder.session = session
            task = await call_task(session, "ask")
            result = await get(session, "tasks/result", {"taskId": task["taskId"]})
            assert result["content"][0]["text"] == "hello Ann"
            assert recorder.seen_status == ["input_required"]
            listed = await get(session, "tasks/list", {})
            assert [t["status"] for t in listed["tasks"]] == ["completed"]
    assert "Traceback" not in transport.stderr_text


class Silent(Recorder):
    """A client that never answers an elicitation."""

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


@pytest.mark.anyio
async def test_a_question_the_client_never_answers_fails_the_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_requests, "TASK_QUESTION_TIMEOUT_S", 0.05)
    async with connected(make_app(), recorder=Silent()) as session:
        task = await call_task(session, "ask")
        error = await refused(session, "tasks/result", {"taskId": task["taskId"]})
        final = await get(session, "tasks/get", {"taskId": task["taskId"]})
    assert (
        error.message == "elicitation/create: the client did not answer within 0.05 s"
    )
    assert final["status"] == "failed"

"""The 2026 tasks extension wire (SEP-2663) served from one `App`: task
creation, `tasks/get`, `tasks/update`, `tasks/cancel`, their errors, input
through `tasks/update`, cancellation races, explicit task start after MRTR
rounds, and status notifications on `subscriptions/listen`. Both ends are
`Connection`s over `memory_pair`; tools wait on events the tests set, never on
time.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.app.context import elicit_params
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.extensions import Extension
from mcp_specgen_runtime.protocol.tasks import RATE_LIMITED
from mcp_specgen_runtime.protocol.tasks.limits import RateLimiter
from mcp_specgen_runtime.protocol.tasks.wire2026 import TASKS, detailed
from mcp_specgen_runtime.stores.tasks import TaskRecord
from mcp_specgen_runtime.transports import memory_pair

LIMIT = 10.0
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def meta(*, tasks: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"elicitation": {}}
    if tasks:
        capabilities["extensions"] = {TASKS: {}}
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


class Fixture:
    """An app with task tools; `release` lets `waiting` finish."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.app = app = App("tasks")

        @app.tool()
        def greet(name: str) -> str:
            return f"Hello, {name}!"

        @app.tool(task_support="optional")
        async def waiting() -> str:
            await self.release.wait()
            return "released"

        @app.tool(task_support="required")
        async def broken() -> str:
            raise RuntimeError("boom")

        @app.tool(task_support="optional")
        async def crashing() -> str:
            raise RpcError(ErrorCode.INTERNAL_ERROR, "crashed", {"why": "test"})

        @app.tool(task_support="optional")
        async def two_questions(ctx: Context) -> str:
            answers = await ctx.ask_many(
                {
                    "a": ("elicitation/create", elicit_params("A?", NAME)),
                    "b": ("elicitation/create", elicit_params("B?", NAME)),
                }
            )
            names = [a["content"]["name"] for a in answers.values()]
            return " and ".join(names)

        @app.tool(task_support="required", task_start="explicit")
        async def explicit(ctx: Context) -> str:
            answer = await ctx.elicit("Name?", NAME, key="user_name")
            await ctx.start_task()
            await self.release.wait()
            return f"Hello, {answer['content']['name']}!"


@asynccontextmanager
async def serving(fixture: Fixture) -> AsyncGenerator[Connection]:
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, fixture.app.session().handler()),
            Connection(client_end) as client,
        ):
            yield client


async def call(
    client: Connection, name: str, *, tasks: bool = True, **extra: Any
) -> dict[str, Any]:
    params = {"name": name, "arguments": {}, "_meta": meta(tasks=tasks), **extra}
    found: dict[str, Any] = await client.request("tools/call", params, Any)
    return found


async def ask(
    client: Connection, method: str, *, tasks: bool = True, **params: Any
) -> dict[str, Any]:
    found: dict[str, Any] = await client.request(
        method, {**params, "_meta": meta(tasks=tasks)}, Any
    )
    return found


async def until(client: Connection, task_id: str, *statuses: str) -> dict[str, Any]:
    """Poll `tasks/get` until the task reaches one of `statuses`."""
    while True:
        task = await ask(client, "tasks/get", taskId=task_id)
        if task["status"] in statuses:
            return task
        await asyncio.sleep(0)


async def rpc_error(awaitable: Any) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await awaitable
    return caught.value


@pytest.mark.anyio
async def test_a_task_tool_answers_a_flat_task_that_tasks_get_finds_at_once() -> None:
    fixture = Fixture()
    async with serving(fixture) as client:
        created = await call(client, "waiting")
        first = await ask(client, "tasks/get", taskId=created["taskId"])
        fixture.release.set()
        done = await until(client, created["taskId"], "completed")
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert {"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    assert not {"task", "result", "error", "inputRequests", "requestState"} & set(
        created
    )
    assert isinstance(created["ttlMs"], int)
    assert (first["status"], first["resultType"]) == ("working", "complete")
    assert "result" not in first
    assert done["result"]["content"] == [{"type": "text", "text": "released"}]
    assert "requestState" not in done


@pytest.mark.anyio
async def test_a_tool_error_completes_and_a_protocol_error_fails() -> None:
    async with serving(Fixture()) as client:
        broken = await call(client, "broken")
        crashing = await call(client, "crashing")
        completed = await until(client, broken["taskId"], "completed", "failed")
        failed = await until(client, crashing["taskId"], "completed", "failed")
    assert completed["status"] == "completed"
    assert completed["result"]["isError"] is True
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": -32603,
        "message": "crashed",
        "data": {"why": "test"},
    }
    assert "result" not in failed


@pytest.mark.anyio
async def test_without_the_extension_optional_is_plain_and_required_refused() -> None:
    fixture = Fixture()
    fixture.release.set()
    async with serving(fixture) as client:
        plain = await call(client, "waiting", tasks=False)
        refused = await rpc_error(call(client, "broken", tasks=False))
        gated = await rpc_error(ask(client, "tasks/get", tasks=False, taskId="x"))
    assert plain["content"] == [{"type": "text", "text": "released"}]
    assert plain["resultType"] == "complete"
    assert refused.code == gated.code == -32021
    assert refused.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


@pytest.mark.anyio
async def test_a_legacy_task_param_does_not_make_a_plain_tool_a_task() -> None:
    async with serving(Fixture()) as client:
        found = await call(client, "greet", arguments={"name": "x"}, task={"ttl": 1000})
    assert found["resultType"] == "complete"
    assert "taskId" not in found


@pytest.mark.anyio
async def test_tasks_list_and_tasks_result_do_not_exist() -> None:
    async with serving(Fixture()) as client:
        listed = await rpc_error(ask(client, "tasks/list"))
        result = await rpc_error(ask(client, "tasks/result", taskId="x"))
    assert listed.code == result.code == -32601


@pytest.mark.anyio
async def test_unknown_task_ids_are_invalid_params() -> None:
    async with serving(Fixture()) as client:
        errors = [
            await rpc_error(ask(client, "tasks/get", taskId="nope")),
            await rpc_error(ask(client, "tasks/cancel", taskId="nope")),
            await rpc_error(
                ask(client, "tasks/update", taskId="nope", inputResponses={})
            ),
        ]
    assert {e.code for e in errors} == {-32602}
    assert all("Task not found" in e.message for e in errors)


@pytest.mark.anyio
async def test_cancel_acks_settles_cancelled_and_is_idempotent() -> None:
    async with serving(Fixture()) as client:
        created = await call(client, "waiting")
        ack = await ask(client, "tasks/cancel", taskId=created["taskId"])
        task = await ask(client, "tasks/get", taskId=created["taskId"])
        again = await ask(client, "tasks/cancel", taskId=created["taskId"])
    assert ack == again == {"resultType": "complete", "_meta": ack["_meta"]}
    assert task["status"] == "cancelled"


@pytest.mark.anyio
async def test_a_cancel_after_completion_leaves_the_task_completed() -> None:
    fixture = Fixture()
    async with serving(fixture) as client:
        created = await call(client, "waiting")
        fixture.release.set()
        await until(client, created["taskId"], "completed")
        await ask(client, "tasks/cancel", taskId=created["taskId"])
        task = await ask(client, "tasks/get", taskId=created["taskId"])
    assert task["status"] == "completed"


@pytest.mark.anyio
async def test_a_completion_racing_a_cancel_cannot_undo_it() -> None:
    fixture = Fixture()
    async with serving(fixture) as client:
        created = await call(client, "waiting")
        fixture.release.set()  # the work may finish while the cancel is served
        await ask(client, "tasks/cancel", taskId=created["taskId"])
        settled = await until(client, created["taskId"], "cancelled", "completed")
        await asyncio.sleep(0)
        later = await ask(client, "tasks/get", taskId=created["taskId"])
    assert later["status"] == settled["status"]


@pytest.mark.anyio
async def test_input_is_parked_and_answered_through_tasks_update() -> None:
    async with serving(Fixture()) as client:
        created = await call(client, "two_questions")
        task_id = created["taskId"]
        parked = await until(client, task_id, "input_required")
        while len(parked["inputRequests"]) < 2:
            parked = await ask(client, "tasks/get", taskId=task_id)
        first, second = parked["inputRequests"]
        answer = {"action": "accept", "content": {"name": "Ann"}}
        ack = await ask(
            client,
            "tasks/update",
            taskId=task_id,
            inputResponses={first: answer, "never-asked": {"x": 1}},
        )
        partial = await ask(client, "tasks/get", taskId=task_id)
        answer = {"action": "accept", "content": {"name": "Bob"}}
        await ask(
            client, "tasks/update", taskId=task_id, inputResponses={second: answer}
        )
        done = await until(client, task_id, "completed")
    assert parked["inputRequests"][first]["method"] == "elicitation/create"
    assert set(ack) == {"resultType", "_meta"}
    assert partial["status"] == "input_required"
    assert list(partial["inputRequests"]) == [second]
    assert done["result"]["content"][0]["text"] == "Ann and Bob"
    assert "inputRequests" not in done


@pytest.mark.anyio
async def test_explicit_start_answers_mrtr_rounds_then_a_task() -> None:
    fixture = Fixture()
    async with serving(fixture) as client:
        first = await call(client, "explicit")
        answers = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
        second = await call(
            client,
            "explicit",
            inputResponses=answers,
            requestState=first["requestState"],
        )
        fixture.release.set()
        done = await until(client, second["taskId"], "completed")
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    assert second["resultType"] == "task"
    assert not {"requestState", "inputRequests"} & set(second)
    assert done["result"]["content"][0]["text"] == "Hello, Alice!"


def test_the_related_task_meta_is_not_inlined() -> None:
    related = {"io.modelcontextprotocol/related-task": {"taskId": "x"}, "k": 1}
    record = TaskRecord(
        task_id="t",
        owner=None,
        era="2026-07-28",
        method="tools/call",
        status="completed",
        created_at=0.0,
        last_updated_at=1.5,
        ttl_ms=None,
        result={"content": [], "_meta": related},
    )
    task = detailed(record)
    assert task["result"]["_meta"] == {"k": 1}
    assert (task["createdAt"], task["lastUpdatedAt"]) == (
        "1970-01-01T00:00:00.000Z",
        "1970-01-01T00:00:01.500Z",
    )
    assert task["ttlMs"] is None


@pytest.mark.anyio
async def test_the_server_advertises_the_extension_only_with_task_tools() -> None:
    plain = App("plain")

    @plain.tool()
    def nothing() -> str:
        return ""

    cases: list[tuple[App, dict[str, Any] | None]] = [
        (Fixture().app, {TASKS: {}}),
        (plain, None),
    ]
    for app, expected in cases:
        client_end, server_end = memory_pair()
        with anyio.fail_after(LIMIT):
            async with (
                Connection(server_end, app.session().handler()),
                Connection(client_end) as client,
            ):
                found = await ask(client, "server/discover")
        assert found["capabilities"].get("extensions") == expected


@pytest.mark.anyio
async def test_a_subscription_hears_the_status_of_the_tasks_it_names() -> None:
    fixture = Fixture()
    client_end, server_end = memory_pair()
    received: list[dict[str, Any]] = []
    arrived = anyio.Event()

    async def on_message(method: str, params: bytes | None) -> bytes | None:
        nonlocal arrived
        received.append({"method": method, "params": json.loads(params or b"{}")})
        arrived.set()
        arrived = anyio.Event()
        return None

    async def until(count: int) -> None:
        while len(received) < count:
            await arrived.wait()

    task_id = ""
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, fixture.app.session().handler()),
            Connection(client_end, on_message) as client,
            anyio.create_task_group() as group,
        ):
            created = await call(client, "waiting")
            task_id = created["taskId"]
            listen = {
                "_meta": meta(),
                "notifications": {"taskIds": [task_id, "not-a-task"]},
            }
            group.start_soon(
                client.request, "subscriptions/listen", listen, dict[str, Any]
            )
            await until(2)
            fixture.release.set()
            await until(3)
            group.cancel_scope.cancel()
    acknowledged, now, done = received
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["notifications"] == {"taskIds": [task_id]}
    subscription = acknowledged["params"]["_meta"]
    assert [now["method"], done["method"]] == ["notifications/tasks"] * 2
    assert (now["params"]["taskId"], now["params"]["status"]) == (task_id, "working")
    assert done["params"]["status"] == "completed"
    assert done["params"]["result"]["content"][0]["text"] == "released"
    assert done["params"]["_meta"] == subscription


@pytest.mark.anyio
async def test_asking_for_task_status_needs_the_extension() -> None:
    async with serving(Fixture()) as client:
        listen = {"_meta": meta(tasks=False), "notifications": {"taskIds": ["x"]}}
        refused = await rpc_error(
            client.request("subscriptions/listen", listen, dict[str, Any])
        )
    assert refused.code == -32021
    assert refused.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


@pytest.mark.anyio
async def test_an_app_offers_another_extension_beside_tasks() -> None:
    fixture = Fixture()
    fixture.app.add_extension(Extension("io.modelcontextprotocol/ui", settings={}))
    async with serving(fixture) as client:
        found = await ask(client, "server/discover")
    assert found["capabilities"]["extensions"] == {
        "io.modelcontextprotocol/ui": {},
        TASKS: {},
    }


@pytest.mark.anyio
async def test_anonymous_callers_do_not_share_their_limits() -> None:
    fixture = Fixture()
    fixture.app.tasks.max_active_per_owner = 2
    fixture.app.tasks.limiter = RateLimiter(0.001, 6)
    session = fixture.app.session()
    a_end, a_server = memory_pair()
    b_end, b_server = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(a_server, session.handler()),
            Connection(b_server, session.handler()),
            Connection(a_end) as alice,
            Connection(b_end) as bob,
        ):
            mine = [await call(alice, "waiting") for _ in range(2)]
            full = await rpc_error(call(alice, "waiting"))
            assert full.code == RATE_LIMITED
            theirs = await call(bob, "waiting")  # a cap of bob's own
            while True:  # alice spends her whole bucket
                error = await rpc_error(ask(alice, "tasks/get", taskId="nope"))
                if error.code == RATE_LIMITED:
                    break
            # Bob's bucket is untouched, and an anonymous task is still
            # anyone's who holds its id.
            seen = await ask(bob, "tasks/get", taskId=mine[0]["taskId"])
            assert seen["status"] == "working"
            assert theirs["status"] == "working"
            fixture.release.set()


@pytest.mark.anyio
async def test_a_listen_over_the_rate_limit_is_refused_not_emptied() -> None:
    fixture = Fixture()
    async with serving(fixture) as client:
        created = await call(client, "waiting")
        fixture.app.tasks.limiter = RateLimiter(0.001, 2)
        ids = ["not-a-task", "nor-this", created["taskId"]]
        listen = {"_meta": meta(), "notifications": {"taskIds": ids}}
        refused = await rpc_error(
            client.request("subscriptions/listen", listen, dict[str, Any])
        )
        fixture.release.set()
    assert refused.code == RATE_LIMITED
    assert "Too many task operations" in refused.message


@pytest.mark.anyio
async def test_malformed_input_responses_are_invalid_params_naming_them() -> None:
    async with serving(Fixture()) as client:
        created = await call(client, "two_questions")
        task_id = created["taskId"]
        parked = await until(client, task_id, "input_required")
        key = next(iter(parked["inputRequests"]))
        not_an_object = await rpc_error(
            ask(client, "tasks/update", taskId=task_id, inputResponses=[1])
        )
        wrong_shape = await rpc_error(
            ask(
                client,
                "tasks/update",
                taskId=task_id,
                inputResponses={key: {"action": 42}},
            )
        )
        after = await ask(client, "tasks/get", taskId=task_id)
    assert not_an_object.code == wrong_shape.code == -32602
    assert "tasks/update" in not_an_object.message
    assert "inputResponses" in not_an_object.message
    assert f"inputResponses[{key!r}] does not fit elicitation/create" in (
        wrong_shape.message
    )
    assert after["status"] == "input_required"  # the bad answer was not taken
    assert key in after["inputRequests"]


@pytest.mark.anyio
async def test_tools_call_params_of_the_wrong_shape_are_invalid_params() -> None:
    async with serving(Fixture()) as client:
        await call(client, "waiting")  # the connection is a 2026 one
        array = await rpc_error(client.request("tools/call", ["waiting"], Any))
        name = await rpc_error(
            client.request(
                "tools/call", {"name": 5, "arguments": {}, "_meta": meta()}, Any
            )
        )
        created = await call(client, "waiting")  # still serving
    assert array.code == name.code == -32602
    assert "params must be a JSON object" in array.message
    assert "name must be a string" in name.message
    assert created["resultType"] == "task"

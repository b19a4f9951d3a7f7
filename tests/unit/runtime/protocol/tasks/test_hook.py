"""The in-task hook of `request_client`: inside a task's work, in both eras."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_specgen_runtime.codec.wire import to_builtins
from mcp_specgen_runtime.protocol.client_requests import (
    ClientExchange,
    InputRequired,
    request_client,
    request_client_many,
    reset_exchange,
    set_exchange,
)
from mcp_specgen_runtime.protocol.tasks import RunningTask, TaskManager
from mcp_specgen_types import v2025_11_25, v2026_07_28

LIMIT = 10.0
RELATED = "io.modelcontextprotocol/related-task"
QUESTION = {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Peer:
    """A legacy connection that answers every elicitation with a name,
    noting the task's status while the request waits."""

    def __init__(self, tasks: TaskManager) -> None:
        self.tasks = tasks
        self.sent: list[tuple[str, Any]] = []
        self.status_while_asked: list[str] = []

    async def notify(self, method: str, params: Any) -> None: ...

    async def request(
        self, method: str, params: Any, result_type: Any, **_: Any
    ) -> Any:
        self.sent.append((method, params))
        task_id = params["_meta"][RELATED]["taskId"]
        record = await self.tasks.store.get(task_id)
        assert record is not None
        self.status_while_asked.append(record.status)
        return v2025_11_25.ElicitResult(action="accept", content={"name": "Ann"})


@pytest.mark.anyio
async def test_legacy_requests_carry_the_task_and_mark_it_input_required() -> None:
    with anyio.fail_after(LIMIT):
        async with TaskManager() as tasks:
            peer = Peer(tasks)

            async def run(handle: RunningTask) -> dict[str, Any]:
                exchange = ClientExchange(
                    v2025_11_25, {"elicitation": {}}, peer, task=handle
                )
                token = set_exchange(exchange)
                try:
                    answers = await request_client_many(
                        {
                            "a": (
                                "elicitation/create",
                                QUESTION,
                                v2025_11_25.ElicitResult,
                            ),
                            "b": (
                                "elicitation/create",
                                QUESTION,
                                v2025_11_25.ElicitResult,
                            ),
                        }
                    )
                finally:
                    reset_exchange(token)
                return {k: to_builtins(v) for k, v in answers.items()}

            record = await tasks.start("o", "2025-11-25", "tools/call", run)
            final = await tasks.wait("o", record.task_id)
    assert final.status == "completed"
    assert final.result == {
        "a": {"action": "accept", "content": {"name": "Ann"}},
        "b": {"action": "accept", "content": {"name": "Ann"}},
    }
    assert peer.status_while_asked == ["input_required", "input_required"]
    for method, params in peer.sent:
        assert method == "elicitation/create"
        assert params["_meta"] == {RELATED: {"taskId": record.task_id}}
        assert params["message"] == "Name?"


@pytest.mark.anyio
async def test_modern_questions_are_parked_until_answered() -> None:
    with anyio.fail_after(LIMIT):
        async with TaskManager() as tasks:

            async def run(handle: RunningTask) -> dict[str, Any]:
                exchange = ClientExchange(v2026_07_28, {"elicitation": {}}, task=handle)
                token = set_exchange(exchange)
                try:
                    first = await request_client(
                        "elicitation/create",
                        QUESTION,
                        v2026_07_28.ElicitResult,
                        key="name",
                    )
                    second = await request_client(
                        "elicitation/create", QUESTION, v2026_07_28.ElicitResult
                    )
                finally:
                    reset_exchange(token)
                return {"first": to_builtins(first), "second": to_builtins(second)}

            record = await tasks.start("o", "2026-07-28", "tools/call", run)
            answers = {
                "name": {"action": "accept", "content": {"x": 1}},
                "r1": {"action": "decline"},
            }
            for key in ("name", "r1"):
                while True:
                    waiting = await tasks.store.get(record.task_id)
                    assert waiting is not None
                    if waiting.input_requests and key in waiting.input_requests:
                        break
                    await anyio.lowlevel.checkpoint()
                assert waiting.status == "input_required"
                asked = waiting.input_requests[key]
                assert asked["method"] == "elicitation/create"
                assert asked["params"]["message"] == "Name?"
                await tasks.answer("o", record.task_id, {key: answers[key]})
            final = await tasks.wait("o", record.task_id)
    assert final.status == "completed"
    assert final.result == {"first": answers["name"], "second": answers["r1"]}


@pytest.mark.anyio
async def test_outside_a_task_a_modern_question_is_still_input_required() -> None:
    exchange = ClientExchange(v2026_07_28, {"elicitation": {}})
    token = set_exchange(exchange)
    try:
        with pytest.raises(InputRequired):
            await request_client(
                "elicitation/create", QUESTION, v2026_07_28.ElicitResult
            )
    finally:
        reset_exchange(token)

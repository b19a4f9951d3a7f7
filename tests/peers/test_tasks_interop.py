"""Our `Client`'s tasks (2025-11-25) against the official TypeScript SDK 1.32.2
over Streamable HTTP: `programs/ts_sdk_task_server.mjs`, a server written
with the SDK's experimental tasks API (`registerToolTask`, its
`InMemoryTaskStore` and `InMemoryTaskMessageQueue`), started once per module.

Shown: a task-augmented call, polling, status callbacks (the SDK sends
`notifications/tasks/status` on its GET stream), the result through the
blocking `tasks/result`, an elicitation and a sampling the task asks for
(queued by the SDK and delivered on the `tasks/result` stream) answered by
our callbacks, a tool error, cancel, list, and the refusals.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks import peers
from mcp_specgen_runtime import Client
from mcp_specgen_runtime.client.tasks import (
    TaskCancelledError,
    TaskState,
    TaskSupportError,
)
from mcp_specgen_runtime.errors import RequestTimeoutError, RpcError
from mcp_specgen_types import latest

from .test_http_client_interop import running

PROGRAM = Path(__file__).parent / "programs" / "ts_sdk_task_server.mjs"
LIMIT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    peers.ensure_node_peers(print)
    with running([str(peers.node_executable()), str(PROGRAM), "0"]) as found:
        yield found


async def sampling(
    params: latest.CreateMessageRequestParams,
) -> latest.CreateMessageResult:
    return latest.CreateMessageResult(
        role="assistant", content=latest.TextContent(text="an old pond"), model="m"
    )


async def elicitation(params: latest.ElicitRequestParams) -> latest.ElicitResult:
    assert params.message == "Your name?"  # type: ignore[union-attr]
    return latest.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def connected(url: str) -> AsyncGenerator[Client]:
    with anyio.fail_after(LIMIT):
        async with Client(
            url, cache=None, sampling=sampling, elicitation=elicitation
        ) as client:
            yield client


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


@pytest.mark.anyio
async def test_a_task_is_polled_and_gives_its_result(url: str) -> None:
    seen: list[str] = []

    async def on_status(state: TaskState) -> None:
        seen.append(state.status)

    async with connected(url) as client:
        assert client.protocol_version == "2025-11-25"
        handle = await client.call_tool_as_task(
            "delay", {"ms": 300}, ttl_ms=60_000, on_status=on_status
        )
        assert handle.state.ttl_ms == 60_000
        assert handle.state.poll_interval_ms == 50
        assert (await handle.status()).status == "working"
        result = await handle.result()
        assert text_of(result) == "slept 300"
        assert handle.state.status == "completed"
        assert seen[-1] == "completed"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [("ask_name", {}, "hello Ada"), ("haiku", {"topic": "frogs"}, "an old pond")],
)
async def test_input_asked_by_the_task_is_answered_by_our_callbacks(
    url: str, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    seen: list[str] = []

    async def on_status(state: TaskState) -> None:
        seen.append(state.status)

    async with connected(url) as client:
        handle = await client.call_tool_as_task(tool, arguments, on_status=on_status)
        assert text_of(await handle.result()) == expected
        # The SDK tells input_required -> working -> completed by notification.
        assert seen[-2:] == ["working", "completed"]


@pytest.mark.anyio
async def test_a_tool_error_fails_the_task_with_an_is_error_result(url: str) -> None:
    async with connected(url) as client:
        handle = await client.call_tool_as_task("broken")
        result = await handle.result()
        assert result.is_error is True
        assert text_of(result) == "it broke"
        assert handle.state.status == "failed"


@pytest.mark.anyio
async def test_a_task_is_cancelled_once(url: str) -> None:
    async with connected(url) as client:
        handle = await client.call_tool_as_task("delay", {"ms": 10_000})
        with pytest.raises(RequestTimeoutError):
            await handle.wait(timeout=0.2)
        state = await handle.cancel()
        assert state.status == "cancelled"
        assert state.status_message == "Client cancelled task execution."
        with pytest.raises(TaskCancelledError):
            await handle.result()
        with pytest.raises(RpcError) as again:
            await handle.cancel()
        assert again.value.code == -32602


@pytest.mark.anyio
async def test_tasks_are_listed(url: str) -> None:
    async with connected(url) as client:
        started = [
            await client.call_tool_as_task("delay", {"ms": 10}) for _ in range(2)
        ]
        for handle in started:
            await handle.wait()
        listed: dict[str, str] = {}
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tasks(cursor)
            listed |= {t.task_id: t.status for t in page.tasks}
            cursor = page.next_cursor
            if cursor is None:
                break
        for handle in started:
            assert listed[handle.task_id] == "completed"


@pytest.mark.anyio
async def test_refusals(url: str) -> None:
    async with connected(url) as client:
        with pytest.raises(TaskSupportError):
            await client.call_tool_as_task("echo", {"message": "hi"})
        assert text_of(await client.call_tool("echo", {"message": "hi"})) == "hi"
        with pytest.raises(RpcError) as unknown:
            await client.task("no-such-task").status()
        assert unknown.value.code == -32602


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("kind", "answer"),
    [
        ("elicit", {"action": "accept", "content": {"name": "Ada"}}),
        ("sample", {"role": "assistant", "model": "m"}),
    ],
)
async def test_the_sdk_sends_our_client_task_augmented_requests(
    url: str, kind: str, answer: dict[str, Any]
) -> None:
    """The receiving side: the SDK's server sends a task-augmented request
    to our client (`host_tasks=True`), polls our `tasks/get` and fetches our
    `tasks/result`."""
    with anyio.fail_after(LIMIT):
        async with Client(
            url,
            cache=None,
            sampling=sampling,
            elicitation=elicitation,
            host_tasks=True,
        ) as client:
            result = await client.call_tool("ask_client_task", {"kind": kind})
    assert result.is_error is not True, text_of(result)
    report = json.loads(text_of(result))
    assert report["events"][0] == "taskCreated"
    assert report["events"][-2:] == ["status:completed", "result"]
    assert report["answer"].items() >= answer.items()
    related = report["answer"]["_meta"]["io.modelcontextprotocol/related-task"]
    assert isinstance(related["taskId"], str)

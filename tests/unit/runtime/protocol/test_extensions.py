"""Extensions as a session mechanism (SEP-2133): advertised where the revision
has `capabilities.extensions`, negotiated per 2026 request, dispatched through
the session with the extension's generated method table, -32021 without it.

A toy extension serves `tasks/get` of the tasks extension's table with a
fixed answer; both ends are `Connection`s over `memory_pair`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.extensions import (
    Extension,
    ExtensionResult,
    negotiated,
)
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import v2025_11_25, v2026_07_28
from mcp_specgen_types.extensions import io_modelcontextprotocol_tasks as tasks

LIMIT = 10.0
TOY = "com.example/toy"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def get_task(params: tasks.GetTaskRequestParams) -> dict[str, Any]:
    return {"taskId": params.task_id, "status": "working"}


class Modern(v2026_07_28.ServerHandlers):
    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResult:
        if negotiated(TOY):
            raise ExtensionResult(TOY, {"resultType": "toy", "answer": 42})
        return v2026_07_28.CallToolResult(content=[])


class Legacy(v2025_11_25.ServerHandlers):
    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        return v2025_11_25.CallToolResult(content=[])


def toy() -> Extension:
    return Extension(
        TOY,
        settings={"level": 1},
        table=tasks.METHODS,
        handlers={"tasks/get": get_task},
    )


@asynccontextmanager
async def connected() -> AsyncGenerator[Connection]:
    session = ServerSession(
        [Legacy(), Modern()], name="s", version="1", extensions=[toy()]
    )
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, session.handler()),
            Connection(client_end) as client,
        ):
            yield client


def meta(**capabilities: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


NEGOTIATED = meta(extensions={TOY: {}})


@pytest.mark.anyio
async def test_discover_advertises_the_extension_and_its_settings() -> None:
    async with connected() as client:
        found = await client.request(
            "server/discover", {"_meta": meta()}, dict[str, Any]
        )
    assert found["capabilities"]["extensions"] == {TOY: {"level": 1}}


@pytest.mark.anyio
async def test_initialize_of_a_revision_without_the_field_does_not() -> None:
    async with connected() as client:
        params: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        found = await client.request("initialize", params, dict[str, Any])
    assert "extensions" not in found["capabilities"]


@pytest.mark.anyio
async def test_a_method_of_the_extension_needs_it_negotiated() -> None:
    async with connected() as client:
        with pytest.raises(RpcError) as caught:
            await client.request(
                "tasks/get", {"taskId": "t", "_meta": meta()}, dict[str, Any]
            )
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"extensions": {TOY: {}}}}


@pytest.mark.anyio
async def test_a_negotiated_request_is_dispatched_with_typed_params() -> None:
    async with connected() as client:
        found = await client.request(
            "tasks/get", {"taskId": "t1", "_meta": NEGOTIATED}, dict[str, Any]
        )
        with pytest.raises(RpcError) as caught:
            await client.request(
                "tasks/get", {"taskId": 7, "_meta": NEGOTIATED}, dict[str, Any]
            )
    assert found["taskId"] == "t1"
    assert found["resultType"] == "complete"  # stamped like any 2026 result
    assert caught.value.code == -32602
    assert "taskId" in caught.value.message


@pytest.mark.anyio
async def test_a_method_the_extension_does_not_serve_is_not_found() -> None:
    async with connected() as client:
        with pytest.raises(RpcError) as caught:
            await client.request(
                "tasks/cancel", {"taskId": "t", "_meta": NEGOTIATED}, Any
            )
    assert caught.value.code == -32601


@pytest.mark.anyio
async def test_a_core_handler_may_answer_with_the_extensions_result() -> None:
    async with connected() as client:
        plain = await client.request(
            "tools/call", {"name": "x", "_meta": meta()}, dict[str, Any]
        )
        other = await client.request(
            "tools/call", {"name": "x", "_meta": NEGOTIATED}, dict[str, Any]
        )
    assert plain["resultType"] == "complete"
    assert (other["resultType"], other["answer"]) == ("toy", 42)


@pytest.mark.anyio
async def test_legacy_connections_do_not_negotiate_extensions() -> None:
    async with connected() as client:
        params: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {TOY: {}}},
            "clientInfo": {"name": "c", "version": "1"},
        }
        await client.request("initialize", params, dict[str, Any])
        found = await client.request("tools/call", {"name": "x"}, dict[str, Any])
        with pytest.raises(RpcError) as caught:
            await client.request("tasks/get", {"taskId": "t"}, dict[str, Any])
    assert found == {"content": []}
    assert caught.value.code == -32601


def test_a_handler_for_a_method_outside_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="not a client→server request"):
        Extension(TOY, table=tasks.METHODS, handlers={"tasks/list": get_task})
    with pytest.raises(ValueError, match="not a client→server request"):
        Extension(TOY, table=tasks.METHODS, handlers={"notifications/tasks": get_task})


def test_two_extensions_cannot_share_an_id_or_a_method() -> None:
    session = ServerSession([Modern()], name="s", version="1", extensions=[toy()])
    with pytest.raises(ValueError, match="already offered"):
        session.add_extension(toy())
    other = Extension("com.example/other", table=tasks.METHODS)
    other.handlers["tasks/get"] = get_task
    with pytest.raises(ValueError, match="already served"):
        session.add_extension(other)

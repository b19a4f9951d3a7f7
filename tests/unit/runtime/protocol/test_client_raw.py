"""`ClientSession.request_raw` (results as builtins, extension methods),
per-request client capabilities merged into the 2026 envelope, extra
declared capabilities, and `answer_input`."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.errors import MethodNotFoundError, ProtocolError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import latest

LIMIT = 10.0
CAPS = "io.modelcontextprotocol/clientCapabilities"
ELICIT = {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}
ASKED = {"q": {"method": "elicitation/create", "params": ELICIT}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Raw:
    """A server answering raw JSON: discover (2026) or initialize (legacy),
    then `answers[method]` (a list: one per call, the last repeated)."""

    def __init__(self, modern: bool, answers: dict[str, list[Any]]) -> None:
        self.modern = modern
        self.answers = answers
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def handle(self, method: str, params: bytes | None) -> bytes | None:
        body: dict[str, Any] = json.loads(params or b"{}")
        self.seen.append((method, body))
        if method.startswith("notifications/"):
            return None
        if method == "server/discover":
            if not self.modern:
                raise MethodNotFoundError(method)
            answer: Any = {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
                "cacheScope": "private",
                "ttlMs": 0,
            }
        elif method == "initialize":
            answer = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        else:
            queue = self.answers.get(method)
            if not queue:
                raise MethodNotFoundError(method)
            answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return answer if isinstance(answer, bytes) else json.dumps(answer).encode()

    def bodies(self, method: str) -> list[dict[str, Any]]:
        return [body for m, body in self.seen if m == method]


async def elicitation(self: Any, params: Any) -> latest.ElicitResult:
    return latest.ElicitResult(action="accept", content={"name": "Ada"})


HANDLERS = type(
    "Handlers", (latest.ClientHandlers,), {"elicitation_create": elicitation}
)()


@asynccontextmanager
async def session_of(server: Raw, **options: Any) -> AsyncGenerator[ClientSession]:
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, server.handle),
            ClientSession(
                client_end, name="c", version="1", handlers=[HANDLERS], **options
            ) as session,
        ):
            yield session


@pytest.mark.anyio
async def test_a_raw_2026_request_merges_its_capabilities_into_the_envelope() -> None:
    server = Raw(True, {"tasks/get": [{"taskId": "t", "status": "working"}]})
    async with session_of(server) as session:
        extension = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        found = await session.request_raw(
            "tasks/get", {"taskId": "t", "_meta": {CAPS: extension, "mine": 1}}
        )
        assert found == {"taskId": "t", "status": "working"}
    sent = server.bodies("tasks/get")[0]
    declared = sent["_meta"][CAPS]
    assert declared["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    assert "elicitation" in declared  # the session's own capabilities stay
    assert sent["_meta"]["mine"] == 1
    assert sent["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


@pytest.mark.anyio
async def test_a_raw_2026_request_answers_input_rounds() -> None:
    rounds = [
        {"resultType": "input_required", "inputRequests": ASKED, "requestState": "s1"},
        {"resultType": "task", "taskId": "t", "status": "working"},
    ]
    server = Raw(True, {"tools/call": rounds})
    async with session_of(server) as session:
        found = await session.request_raw("tools/call", {"name": "x"})
    assert found["resultType"] == "task"
    retry = server.bodies("tools/call")[1]
    assert retry["inputResponses"] == {
        "q": {"action": "accept", "content": {"name": "Ada"}}
    }
    assert retry["requestState"] == "s1"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "requests", [{"q": "not an object"}, {"q": {"params": {}}}, ["q"]]
)
async def test_malformed_input_requests_are_a_protocol_error(requests: Any) -> None:
    server = Raw(
        True,
        {"tools/call": [{"resultType": "input_required", "inputRequests": requests}]},
    )
    async with session_of(server) as session:
        with pytest.raises(ProtocolError):
            await session.request_raw("tools/call", {"name": "x"})


@pytest.mark.anyio
async def test_a_raw_legacy_request_has_no_envelope() -> None:
    server = Raw(
        False, {"tools/call": [{"task": {"taskId": "t", "status": "working"}}]}
    )
    async with session_of(server) as session:
        found = await session.request_raw("tools/call", {"name": "x", "task": {}})
        assert found == {"task": {"taskId": "t", "status": "working"}}
    assert server.bodies("tools/call") == [{"name": "x", "task": {}}]


@pytest.mark.anyio
@pytest.mark.parametrize("answer", [b"[1, 2]", b'"text"'])
async def test_a_result_that_is_no_object_is_a_protocol_error(answer: bytes) -> None:
    server = Raw(False, {"tools/call": [answer]})
    async with session_of(server) as session:
        with pytest.raises(ProtocolError, match="no JSON object"):
            await session.request_raw("tools/call", {"name": "x"})


@pytest.mark.anyio
@pytest.mark.parametrize("modern", [False, True])
async def test_extra_capabilities_are_declared_where_the_revision_has_them(
    modern: bool,
) -> None:
    server = Raw(modern, {})
    extra = {"tasks": {"list": {}}}
    async with session_of(server, capabilities=extra) as session:
        assert await session.answer_input("elicitation/create", ELICIT) == {
            "action": "accept",
            "content": {"name": "Ada"},
        }
    if modern:
        declared = server.bodies("server/discover")[0]["_meta"][CAPS]
        assert "tasks" not in declared  # 2026 has no client `tasks` capability
    else:
        declared = server.bodies("initialize")[0]["capabilities"]
        assert declared["tasks"] == {"list": {}}
    assert "elicitation" in declared

"""`ClientDispatcher`: how a client serves the server's requests (newer
shapes of params, SEP-1034 defaults of elicitation forms).

The server end is a bare `Connection` over `memory_pair`, sending requests a
real server sends; the client end is a `ClientSession`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession
from mcp_specgen_runtime.protocol.client_serving import with_defaults
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import v2025_11_25
from tests.unit.runtime.session_programs.echo_session import session

LIMIT = 10.0
"""Seconds any one test may take."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


MULTI_SELECT: dict[str, Any] = {
    "message": "Pick colours",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            # 2025-11-25's multi-select enum; 2025-06-18 has no array fields.
            "colours": {
                "type": "array",
                "items": {"type": "string", "enum": ["red", "green"]},
            },
        },
    },
}


class MultiSelectClient(v2025_11_25.ClientHandlers):
    """Answers elicitation with every option of each multi-select field."""

    def __init__(self) -> None:
        self.seen: list[v2025_11_25.ElicitRequestParams] = []

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        self.seen.append(params)
        assert isinstance(params, v2025_11_25.ElicitRequestFormParams)
        content: dict[str, v2025_11_25.ElicitResultContentValue] = {}
        for name, field in params.requested_schema.properties.items():
            if isinstance(field, v2025_11_25.UntitledMultiSelectEnumSchema):
                content[name] = field.items.enum
        return v2025_11_25.ElicitResult(action="accept", content=content)


@asynccontextmanager
async def legacy_server_and_client(
    version: str, handlers: list[Any]
) -> AsyncGenerator[Connection]:
    """The server's connection to a client that negotiated `version`."""
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, session(version).handler()) as server,
            ClientSession(
                client_end, name="c", version="1", handlers=handlers
            ) as client,
        ):
            assert client.protocol_version == version
            yield server


@pytest.mark.anyio
async def test_a_server_request_of_a_newer_shape_reaches_the_handler() -> None:
    """server-everything at 2025-06-18 sends a 2025-11-25 array field."""
    answering = MultiSelectClient()
    async with legacy_server_and_client("2025-06-18", [answering]) as server:
        answer: dict[str, Any] = await server.request(
            "elicitation/create", MULTI_SELECT, dict[str, Any]
        )
    assert answer == {"action": "accept", "content": {"colours": ["red", "green"]}}
    assert len(answering.seen) == 1


@pytest.mark.anyio
async def test_a_server_request_no_revision_takes_is_invalid_params() -> None:
    answering = MultiSelectClient()
    async with legacy_server_and_client("2025-06-18", [answering]) as server:
        with pytest.raises(RpcError) as raised:
            await server.request("elicitation/create", {"message": 42}, Any)
    assert raised.value.code == ErrorCode.INVALID_PARAMS
    assert answering.seen == []


DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
        "nickname": {"type": "string"},
    },
    "required": [],
}
"""The conformance scenario `elicitation-sep1034-client-defaults`, plus a
field without a default."""


class FixedAnswer(v2025_11_25.ClientHandlers):
    """Answers every elicitation with the same result."""

    def __init__(self, result: v2025_11_25.ElicitResult) -> None:
        self.result = result

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        return self.result


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            {"age": 41},
            {
                "age": 41,
                "name": "John Doe",
                "score": 95.5,
                "status": "active",
                "verified": True,
            },
        ),
        (
            None,
            {
                "name": "John Doe",
                "age": 30,
                "score": 95.5,
                "status": "active",
                "verified": True,
            },
        ),
    ],
)
async def test_an_accepted_elicitation_gets_the_schema_defaults(
    given: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    result = msgspec.convert(
        {"action": "accept"} | ({} if given is None else {"content": given}),
        v2025_11_25.ElicitResult,
    )
    params: dict[str, Any] = {
        "message": "defaults?",
        "requestedSchema": DEFAULTS_SCHEMA,
    }
    async with legacy_server_and_client("2025-11-25", [FixedAnswer(result)]) as s:
        answer: dict[str, Any] = await s.request(
            "elicitation/create", params, dict[str, Any]
        )
    assert answer == {"action": "accept", "content": expected}


@pytest.mark.anyio
async def test_a_declined_elicitation_gets_no_defaults() -> None:
    result = v2025_11_25.ElicitResult(action="decline")
    params: dict[str, Any] = {
        "message": "defaults?",
        "requestedSchema": DEFAULTS_SCHEMA,
    }
    async with legacy_server_and_client("2025-11-25", [FixedAnswer(result)]) as s:
        answer: dict[str, Any] = await s.request(
            "elicitation/create", params, dict[str, Any]
        )
    assert answer == {"action": "decline"}


@pytest.mark.parametrize(
    ("params", "answer"),
    [
        (
            {"mode": "url", "url": "https://x.test", "message": "m"},
            {"action": "accept"},
        ),
        ({"message": "m"}, {"action": "accept"}),  # no requestedSchema
        ({"message": "m", "requestedSchema": DEFAULTS_SCHEMA}, {"action": "cancel"}),
        (
            {"message": "m", "requestedSchema": DEFAULTS_SCHEMA},
            {"action": "accept", "content": "not an object"},
        ),
    ],
)
def test_answers_other_than_an_accepted_form_are_left_alone(
    params: dict[str, Any], answer: dict[str, Any]
) -> None:
    encoded = msgspec.json.encode(answer)
    assert with_defaults(msgspec.json.encode(params), encoded) is encoded

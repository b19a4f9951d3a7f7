"""`ClientSession`: negotiation, typed calls across revisions, capabilities,
the era cache, and server→client requests in both eras.

The server end is a `ServerSession` (or a bare `Connection` handler, where a
test needs a misbehaving server) over `memory_pair`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import mcp_specgen_types
from mcp_specgen_runtime.errors import (
    CapabilityError,
    DiscoveryError,
    ErrorCode,
    McpError,
    MethodNotFoundError,
    NegotiationError,
    RequestTimeoutError,
    RpcError,
    TransportError,
)
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.protocol.client import ClientSession, VersionCache
from mcp_specgen_runtime.protocol.client_requests import log_to_client, request_client
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.stdio import connect_stdio
from mcp_specgen_types import v2024_11_05, v2025_03_26, v2025_11_25, v2026_07_28
from tests.unit.runtime.session_programs.echo_session import NAME, Echo2026, session

LIMIT = 10.0
"""Seconds any one test may take."""

Handler = Callable[[str, bytes | None], Awaitable[bytes | None]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def client_of(handler: Handler, **options: Any) -> AsyncGenerator[ClientSession]:
    """A `ClientSession` connected to a server connection served by `handler`."""
    client_end, server_end = memory_pair()
    options.setdefault("name", "client-tests")
    options.setdefault("version", "0.0.0")
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, handler),
            ClientSession(client_end, **options) as client,
        ):
            yield client


def recording(handler: Handler, methods: list[str]) -> Handler:
    """`handler`, noting each method it is called with."""

    async def serve(method: str, params: bytes | None) -> bytes | None:
        methods.append(method)
        return await handler(method, params)

    return serve


ECHO = {"name": "echo", "arguments": {"message": "hi"}}


# --- negotiation --------------------------------------------------------------


@pytest.mark.anyio
async def test_a_dual_era_server_is_spoken_to_in_the_newest_modern_version() -> None:
    async with client_of(session().handler()) as client:
        assert (client.protocol_version, client.era) == ("2026-07-28", "modern")
        assert client.package is v2026_07_28
        assert client.server_info.name == NAME
        assert client.server_capabilities == {"tools": {}}
        result = await v2026_07_28.Client(client).call_tool(**ECHO)
        assert isinstance(result, v2026_07_28.CallToolResult)
        assert result.content[0].text == "hi"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_legacy_only_server_gets_initialize_after_the_probe_fails() -> None:
    methods: list[str] = []
    handler = recording(session("2025-06-18", "2025-11-25").handler(), methods)
    async with client_of(handler) as client:
        assert (client.protocol_version, client.era) == ("2025-11-25", "legacy")
        result = await v2025_11_25.Client(client).call_tool(**ECHO)
        assert result.content[0].text == "hi"  # type: ignore[union-attr]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_a_restricted_client_negotiates_its_own_revision(version: str) -> None:
    served = ServerSession(
        [v2025_11_25.ServerHandlers()],
        name="s",
        version="1",
        versions=["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
    )
    async with client_of(served.handler(), versions=[version]) as client:
        assert client.protocol_version == version
        assert client.connection.allow_batches == (version == "2025-03-26")


@pytest.mark.anyio
async def test_unsupported_version_error_lists_the_version_to_retry_with() -> None:
    methods: list[str] = []
    handler = recording(session("2026-07-28").handler(), methods)
    async with client_of(handler, versions=["2026-07-28", "draft"]) as client:
        assert client.protocol_version == "2026-07-28"
    assert methods == ["server/discover", "server/discover"]


@pytest.mark.anyio
async def test_a_probe_without_answer_falls_back_to_initialize() -> None:
    legacy = session("2025-11-25").handler()

    async def silent_on_discover(method: str, params: bytes | None) -> bytes | None:
        if method == "server/discover":
            await anyio.sleep_forever()
        return await legacy(method, params)

    async with client_of(silent_on_discover, probe_timeout=0.2) as client:
        assert client.protocol_version == "2025-11-25"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"supportedVersions": ["2026-07-28"]},
        {"supportedVersions": "2026-07-28", "capabilities": {}},
    ],
)
async def test_a_discover_answer_that_is_no_discover_result_falls_back(
    answer: dict[str, Any],
) -> None:
    """A lenient legacy server answering any method with a result is no
    modern server (the conformance suite's 2025 mocks answer `{}`)."""
    legacy = session("2025-11-25").handler()

    async def lenient(method: str, params: bytes | None) -> bytes | None:
        if method == "server/discover":
            return msgspec.json.encode(answer)
        return await legacy(method, params)

    async with client_of(lenient) as client:
        assert (client.protocol_version, client.era) == ("2025-11-25", "legacy")


@pytest.mark.anyio
async def test_no_common_version_is_a_negotiation_error() -> None:
    with pytest.raises(NegotiationError, match="allows \\['2024-11-05'\\]") as caught:
        async with client_of(session().handler(), versions=["2024-11-05"]):
            pass
    assert not isinstance(caught.value, DiscoveryError)
    with pytest.raises(NegotiationError, match="modern versions") as caught:
        async with client_of(session("2025-11-25").handler(), versions=["draft"]):
            pass
    assert not isinstance(caught.value, DiscoveryError)


def failing_discover(served: ServerSession) -> Handler:
    """`served`'s handler, except that `server/discover` fails with -32603."""
    inner = served.handler()

    async def handler(method: str, params: bytes | None) -> bytes | None:
        if method == "server/discover":
            raise RpcError(ErrorCode.INTERNAL_ERROR, "no result", {"why": "resultType"})
        return await inner(method, params)

    return handler


@pytest.mark.anyio
@pytest.mark.parametrize(
    "versions", [None, ["2025-11-25", "2026-07-28"], ["2026-07-28"]]
)
async def test_a_failed_discover_is_told_with_the_servers_error(
    versions: list[str] | None,
) -> None:
    """A modern server failing `server/discover` (-32603) refuses the
    `initialize` fallback: the error says discovery failed and carries the
    server's error, not a version mismatch."""
    handler = failing_discover(session("2026-07-28"))
    with pytest.raises(DiscoveryError) as caught:
        async with client_of(handler, versions=versions):
            pass
    error = caught.value
    # The probe's version: the newest the client allows.
    probed = versions[-1] if versions else mcp_specgen_types.LATEST_VERSION
    assert error.version == probed
    assert error.__cause__ is error.error
    assert (error.error.code, error.error.message, error.error.data) == (
        -32603,
        "no result",
        {"why": "resultType"},
    )
    told = str(error)
    assert told.startswith(f"server/discover at {probed} failed: no result (-32603)")
    assert "resultType" in told
    if versions == ["2026-07-28"]:
        assert error.fallback is None
        assert "allows no legacy version" in told
    else:
        assert isinstance(error.fallback, NegotiationError)
        assert "initialize fallback failed too" in told


@pytest.mark.anyio
async def test_a_legacy_server_failing_discover_is_still_a_legacy_server() -> None:
    handler = failing_discover(session("2025-11-25"))
    async with client_of(handler) as client:
        assert (client.protocol_version, client.era) == ("2025-11-25", "legacy")


@pytest.mark.anyio
async def test_a_legacy_refusal_of_discover_keeps_the_mismatch_plain() -> None:
    """-32601 to `server/discover` is how a legacy server says it is one: a
    version mismatch after it is no discovery failure."""
    legacy = session("2025-11-25").handler()

    async def handler(method: str, params: bytes | None) -> bytes | None:
        if method == "server/discover":
            raise MethodNotFoundError(method)
        return await legacy(method, params)

    with pytest.raises(NegotiationError) as caught:
        async with client_of(handler, versions=["2024-11-05", "2026-07-28"]):
            pass
    assert not isinstance(caught.value, DiscoveryError)
    assert "the client allows ['2024-11-05']" in str(caught.value)


@pytest.mark.anyio
async def test_the_cache_skips_the_probe_of_a_legacy_server() -> None:
    cache = VersionCache()
    methods: list[str] = []
    handler = recording(session("2025-11-25").handler(), methods)
    async with client_of(handler, cache=cache, cache_key="echo"):
        pass
    methods.clear()
    handler = recording(session("2025-11-25").handler(), methods)
    async with client_of(handler, cache=cache, cache_key="echo") as client:
        assert client.protocol_version == "2025-11-25"
    assert methods[0] == "initialize"


@pytest.mark.anyio
async def test_the_cache_reuses_a_fresh_discover_result() -> None:
    cache = VersionCache()
    served = ServerSession([Echo2026()], name="s", version="1", discover_ttl_ms=60_000)
    methods: list[str] = []
    async with client_of(served.handler(), cache=cache, cache_key="s"):
        pass
    async with client_of(
        recording(served.handler(), methods), cache=cache, cache_key="s"
    ) as client:
        assert client.protocol_version == "2026-07-28"
        await v2026_07_28.Client(client).list_tools()
    assert methods == ["tools/list"]


# --- typed calls ---------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("server_versions", "package"),
    [
        (("2025-11-25",), v2026_07_28),  # modern types, legacy server
        (("2025-11-25",), v2024_11_05),
        (("2026-07-28",), v2025_11_25),  # legacy types, modern server
        (("2026-07-28",), v2024_11_05),
    ],
)
async def test_typed_clients_of_any_revision_work_on_any_session(
    server_versions: tuple[str, ...], package: Any
) -> None:
    async with client_of(session(*server_versions).handler()) as client:
        typed = package.Client(client)
        tools = await typed.list_tools()
        assert isinstance(tools, package.ListToolsResult)
        assert [tool.name for tool in tools.tools] == ["echo"]
        result = await typed.call_tool(name="echo", arguments={"message": "hé"})
        assert isinstance(result, package.CallToolResult)
        assert result.content[0].text == "hé"


@pytest.mark.anyio
async def test_an_input_round_with_content_is_answered_not_taken_as_the_result() -> (
    None
):
    """`resultType: "input_required"` decides, though a `content` key would
    make the result fit `CallToolResult` too."""
    served = session("2026-07-28").handler()
    retries: list[Any] = []

    async def asking_first(method: str, params: bytes | None) -> bytes | None:
        if method == "tools/call":
            sent = msgspec.json.decode(params or b"{}")
            if sent.get("requestState") != "s1":
                return msgspec.json.encode(
                    {
                        "resultType": "input_required",
                        "requestState": "s1",
                        "content": [{"type": "text", "text": "wait"}],
                    }
                )
            retries.append(sent.pop("requestState"))
            params = msgspec.json.encode(sent)
        return await served(method, params)

    async with client_of(asking_first) as client:
        result = await v2026_07_28.Client(client).call_tool(**ECHO)
    assert isinstance(result, v2026_07_28.CallToolResult)
    assert result.content[0].text == "hi"
    assert retries == ["s1"]


@pytest.mark.anyio
async def test_a_complete_read_without_cache_hints_is_the_read_result() -> None:
    """The specification's own example of a read result has no ttlMs or
    cacheScope; it was taken for an `InputRequiredResult` and answered."""
    served = session("2026-07-28").handler()
    contents = [{"uri": "file:///a", "text": "a"}]

    async def reading(method: str, params: bytes | None) -> bytes | None:
        if method == "resources/read":
            return msgspec.json.encode({"resultType": "complete", "contents": contents})
        answer = await served(method, params)
        if method == "server/discover" and answer is not None:
            found = msgspec.json.decode(answer)
            found["capabilities"]["resources"] = {}
            answer = msgspec.json.encode(found)
        return answer

    async with client_of(reading) as client:
        result = await v2026_07_28.Client(client).read_resource(uri="file:///a")
    assert isinstance(result, v2026_07_28.ReadResourceResult)
    assert result.contents[0].text == "a"


@pytest.mark.anyio
async def test_a_modern_call_carries_the_envelope_and_keeps_its_own_meta() -> None:
    seen: list[dict[str, Any]] = []
    modern = session("2026-07-28").handler()

    async def spy(method: str, params: bytes | None) -> bytes | None:
        seen.append(msgspec.json.decode(params or b"{}"))
        return await modern(method, params)

    async with client_of(spy, log_level="debug") as client:
        meta = v2026_07_28.dispatch.request_meta()
        meta = msgspec.structs.replace(meta, progress_token="p1")
        await v2026_07_28.Client(client).call_tool(name="echo", meta=meta)
    envelope = seen[-1]["_meta"]
    assert envelope["progressToken"] == "p1"
    assert envelope["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert envelope["io.modelcontextprotocol/clientInfo"] == {
        "name": "client-tests",
        "version": "0.0.0",
    }
    assert envelope["io.modelcontextprotocol/logLevel"] == "debug"


@pytest.mark.anyio
async def test_requests_for_undeclared_capabilities_are_not_sent() -> None:
    methods: list[str] = []
    async with client_of(recording(session("2025-11-25").handler(), methods)) as c:
        with pytest.raises(CapabilityError, match="'prompts'"):
            await v2025_11_25.Client(c).list_prompts()
    assert "prompts/list" not in methods


@pytest.mark.anyio
async def test_server_errors_reach_the_caller_and_the_session_goes_on() -> None:
    async with client_of(session("2025-11-25").handler()) as client:
        typed = v2025_11_25.Client(client)
        with pytest.raises(RpcError) as caught:
            await typed.call_tool(name="nope")
        assert caught.value.code == ErrorCode.INVALID_PARAMS
        with pytest.raises(RpcError) as caught:
            await client.request("tools/call", {"name": 42}, v2025_11_25.CallToolResult)
        assert "$.name" in caught.value.message
        assert (await typed.call_tool(**ECHO)).content[0].text == "hi"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_method_the_revision_lacks_is_refused_locally() -> None:
    async with client_of(session("2025-11-25").handler()) as client:
        with pytest.raises(MethodNotFoundError):
            await client.request("server/discover", None, v2026_07_28.DiscoverResult)


# --- request timeouts -----------------------------------------------------------


def never_answering_tools() -> Handler:
    """A 2025-11-25 server that never answers `tools/list`."""
    legacy = session("2025-11-25").handler()

    async def serve(method: str, params: bytes | None) -> bytes | None:
        if method == "tools/list":
            await anyio.sleep_forever()
        return await legacy(method, params)

    return serve


@pytest.mark.anyio
async def test_every_request_gets_the_session_timeout_by_default() -> None:
    async with client_of(never_answering_tools(), request_timeout=0.2) as client:
        assert ClientSession.__init__.__kwdefaults__["request_timeout"] == 60.0
        with pytest.raises(RequestTimeoutError) as raised:
            await v2025_11_25.Client(client).list_tools()
        assert (raised.value.method, raised.value.timeout) == ("tools/list", 0.2)
        # The session goes on.
        assert (await v2025_11_25.Client(client).call_tool(**ECHO)).content


@pytest.mark.anyio
async def test_a_call_may_wait_longer_or_without_limit() -> None:
    async with client_of(never_answering_tools(), request_timeout=0.1) as client:
        result = v2025_11_25.ListToolsResult
        with pytest.raises(RequestTimeoutError) as raised:
            await client.request("tools/list", None, result, timeout=0.3)
        assert raised.value.timeout == 0.3
        with anyio.move_on_after(0.5) as waited:
            await client.request("tools/list", None, result, timeout=None)
        assert waited.cancelled_caught


@pytest.mark.anyio
async def test_connect_stdio_takes_the_line_limit() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            [sys.executable, ECHO_SERVER],
            name="c",
            version="1",
            stderr="discard",
            max_line_length=4096,
            request_timeout=2.0,
        ) as client:
            typed = v2025_11_25.Client(client)
            short = await typed.call_tool(name="echo", arguments={"message": "hi"})
            assert short.content[0].text == "hi"  # type: ignore[union-attr]
            # An answer over the limit is dropped; the call fails, never hangs.
            with pytest.raises(McpError):
                await typed.call_tool(name="echo", arguments={"message": "x" * 8192})


# --- server→client requests, both eras ---------------------------------------


class AskingServer(v2025_11_25.ServerHandlers):
    """One tool, `ask`: elicits a name (twice when `arguments.twice`), and
    greets; another, `roots`, lists the client's roots."""

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        if params.name == "roots":
            roots = await request_client(
                "roots/list", v2025_11_25.RequestParams(), v2025_11_25.ListRootsResult
            )
            text = ",".join(root.uri for root in roots.roots)
            return v2025_11_25.CallToolResult(
                content=[v2025_11_25.TextContent(text=text)]
            )
        asks = 2 if (params.arguments or {}).get("twice") else 1
        names = [await self._ask(f"name {n}?") for n in range(asks)]
        return v2025_11_25.CallToolResult(
            content=[v2025_11_25.TextContent(text="hello " + " & ".join(names))]
        )

    async def _ask(self, question: str) -> str:
        schema = v2025_11_25.ElicitRequestFormParamsRequestedSchema(
            type="object",
            properties={"name": msgspec.convert({"type": "string"}, Any)},
        )
        params = v2025_11_25.ElicitRequestFormParams(
            message=question, requested_schema=schema
        )
        answer = await request_client(
            "elicitation/create", params, v2025_11_25.ElicitResult
        )
        content = answer.content or {}
        return str(content.get("name", answer.action))


class AnsweringClient(v2025_11_25.ClientHandlers):
    """Answers elicitation with a name per question, and one root."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        assert isinstance(params, v2025_11_25.ElicitRequestFormParams)
        self.questions.append(params.message)
        name = ["Ada", "Grace"][len(self.questions) - 1]
        return v2025_11_25.ElicitResult(action="accept", content={"name": name})

    async def roots_list(
        self, params: v2025_11_25.RequestParams
    ) -> v2025_11_25.ListRootsResult:
        return v2025_11_25.ListRootsResult(roots=[v2025_11_25.Root(uri="file:///work")])


def asking_session(**options: Any) -> ServerSession:
    return ServerSession(
        [AskingServer()],
        name="asking",
        version="1",
        versions=["2025-11-25", "2026-07-28"],
        **options,
    )


@pytest.mark.anyio
@pytest.mark.parametrize("versions", [["2025-11-25"], ["2026-07-28"]])
@pytest.mark.parametrize("twice", [False, True])
async def test_one_handler_call_asks_the_client_in_either_era(
    versions: list[str], twice: bool
) -> None:
    answering = AnsweringClient()
    methods: list[str] = []
    handler = recording(asking_session().handler(), methods)
    async with client_of(handler, handlers=[answering], versions=versions) as client:
        result = await v2025_11_25.Client(client).call_tool(
            name="ask", arguments={"twice": twice}
        )
        roots = await v2025_11_25.Client(client).call_tool(name="roots")
    expected = "hello Ada & Grace" if twice else "hello Ada"
    assert result.content[0].text == expected  # type: ignore[union-attr]
    assert roots.content[0].text == "file:///work"  # type: ignore[union-attr]
    assert answering.questions == (["name 0?", "name 1?"] if twice else ["name 0?"])
    rounds = methods.count("tools/call")
    # Modern: one round per question plus the last; legacy: one request.
    modern = versions == ["2026-07-28"]
    assert rounds == (2 + (3 if twice else 2) if modern else 2)


@pytest.mark.anyio
async def test_a_client_without_the_capability_is_not_asked() -> None:
    async with client_of(asking_session().handler(), versions=["2025-11-25"]) as c:
        with pytest.raises(RpcError) as caught:
            await v2025_11_25.Client(c).call_tool(name="ask")
    assert caught.value.code == ErrorCode.INTERNAL_ERROR


async def _modern_round(
    connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    result: dict[str, Any] = await connection.request(
        "tools/call", params, dict[str, Any]
    )
    return result


def _modern_params(**extra: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    return {"name": "ask", "arguments": {}, "_meta": meta, **extra}


@asynccontextmanager
async def raw_modern(served: ServerSession) -> AsyncGenerator[Connection]:
    client_end, server_end = memory_pair()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, served.handler()),
            Connection(client_end) as connection,
        ):
            yield connection


ANSWER = {"r0": {"action": "accept", "content": {"name": "Eve"}}}


@pytest.mark.anyio
async def test_request_state_is_opaque_and_tamper_evident() -> None:
    served = asking_session()
    async with raw_modern(served) as connection:
        first = await _modern_round(connection, _modern_params())
        assert first["resultType"] == "input_required"
        assert first["inputRequests"]["r0"]["method"] == "elicitation/create"
        state = first["requestState"]
        assert "answers" not in state and "name" not in state
        done = await _modern_round(
            connection, _modern_params(inputResponses=ANSWER, requestState=state)
        )
        assert done["content"][0]["text"] == "hello Eve"
        forged = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        for bad, reason in [
            (forged, "altered"),
            ("not-a-token!", "not a token"),
        ]:
            with pytest.raises(RpcError, match=reason) as caught:
                await _modern_round(
                    connection, _modern_params(inputResponses=ANSWER, requestState=bad)
                )
            assert caught.value.code == ErrorCode.INVALID_PARAMS
        other = _modern_params(inputResponses=ANSWER, requestState=state)
        other["arguments"] = {"twice": True}
        with pytest.raises(RpcError, match="another request"):
            await _modern_round(connection, other)
        with pytest.raises(RpcError, match="must answer the input request 'r0'"):
            await _modern_round(connection, _modern_params(requestState=state))


@pytest.mark.anyio
async def test_request_state_from_another_server_key_is_refused() -> None:
    async with raw_modern(asking_session(state_key=b"k" * 32)) as connection:
        state = (await _modern_round(connection, _modern_params()))["requestState"]
    async with raw_modern(asking_session(state_key=b"q" * 32)) as connection:
        with pytest.raises(RpcError, match="altered"):
            await _modern_round(
                connection, _modern_params(inputResponses=ANSWER, requestState=state)
            )


# --- batches (2025-03-26 only) ------------------------------------------------


@pytest.mark.anyio
async def test_batches_are_served_only_after_negotiating_2025_03_26() -> None:
    served = ServerSession(
        [v2025_03_26.ServerHandlers(), v2025_11_25.ServerHandlers()],
        name="s",
        version="1",
    )
    for version, allowed in [("2025-03-26", True), ("2025-11-25", False)]:
        client_end, server_end = memory_pair()
        with anyio.fail_after(LIMIT):
            async with Connection(server_end, served.handler()):
                init = {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                }
                await client_end.send(
                    msgspec.json.encode(
                        {
                            "jsonrpc": "2.0",
                            "id": 1,
                            "method": "initialize",
                            "params": init,
                        }
                    )
                )
                await client_end.receive()
                batch = [
                    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                ]
                await client_end.send(msgspec.json.encode(batch))
                reply = msgspec.json.decode(await client_end.receive())
                await client_end.aclose()
        if allowed:
            assert sorted(item["id"] for item in reply) == [2, 3]
        else:
            assert reply["error"]["code"] == ErrorCode.INVALID_REQUEST


# --- over stdio ------------------------------------------------------------------


ECHO_SERVER = str(Path(__file__).parents[1] / "session_programs" / "echo_session.py")


@pytest.mark.anyio
async def test_connect_stdio_spawns_negotiates_and_shuts_down() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            [sys.executable, ECHO_SERVER], name="c", version="1", stderr="capture"
        ) as client:
            assert client.protocol_version == "2026-07-28"
            result = await v2025_11_25.Client(client).call_tool(**ECHO)
            assert result.content[0].text == "hi"  # type: ignore[union-attr]


DYING_AT_START = (
    "import sys; sys.stderr.write('starting\\n' + 'x' * 9000 + "
    "'\\nfatal: no config file\\n'); sys.exit(3)"
)


@pytest.mark.anyio
@pytest.mark.parametrize("stderr", ["inherit", "capture", "discard", "callback"])
async def test_a_server_dying_at_start_reports_its_status_and_stderr(
    stderr: str, capfd: pytest.CaptureFixture[str]
) -> None:
    lines: list[str] = []
    option: Any = lines.append if stderr == "callback" else stderr
    with anyio.fail_after(LIMIT), pytest.raises(TransportError) as raised:
        async with connect_stdio(
            [sys.executable, "-c", DYING_AT_START],
            name="c",
            version="1",
            stderr=option,
        ):
            pass
    message = str(raised.value)
    assert "exited with status 3" in message
    assert message.endswith("fatal: no config file")
    assert "starting" not in message  # only the tail
    forwarded = capfd.readouterr().err
    assert ("fatal: no config file" in forwarded) == (stderr == "inherit")
    assert lines[-1:] == (["fatal: no config file"] if stderr == "callback" else [])


DIES_ON_CALL = str(Path(__file__).parents[1] / "session_programs" / "dies_on_call.py")


@pytest.mark.anyio
async def test_a_server_dying_later_fails_the_call_with_its_stderr() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            [sys.executable, DIES_ON_CALL],
            name="c",
            version="1",
            stderr="capture",
            versions=["2025-11-25"],
        ) as client:
            with pytest.raises(TransportError) as raised:
                await v2025_11_25.Client(client).list_tools()
    message = str(raised.value)
    assert "exited with status 3" in message
    assert message.endswith("fatal: tools/list is broken")


# --- logging to the client ------------------------------------------------------


class LoggingServer(v2025_11_25.ServerHandlers):
    """`tools/call` logs one debug and one warning message; levels can be set."""

    async def tools_call(
        self, params: v2025_11_25.CallToolRequestParams
    ) -> v2025_11_25.CallToolResult:
        await log_to_client("debug", "details")
        await log_to_client("warning", {"careful": True}, logger="tool")
        return v2025_11_25.CallToolResult(content=[])

    async def logging_set_level(
        self, params: v2025_11_25.SetLevelRequestParams
    ) -> v2025_11_25.EmptyResult:
        return v2025_11_25.EmptyResult()


class LogReader(v2025_11_25.ClientHandlers):
    def __init__(self) -> None:
        self.levels: list[str] = []

    async def notifications_message(
        self, params: v2025_11_25.LoggingMessageNotificationParams
    ) -> None:
        self.levels.append(params.level)


async def _logged(versions: list[str], set_level: str | None, **options: Any) -> Any:
    served = ServerSession([LoggingServer()], name="s", version="1", versions=versions)
    reader = LogReader()
    async with client_of(
        served.handler(), handlers=[reader], versions=versions, **options
    ) as client:
        typed = v2025_11_25.Client(client)
        if set_level is not None:
            await typed.set_level(level=set_level)  # type: ignore[arg-type]
        await typed.call_tool(name="x")
        # The messages came before the result; let their handlers run.
        await anyio.sleep(0.05)
    return reader.levels


@pytest.mark.anyio
async def test_log_messages_respect_the_level_in_both_eras() -> None:
    assert await _logged(["2025-11-25"], None) == ["debug", "warning"]
    assert await _logged(["2025-11-25"], "info") == ["warning"]
    assert await _logged(["2025-11-25"], "error") == []
    assert await _logged(["2026-07-28"], None, log_level="warning") == ["warning"]
    assert await _logged(["2026-07-28"], None, log_level="debug") == [
        "debug",
        "warning",
    ]


@pytest.mark.anyio
async def test_a_modern_client_that_names_no_level_gets_no_messages() -> None:
    served = ServerSession(
        [LoggingServer()], name="s", version="1", versions=["2026-07-28"]
    )
    reader = LogReader()
    async with client_of(served.handler(), handlers=[reader]) as client:
        await v2025_11_25.Client(client).call_tool(name="x")
        await anyio.sleep(0.05)
    assert reader.levels == []

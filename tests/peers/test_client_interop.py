"""`ClientSession` (our client) against real MCP servers over stdio.

The servers, installed pinned by `benchmarks.peers`:

- server-everything: npm `@modelcontextprotocol/server-everything`, the
  reference server (TypeScript SDK), over its `stdio` transport. It speaks the
  four handshake revisions; `server/discover` gets -32601, so our client falls
  back to `initialize`. serverInfo.name "mcp-servers/everything"; `echo`
  answers "Echo: <message>".
- python-sdk: `programs/python_sdk_echo_server.py`, PyPI `mcp==2.3.0`'s
  `MCPServer`, run with the peer venv's python. It speaks the four handshake
  revisions and 2026-07-28 (answers `server/discover`), so the default is
  modern. serverInfo.name "python-sdk-echo"; `echo` answers the message
  unchanged (with `isError: false` and, where the revision has it,
  `structuredContent: {"result": message}`).
- python-sdk-asking: `programs/python_sdk_asking_server.py`, the same SDK, with
  tools that ask the client back (elicitation, sampling, roots).

What the peers do, as pinned below:

- unknown tool: both answer a `CallToolResult` with `isError: true`, not an
  error response (server-everything's text "MCP error -32602: Tool <name> not
  found", the Python SDK's "Unknown tool: <name>").
- `tools/call` with `{"name": 42}`: server-everything answers -32603 whose
  message is the zod issue list (a peer quirk: -32602 would be right), the
  Python SDK -32602 "Invalid request parameters".
- capabilities: server-everything declares every server capability
  (completions and logging included; `completion/complete` works); the Python
  SDK declares no `completions` nor `logging`, so our client refuses those
  requests locally with `CapabilityError`.
- server→client requests: server-everything registers its sampling,
  elicitation and roots tools only for clients declaring those capabilities
  (2024-11-05 has no elicitation, so no elicitation tool there), sends them
  mid-call and reports what the client answered. Its elicitation schema has
  defaults (filled in by our client for the fields its handler leaves out)
  and, even at 2025-06-18, a 2025-11-25 multi-select (`type: "array"`) field.
  The Python SDK sends them mid-call up to 2025-11-25, and from 2026-07-28
  answers `tools/call` with an `InputRequiredResult` batching the questions,
  which our client answers and retries transparently.
- discovery: server-everything answers `server/discover` -32601. The Python
  SDK answers a probe at "draft" (the newest version our client allows by
  default) -32022 with `data: {"supported": ["2026-07-28"], "requested":
  "draft"}`, and its `DiscoverResult` has `ttlMs: 0`, so a `VersionCache`
  never holds it fresh: the next session probes again.

Every typed client (2024-11-05 .. 2026-07-28) is used on every session, the
results converted across revisions; a tool's `inputSchema` (open JSON Schema)
keeps every keyword on the way.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import msgspec
import pytest

from benchmarks import peers
from mcp_specgen_runtime.codec.wire import UNSET, UnsetType, extra, to_builtins
from mcp_specgen_runtime.errors import CapabilityError, NegotiationError, RpcError
from mcp_specgen_runtime.protocol.client import ClientSession, VersionCache
from mcp_specgen_runtime.transports.stdio import connect_stdio, stdio_client
from mcp_specgen_types import (
    v2024_11_05,
    v2025_03_26,
    v2025_06_18,
    v2025_11_25,
    v2026_07_28,
)

PROGRAMS = Path(__file__).parent / "programs"
PYTHON_ECHO_SERVER = PROGRAMS / "python_sdk_echo_server.py"
PYTHON_ASKING_SERVER = PROGRAMS / "python_sdk_asking_server.py"

LIMIT = 30.0
"""Seconds any one test may take (the Python SDK takes ~1 s to start)."""
MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
CLIENT = {"name": "mcp-codegen-client-interop", "version": "0.0.1"}

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
PACKAGES: dict[str, ModuleType] = {
    "2024-11-05": v2024_11_05,
    "2025-03-26": v2025_03_26,
    "2025-06-18": v2025_06_18,
    "2025-11-25": v2025_11_25,
    MODERN: v2026_07_28,
}
STRUCTURED = frozenset({"2025-06-18", "2025-11-25", MODERN})
"""The revisions whose `CallToolResult` has `structuredContent`."""

EVERYTHING = "everything"
PYTHON_SDK = "python-sdk"


@dataclass(frozen=True)
class Peer:
    """A server under test and what it is known to answer."""

    name: str
    """serverInfo.name"""
    versions: tuple[str, ...]
    default: str
    """What an unrestricted client negotiates."""
    echo_prefix: str
    echo_is_error: Any
    """The `isError` of a successful echo (UNSET: not sent)."""


PEERS = {
    EVERYTHING: Peer("mcp-servers/everything", LEGACY, "2025-11-25", "Echo: ", UNSET),
    PYTHON_SDK: Peer("python-sdk-echo", (*LEGACY, MODERN), MODERN, "", False),
}


# --------------------------------------------------------------------------
# Fixtures and helpers
# --------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def commands() -> dict[str, list[str]]:
    """The argv of each server, installing the peers first when needed."""
    python, _ = peers.ensure_all_peers(print)
    return {
        EVERYTHING: peers.server_everything_command(),
        PYTHON_SDK: [str(python), str(PYTHON_ECHO_SERVER)],
        "python-sdk-asking": [str(python), str(PYTHON_ASKING_SERVER)],
    }


def peer_env() -> dict[str, str]:
    """This environment without anything that would steer the peer venv's python."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


class Recorder:
    """A transport wrapper keeping every message sent and received (decoded)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[Any] = []
        self.received: list[Any] = []

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def receive(self) -> bytes:
        message: bytes = await self.inner.receive()
        self.received.append(json.loads(message))
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()

    def sent_requests(self, method: str) -> list[dict[str, Any]]:
        """The requests (and notifications) of `method` we sent."""
        return [
            m for m in self.sent if isinstance(m, dict) and m.get("method") == method
        ]

    def sent_methods(self) -> list[str]:
        return [m["method"] for m in self.sent if isinstance(m, dict) and "method" in m]

    def received_requests(self) -> list[str]:
        """The methods of the server's requests (messages with an id)."""
        return [
            m["method"]
            for m in self.received
            if isinstance(m, dict) and "method" in m and "id" in m
        ]


@asynccontextmanager
async def recorded(
    command: list[str], **options: Any
) -> AsyncIterator[tuple[ClientSession, Recorder]]:
    """A session over stdio whose messages are recorded."""
    async with stdio_client(command, env=peer_env(), stderr="capture") as transport:
        recorder = Recorder(transport)
        async with ClientSession(recorder, **CLIENT, **options) as session:
            yield session, recorder


def envelope(version: str) -> dict[str, Any]:
    """The `_meta` envelope of a hand-made 2026-07-28 request."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def texts(result: Any) -> list[str]:
    """The texts of a tool result's content."""
    return [block.text for block in result.content]


# --------------------------------------------------------------------------
# 1. Every revision each peer speaks, with typed clients of every revision
# --------------------------------------------------------------------------

CASES = [
    pytest.param(peer, None, PEERS[peer].default, id=f"{peer}-default")
    for peer in PEERS
] + [
    pytest.param(peer, version, version, id=f"{peer}-{version}")
    for peer in PEERS
    for version in PEERS[peer].versions
]


@pytest.mark.anyio
@pytest.mark.parametrize(("peer_id", "allowed", "negotiated"), CASES)
async def test_echo_at_each_revision_with_typed_clients_of_every_revision(
    commands: dict[str, list[str]],
    peer_id: str,
    allowed: str | None,
    negotiated: str,
) -> None:
    """Negotiate, list tools and call echo; then the same through the typed
    client of every other revision (converted both ways)."""
    peer = PEERS[peer_id]
    versions = None if allowed is None else [allowed]
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            commands[peer_id],
            **CLIENT,
            env=peer_env(),
            stderr="discard",
            versions=versions,
        ) as session:
            assert session.protocol_version == negotiated
            assert session.era == ("modern" if negotiated == MODERN else "legacy")
            assert session.package is PACKAGES[negotiated]
            assert session.server_info.name == peer.name
            assert "tools" in session.server_capabilities

            # The negotiated revision's client first, then every other one.
            order = [negotiated, *(v for v in PACKAGES if v != negotiated)]
            for version in order:
                package = PACKAGES[version]
                client = package.Client(session)
                listed = await client.list_tools()
                assert isinstance(listed, package.ListToolsResult), version
                echo = {tool.name: tool for tool in listed.tools}["echo"]
                if version == negotiated:
                    # Other revisions lose it: see test_tool_input_schema_...
                    schema = to_builtins(echo.input_schema)
                    assert schema["properties"]["message"]["type"] == "string"

                result = await client.call_tool(
                    name="echo", arguments={"message": MESSAGE}
                )
                assert isinstance(result, package.CallToolResult), version
                assert texts(result) == [peer.echo_prefix + MESSAGE], version
                assert result.is_error == peer.echo_is_error, version
                if peer_id == PYTHON_SDK and {version, negotiated} <= STRUCTURED:
                    assert result.structured_content == {"result": MESSAGE}, version
                if version == MODERN:
                    assert result.result_type == "complete"


@pytest.mark.anyio
@pytest.mark.parametrize("peer_id", list(PEERS))
async def test_tool_input_schema_survives_conversion_across_revisions(
    commands: dict[str, list[str]], peer_id: str
) -> None:
    """A tool's input schema is JSON Schema: open, nothing to drop."""
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            commands[peer_id], **CLIENT, env=peer_env(), stderr="discard"
        ) as session:
            assert session.package is not None
            native = await session.package.Client(session).list_tools()
            expected = to_builtins(
                {t.name: t for t in native.tools}["echo"].input_schema
            )
            assert "properties" in expected
            seen = {}
            for version, package in PACKAGES.items():
                listed = await package.Client(session).list_tools()
                echo = {t.name: t for t in listed.tools}["echo"]
                seen[version] = to_builtins(echo.input_schema)
            assert seen == dict.fromkeys(PACKAGES, expected)


@pytest.mark.anyio
@pytest.mark.parametrize("peer_id", list(PEERS))
async def test_tool_parameters_are_typed_fields_in_2026_07_28_types(
    commands: dict[str, list[str]], peer_id: str
) -> None:
    """`input_schema.properties`/`.required` read the same whatever the server
    speaks: decoded natively from the Python SDK (2026-07-28), converted from
    server-everything (2025-11-25). schema/overrides/tool-schema-keywords.toml."""
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            commands[peer_id], **CLIENT, env=peer_env(), stderr="discard"
        ) as session:
            assert session.protocol_version == PEERS[peer_id].default
            listed = await v2026_07_28.Client(session).list_tools()
            echo = {t.name: t for t in listed.tools}["echo"]
            properties = echo.input_schema.properties
            assert not isinstance(properties, UnsetType)
            assert properties["message"]["type"] == "string"
            assert echo.input_schema.required == ["message"]
            assert (
                extra(echo.input_schema).keys().isdisjoint({"properties", "required"})
            )


@pytest.mark.anyio
async def test_a_modern_only_client_cannot_reach_server_everything(
    commands: dict[str, list[str]],
) -> None:
    """server/discover gets -32601 and no handshake revision is allowed, so
    no initialize is sent either."""
    with anyio.fail_after(LIMIT):
        async with stdio_client(commands[EVERYTHING], stderr="discard") as transport:
            recorder = Recorder(transport)
            with pytest.raises(NegotiationError):
                async with ClientSession(recorder, **CLIENT, versions=[MODERN]):
                    pytest.fail("negotiated a version the server does not speak")
    assert recorder.sent_methods() == ["server/discover"]
    (answer,) = recorder.received
    assert answer["error"]["code"] == -32601


# --------------------------------------------------------------------------
# 2. Error paths
# --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_server_everything_errors(commands: dict[str, list[str]]) -> None:
    """Unknown tool: an isError result; bad params: -32603 (a zod dump)."""
    with anyio.fail_after(LIMIT):
        async with recorded(commands[EVERYTHING]) as (session, _):
            assert session.protocol_version == "2025-11-25"
            client = v2025_11_25.Client(session)

            unknown = await client.call_tool(name="no-such-tool", arguments={})
            assert unknown.is_error is True
            assert texts(unknown) == ["MCP error -32602: Tool no-such-tool not found"]

            bad = await client.call_tool(name="echo", arguments={})
            assert bad.is_error is True
            assert texts(bad)[0].startswith(
                "MCP error -32602: Input validation error: Invalid arguments for "
                "tool echo"
            )

            with pytest.raises(RpcError) as raised:
                await session.request(
                    "tools/call",
                    {"name": 42},
                    v2025_11_25.METHODS["tools/call"].result,
                )
            assert raised.value.code == -32603
            issues = json.loads(raised.value.message)
            assert issues[0]["path"] == ["params", "name"]
            assert issues[0]["expected"] == "string"

            # Still usable afterwards.
            echoed = await client.call_tool(name="echo", arguments={"message": "ok"})
            assert texts(echoed) == ["Echo: ok"]


@pytest.mark.anyio
@pytest.mark.parametrize("allowed", [None, ["2025-11-25"]], ids=["modern", "legacy"])
async def test_python_sdk_errors(
    commands: dict[str, list[str]], allowed: list[str] | None
) -> None:
    """Unknown tool: an isError result; bad params: -32602; completions and
    logging are not declared, so those requests fail locally, unsent."""
    with anyio.fail_after(LIMIT):
        async with recorded(commands[PYTHON_SDK], versions=allowed) as (
            session,
            recorder,
        ):
            package = session.package
            assert package is not None
            assert session.era == ("modern" if allowed is None else "legacy")
            client = package.Client(session)

            unknown = await client.call_tool(name="no-such-tool", arguments={})
            assert unknown.is_error is True
            assert texts(unknown) == ["Unknown tool: no-such-tool"]

            with pytest.raises(RpcError) as raised:
                await session.request(
                    "tools/call", {"name": 42}, package.METHODS["tools/call"].result
                )
            assert raised.value.code == -32602
            assert raised.value.message == "Invalid request parameters"

            assert "completions" not in session.server_capabilities
            with pytest.raises(CapabilityError) as refused:
                await v2025_11_25.Client(session).complete(
                    ref=v2025_11_25.PromptReference(name="any"),
                    argument=v2025_11_25.CompleteRequestParamsArgument(
                        name="a", value="b"
                    ),
                )
            assert refused.value.capability == "completions"
            assert "logging" not in session.server_capabilities
            with pytest.raises(CapabilityError) as refused:
                await v2025_11_25.Client(session).set_level(level="info")
            assert refused.value.capability == "logging"
            sent = recorder.sent_methods()
            assert "completion/complete" not in sent
            assert "logging/setLevel" not in sent

            # Sent anyway, below the session, the SDK would answer -32601.
            meta = {"_meta": envelope(MODERN)} if session.era == "modern" else {}
            with pytest.raises(RpcError) as raised:
                await session.connection.request(
                    "completion/complete",
                    {
                        "ref": {"type": "ref/prompt", "name": "any"},
                        "argument": {"name": "a", "value": "b"},
                        **meta,
                    },
                    msgspec.Raw,
                )
            assert raised.value.code == -32601

            echoed = await client.call_tool(name="echo", arguments={"message": "ok"})
            assert texts(echoed) == ["ok"]


# --------------------------------------------------------------------------
# 3. Prompts, resources and completions of server-everything
# --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_server_everything_prompts_resources_and_completions(
    commands: dict[str, list[str]],
) -> None:
    """The typed client lists prompts and resources, reads one, completes one."""
    with anyio.fail_after(LIMIT):
        async with recorded(commands[EVERYTHING]) as (session, _):
            capabilities = session.server_capabilities
            assert {"prompts", "resources", "completions", "logging"} <= set(
                capabilities
            )
            client = v2025_11_25.Client(session)

            prompts = await client.list_prompts()
            names = [prompt.name for prompt in prompts.prompts]
            assert {"simple-prompt", "args-prompt", "completable-prompt"} <= set(names)
            got = await client.get_prompt(name="simple-prompt")
            assert [m.content.text for m in got.messages] == [
                "This is a simple prompt without arguments."
            ]

            resources = await client.list_resources()
            by_uri = {resource.uri: resource for resource in resources.resources}
            uri = "demo://resource/static/document/architecture.md"
            assert by_uri[uri].name == "architecture.md"
            read = await client.read_resource(uri=uri)
            (contents,) = read.contents
            assert isinstance(contents, v2025_11_25.TextResourceContents)
            assert contents.uri == uri
            assert contents.mime_type == "text/markdown"
            assert contents.text.startswith("# Everything Server \u2013 Architecture")

            templates = await client.list_resource_templates()
            assert "demo://resource/dynamic/text/{resourceId}" in [
                t.uri_template for t in templates.resource_templates
            ]

            completed = await client.complete(
                ref=v2025_11_25.PromptReference(name="completable-prompt"),
                argument=v2025_11_25.CompleteRequestParamsArgument(
                    name="department", value="E"
                ),
            )
            assert completed.completion.values == ["Engineering"]

            # The 2026-07-28 client reads the same through conversion.
            modern = v2026_07_28.Client(session)
            listed = await modern.list_prompts()
            assert [prompt.name for prompt in listed.prompts] == names
            again = await modern.read_resource(uri=uri)
            assert again.contents[0].text == contents.text


# --------------------------------------------------------------------------
# 4. The era cache
# --------------------------------------------------------------------------


def probed_versions(recorder: Recorder) -> list[str]:
    """The protocol version of each `server/discover` probe sent."""
    return [
        request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        for request in recorder.sent_requests("server/discover")
    ]


def discover_result(recorder: Recorder) -> dict[str, Any]:
    """The (last) successful `server/discover` result received."""
    ids = {r["id"] for r in recorder.sent_requests("server/discover")}
    found = [
        m["result"]
        for m in recorder.received
        if isinstance(m, dict) and m.get("id") in ids and "result" in m
    ]
    return found[-1]


@pytest.mark.anyio
async def test_version_cache_is_shared_between_sessions(
    commands: dict[str, list[str]],
) -> None:
    """The Python SDK's discover result says `ttlMs: 0`, so the next session
    with the same cache_key probes again (and lands on the same version); a
    discover result cached as fresh is used without any probe at all."""
    cache = VersionCache()
    key = "python-sdk-echo"
    with anyio.fail_after(LIMIT):
        async with recorded(commands[PYTHON_SDK], versions=[MODERN, "draft"]) as (
            drafted,
            recorder,
        ):
            # Allowed the draft, the client probes it first; the SDK answers
            # -32022 listing what it speaks, then 2026-07-28 succeeds.
            assert drafted.protocol_version == MODERN
            assert probed_versions(recorder) == ["draft", MODERN]
            refusal = next(m for m in recorder.received if m.get("id") == 1)
            assert refusal["error"]["code"] == -32022
            assert refusal["error"]["data"] == {
                "supported": [MODERN],
                "requested": "draft",
            }
        async with recorded(commands[PYTHON_SDK], cache=cache, cache_key=key) as (
            first,
            recorder,
        ):
            # By default the draft is not spoken: one probe, at 2026-07-28.
            assert first.protocol_version == MODERN
            assert probed_versions(recorder) == [MODERN]
            discovered = discover_result(recorder)
            assert discovered["ttlMs"] == 0
            assert discovered["supportedVersions"] == [MODERN]
        assert cache.get(key) == (MODERN, None)

        async with recorded(commands[PYTHON_SDK], cache=cache, cache_key=key) as (
            second,
            recorder,
        ):
            assert second.protocol_version == MODERN
            # The cached version is probed first (its discover result expired).
            assert probed_versions(recorder) == [MODERN]
            assert "initialize" not in recorder.sent_methods()

        # As if the server had allowed caching: no probe, straight to work.
        fresh = json.dumps({**discovered, "ttlMs": 60_000}).encode()
        cache.put(key, MODERN, fresh, 60.0)
        async with recorded(commands[PYTHON_SDK], cache=cache, cache_key=key) as (
            third,
            recorder,
        ):
            assert third.protocol_version == MODERN
            assert third.era == "modern"
            assert third.server_info.name == "python-sdk-echo"
            assert "tools" in third.server_capabilities
            result = await v2026_07_28.Client(third).call_tool(
                name="echo", arguments={"message": MESSAGE}
            )
            assert texts(result) == [MESSAGE]
            assert recorder.sent_methods() == ["tools/call"]
            (call,) = recorder.sent_requests("tools/call")
            envelope = call["params"]["_meta"]
            assert envelope["io.modelcontextprotocol/protocolVersion"] == MODERN


@pytest.mark.anyio
async def test_version_cache_skips_the_probe_of_a_legacy_server(
    commands: dict[str, list[str]],
) -> None:
    """Once server-everything is known to speak 2025-11-25, no discover probe."""
    cache = VersionCache()
    key = "server-everything"
    with anyio.fail_after(LIMIT):
        async with recorded(commands[EVERYTHING], cache=cache, cache_key=key) as (
            first,
            recorder,
        ):
            assert first.protocol_version == "2025-11-25"
            assert recorder.sent_methods()[:2] == ["server/discover", "initialize"]
        async with recorded(commands[EVERYTHING], cache=cache, cache_key=key) as (
            second,
            recorder,
        ):
            assert second.protocol_version == "2025-11-25"
            assert recorder.sent_methods()[0] == "initialize"
            assert recorder.sent_requests("server/discover") == []
            result = await v2025_11_25.Client(second).call_tool(
                name="echo", arguments={"message": "cached"}
            )
            assert texts(result) == ["Echo: cached"]


# --------------------------------------------------------------------------
# 5. Server→client requests: sampling, elicitation, roots
# --------------------------------------------------------------------------


class AnsweringHandlers(v2025_11_25.ClientHandlers):
    """Answers the server's questions and remembers them."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    async def sampling_create_message(
        self, params: v2025_11_25.CreateMessageRequestParams
    ) -> v2025_11_25.CreateMessageResult:
        self.asked.append(("sampling", params))
        return v2025_11_25.CreateMessageResult(
            role="assistant",
            content=v2025_11_25.TextContent(text="forty-two"),
            model="test-model",
        )

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        self.asked.append(("elicitation", params))
        return v2025_11_25.ElicitResult(
            action="accept", content={"name": "Ada", "check": True}
        )

    async def roots_list(
        self, params: v2025_11_25.RequestParams
    ) -> v2025_11_25.ListRootsResult:
        self.asked.append(("roots", params))
        return v2025_11_25.ListRootsResult(
            roots=[v2025_11_25.Root(uri="file:///work/project", name="project")]
        )

    async def notifications_message(
        self, params: v2025_11_25.LoggingMessageNotificationParams
    ) -> None:
        self.asked.append(("log", params))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.asked if kind != "log"]


@pytest.mark.anyio
@pytest.mark.parametrize("negotiated", ["2025-11-25", "2025-06-18", "2024-11-05"])
async def test_server_everything_asks_the_client(
    commands: dict[str, list[str]], negotiated: str
) -> None:
    """The conditional tools appear for our declared capabilities, and each
    reports the answer our handlers gave."""
    handlers = AnsweringHandlers()
    with anyio.fail_after(LIMIT):
        async with recorded(
            commands[EVERYTHING], versions=[negotiated], handlers=[handlers]
        ) as (session, recorder):
            assert session.protocol_version == negotiated
            declared = recorder.sent_requests("initialize")[0]["params"]["capabilities"]
            elicits = negotiated != "2024-11-05"
            expected = {"sampling", "roots"} | ({"elicitation"} if elicits else set())
            assert set(declared) == expected

            client = session.package.Client(session)
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"trigger-sampling-request", "get-roots-list"} <= tools
            assert ("trigger-elicitation-request" in tools) == elicits

            sampled = await client.call_tool(
                name="trigger-sampling-request",
                arguments={"prompt": "meaning of life?"},
            )
            (text,) = texts(sampled)
            assert text.startswith("LLM sampling result: \n")
            assert json.loads(text.split("\n", 1)[1]) == {
                "model": "test-model",
                "role": "assistant",
                "content": {"type": "text", "text": "forty-two"},
            }
            _, params = next(a for a in handlers.asked if a[0] == "sampling")
            assert params.max_tokens == 100
            assert params.system_prompt == "You are a helpful test server."
            assert params.messages[0].content.text == (
                "Resource trigger-sampling-request context: meaning of life?"
            )

            rooted = await client.call_tool(name="get-roots-list", arguments={})
            assert texts(rooted)[0].startswith(
                "Current MCP Roots (1 total):\n\n1. project\n"
                "   URI: file:///work/project"
            )
            assert "roots" in handlers.kinds()

            if elicits:
                elicited = await client.call_tool(
                    name="trigger-elicitation-request", arguments={}
                )
                # The fields our handler left out get the schema's defaults
                # (SEP-1034); at 2025-06-18 the schema holds a 2025-11-25
                # multi-select field, which the handler still gets.
                assert texts(elicited)[:2] == [
                    "✅ User provided the requested information!",
                    "User inputs:\n- Name: Ada\n- Agreed to terms: true\n"
                    "- Favorite Integer: 42\n- Favorite Number: 3.14",
                ]
                _, params = next(a for a in handlers.asked if a[0] == "elicitation")
                assert params.message == (
                    "Please provide inputs for the following fields:"
                )
                assert params.requested_schema.required == ["name"]

            asked = set(recorder.received_requests())
            assert asked == {"sampling/createMessage", "roots/list"} | (
                {"elicitation/create"} if elicits else set()
            )


ASK_ALL = "Hello, Ada!\n" "test-model said: forty-two\n" "roots: file:///work/project"


@pytest.mark.anyio
@pytest.mark.parametrize("negotiated", ["2025-11-25", MODERN])
async def test_python_sdk_asks_the_client(
    commands: dict[str, list[str]], negotiated: str
) -> None:
    """Legacy: standalone server→client requests mid-call. 2026-07-28: an
    InputRequiredResult our client answers and retries, unseen by the caller."""
    handlers = AnsweringHandlers()
    with anyio.fail_after(LIMIT):
        async with recorded(
            commands["python-sdk-asking"], versions=[negotiated], handlers=[handlers]
        ) as (session, recorder):
            assert session.protocol_version == negotiated
            assert session.server_info.name == "python-sdk-asking"
            client = session.package.Client(session)

            named = await client.call_tool(name="ask_name", arguments={})
            assert texts(named) == ["Hello, Ada!"]
            assert named.is_error is False
            sampled = await client.call_tool(
                name="ask_llm", arguments={"prompt": "meaning of life?"}
            )
            assert texts(sampled) == ["test-model said: forty-two"]
            rooted = await client.call_tool(name="ask_roots", arguments={})
            assert texts(rooted) == ["roots: file:///work/project"]
            assert handlers.kinds() == ["elicitation", "sampling", "roots"]

            everything = await client.call_tool(
                name="ask_all", arguments={"prompt": "meaning of life?"}
            )
            assert texts(everything) == [ASK_ALL]
            assert sorted(handlers.kinds()[3:]) == ["elicitation", "roots", "sampling"]
            _, params = handlers.asked[1]
            assert params.messages[0].content.text == "meaning of life?"
            assert params.max_tokens == 50

            calls = recorder.sent_requests("tools/call")
            if negotiated == MODERN:
                # Each tool call went out twice: the first round was answered
                # InputRequiredResult, the retry carried our answers.
                assert recorder.received_requests() == []
                assert [c["params"]["name"] for c in calls] == [
                    "ask_name",
                    "ask_name",
                    "ask_llm",
                    "ask_llm",
                    "ask_roots",
                    "ask_roots",
                    "ask_all",
                    "ask_all",
                ]
                for first, retry in zip(calls[::2], calls[1::2], strict=True):
                    assert "inputResponses" not in first["params"]
                    assert retry["params"]["inputResponses"]
                    assert retry["params"]["requestState"]
                assert len(calls[-1]["params"]["inputResponses"]) == 3
                answers = list(calls[1]["params"]["inputResponses"].values())
                assert answers == [
                    {"action": "accept", "content": {"name": "Ada", "check": True}}
                ]
            else:
                assert len(calls) == 4
                assert recorder.received_requests() == [
                    "elicitation/create",
                    "sampling/createMessage",
                    "roots/list",
                    "elicitation/create",
                    "sampling/createMessage",
                    "roots/list",
                ]

"""`ServerSession`: version negotiation of a server, legacy and modern eras.

Both ends are `Connection`s over `memory_pair`; the server's handlers are the
echo handlers of `session_programs/echo_session.py` (2025-06-18, 2025-11-25,
2026-07-28) plus small ones declared here.
"""

from __future__ import annotations

import contextvars
import json
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.codec.wire import convert, to_builtins
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection, current_request
from mcp_specgen_runtime.protocol.session import (
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    PICK_ABOVE,
    UNSUPPORTED_PROTOCOL_VERSION,
    Revision,
    ServerConnection,
    ServerSession,
    derive_capabilities,
    probed_name,
    version_order,
)
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import draft, v2024_11_05, v2025_06_18, v2025_11_25, v2026_07_28
from tests.unit.runtime.session_programs.echo_session import (
    INSTRUCTIONS,
    NAME,
    VERSION,
    Echo0618,
    Echo1125,
    Echo2026,
    session,
)

LIMIT = 5.0
"""Seconds any one test may take."""
MODERN = "2026-07-28"
SERVER_INFO = {"name": NAME, "version": VERSION}
CLIENT_INFO = {"name": "session-tests", "version": "0.0.0"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def initialize_params(version: str = "2025-11-25") -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}


def envelope(version: str = MODERN, **params: Any) -> dict[str, Any]:
    """Params of a modern request: `params` plus the `_meta` envelope."""
    meta = {
        META_PROTOCOL_VERSION: version,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {**params, "_meta": meta}


ECHO = {"name": "echo", "arguments": {"message": "hi"}}


@asynccontextmanager
async def serving(
    served: ServerSession,
) -> AsyncGenerator[tuple[Connection, ServerConnection]]:
    """A client connection to one fresh connection of `served`."""
    client_end, server_end = memory_pair()
    handler = served.handler()
    with anyio.fail_after(LIMIT):
        async with (
            Connection(server_end, handler),
            Connection(client_end) as client,
        ):
            yield client, handler


async def call(client: Connection, method: str, params: Any = None) -> Any:
    return await client.request(method, params, Any)


async def refused(client: Connection, method: str, params: Any = None) -> RpcError:
    with pytest.raises(RpcError) as info:
        await call(client, method, params)
    return info.value


# --- construction ------------------------------------------------------------


def test_versions_are_sorted_and_split_by_era() -> None:
    served = ServerSession(
        [draft.ServerHandlers(), Echo2026(), Echo1125(), Echo0618()],
        name="n",
        version="v",
    )
    assert list(served.revisions) == ["2025-06-18", "2025-11-25", MODERN, "draft"]
    assert served.legacy_versions == ("2025-06-18", "2025-11-25")
    assert served.modern_versions == (MODERN, "draft")
    assert sorted(["draft", "2026-07-28", "2024-11-05"], key=version_order) == [
        "2024-11-05",
        "2026-07-28",
        "draft",
    ]


def test_bad_handler_sets_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ServerSession([], name="n", version="v")
    with pytest.raises(ValueError, match="two handlers for revision 2025-11-25"):
        ServerSession([Echo1125(), v2025_11_25.ServerHandlers()], name="n", version="v")
    with pytest.raises(TypeError, match="does not serve a server"):
        ServerSession([v2025_11_25.ClientHandlers()], name="n", version="v")
    with pytest.raises(TypeError, match="generated handler class"):
        ServerSession([object()], name="n", version="v")  # type: ignore[list-item]


def test_unknown_versions_are_rejected_before_any_is_built() -> None:
    with pytest.raises(ValueError, match="unknown protocol version '1999-01-01'"):
        ServerSession([Echo1125()], name="n", version="v", versions=["1999-01-01"])


def test_adapted_revisions_are_built_when_first_looked_up() -> None:
    served = ServerSession(
        [Echo1125(), Echo2026()],
        name="n",
        version="v",
        versions=["2024-11-05", "2025-11-25", MODERN, "draft"],
    )
    built = vars(served.revisions)["_built"]
    assert set(built) == {"2025-11-25", MODERN}
    assert len(served.revisions) == 4
    assert served.legacy_versions == ("2024-11-05", "2025-11-25")
    assert served.modern_versions == (MODERN, "draft")
    with pytest.raises(KeyError):
        served.revisions["2025-06-18"]  # not served, so never built
    oldest = served.revisions["2024-11-05"]
    assert oldest.package is v2024_11_05 and oldest.written_for is v2025_11_25
    assert served.revisions["2024-11-05"] is oldest
    served.prepare()
    assert set(built) == {"2024-11-05", "2025-11-25", MODERN, "draft"}
    assert served.revisions["draft"].written_for is v2026_07_28


def test_a_fresh_server_imports_only_its_handlers_revisions() -> None:
    """Start-up cost: the other revisions wait for a client that speaks them."""
    program = """
import sys
from mcp_specgen_runtime.protocol.session import ServerSession
from mcp_specgen_types import v2025_11_25
class Tools(v2025_11_25.ServerHandlers):
    async def tools_list(self, params):
        return v2025_11_25.ListToolsResult(tools=[])
served = ServerSession(
    [Tools()], name="n", version="v", versions=["2024-11-05", "2025-11-25"]
)
served.initialize_result("2025-11-25")
loaded = sorted(m for m in sys.modules if m.startswith("mcp_specgen_types.v"))
before = {m.split(".")[1] for m in loaded}
served.initialize_result("2024-11-05")
after = {m.split(".")[1] for m in sys.modules if m.startswith("mcp_specgen_types.v")}
print(sorted(before), sorted(after))
"""
    found = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("] [")
    before, after = found[0], found[1]
    assert "v2024_11_05" not in before and "v2026_07_28" not in before
    assert "v2025_11_25" in before and "v2024_11_05" in after


class Everything1125(v2025_11_25.ServerHandlers):
    async def prompts_list(self, params: Any) -> Any:
        raise AssertionError

    async def resources_read(self, params: Any) -> Any:
        raise AssertionError

    async def resources_subscribe(self, params: Any) -> Any:
        raise AssertionError

    async def logging_set_level(self, params: Any) -> Any:
        raise AssertionError

    async def completion_complete(self, params: Any) -> Any:
        raise AssertionError


class Everything2411(v2024_11_05.ServerHandlers):
    async def resources_list(self, params: Any) -> Any:
        raise AssertionError

    async def completion_complete(self, params: Any) -> Any:
        raise AssertionError


def test_capabilities_follow_the_implemented_methods() -> None:
    assert to_builtins(derive_capabilities(Revision.of(Echo1125()))) == {"tools": {}}
    assert to_builtins(derive_capabilities(Revision.of(Everything1125()))) == {
        "prompts": {},
        "resources": {"subscribe": True},
        "logging": {},
        "completions": {},
    }
    # 2024-11-05 has no `completions` capability.
    assert to_builtins(derive_capabilities(Revision.of(Everything2411()))) == {
        "resources": {}
    }
    assert to_builtins(derive_capabilities(Revision.of(Echo2026()))) == {"tools": {}}


# --- legacy era --------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("offered", "answered"),
    [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),  # not served: the newest legacy one
        ("2026-07-28", "2025-11-25"),  # modern versions are not reachable so
        ("1999-01-01", "2025-11-25"),
    ],
)
async def test_initialize_negotiates_the_version(offered: str, answered: str) -> None:
    async with serving(session()) as (client, connection):
        result = await call(client, "initialize", initialize_params(offered))
        assert result == {
            "protocolVersion": answered,
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }
        assert connection.era == "legacy"
        assert connection.protocol_version == answered
        assert connection.initialize_params.client_info.name == "session-tests"
        package = v2025_06_18 if answered == "2025-06-18" else v2025_11_25
        assert isinstance(connection.initialize_params, package.InitializeRequestParams)


@pytest.mark.anyio
async def test_initialize_without_instructions_omits_them() -> None:
    served = ServerSession([Echo0618()], name="n", version="v")
    async with serving(served) as (client, _):
        result = await call(client, "initialize", initialize_params())
        assert result == {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "n", "version": "v"},
        }


@pytest.mark.anyio
async def test_initialize_with_bad_params_is_invalid_params() -> None:
    async with serving(session()) as (client, connection):
        error = await refused(client, "initialize", {"protocolVersion": "2025-11-25"})
        assert error.code == ErrorCode.INVALID_PARAMS
        assert connection.era is None
        # The connection may still initialize properly.
        await call(client, "initialize", initialize_params())


@pytest.mark.anyio
async def test_requests_before_initialize_are_refused_but_ping() -> None:
    async with serving(session()) as (client, _):
        error = await refused(client, "tools/list")
        assert error.code == ErrorCode.INVALID_REQUEST
        assert "initialize" in error.message
        assert await call(client, "ping") == {}
        await client.notify("notifications/initialized", None)
        await call(client, "initialize", initialize_params())
        await client.notify("notifications/initialized", None)
        assert await call(client, "ping") == {}


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_legacy_requests_go_to_the_negotiated_revision(version: str) -> None:
    async with serving(session()) as (client, _):
        await call(client, "initialize", initialize_params(version))
        await client.notify("notifications/initialized", None)
        tools = await call(client, "tools/list")
        assert [tool["name"] for tool in tools["tools"]] == ["echo"]
        assert "resultType" not in tools
        result = await call(client, "tools/call", ECHO)
        assert result == {
            "content": [{"type": "text", "text": "hi"}],
            "isError": False,
            "structuredContent": {"result": "hi"},
        }


@pytest.mark.anyio
async def test_second_initialize_and_unknown_methods_are_refused() -> None:
    async with serving(session()) as (client, connection):
        await call(client, "initialize", initialize_params("2025-06-18"))
        error = await refused(client, "initialize", initialize_params("2025-11-25"))
        assert error.code == ErrorCode.INVALID_REQUEST
        assert connection.protocol_version == "2025-06-18"
        assert (await refused(client, "prompts/list")).code == -32601
        assert (await refused(client, "no/such/method")).code == -32601


@pytest.mark.anyio
async def test_legacy_connection_refuses_modern_requests() -> None:
    async with serving(session()) as (client, connection):
        await call(client, "initialize", initialize_params())
        error = await refused(client, "tools/list", envelope())
        assert error.code == ErrorCode.INVALID_REQUEST
        error = await refused(client, "server/discover", envelope())
        assert error.code == ErrorCode.INVALID_REQUEST
        assert connection.era == "legacy"
        assert (await call(client, "tools/call", ECHO))["content"][0]["text"] == "hi"


@pytest.mark.anyio
async def test_legacy_only_session_ignores_the_envelope() -> None:
    async with serving(session("2025-11-25")) as (client, _):
        # Like any legacy server: no discover, and initialize comes first.
        error = await refused(client, "server/discover", envelope())
        assert error.code == ErrorCode.INVALID_REQUEST
        await call(client, "initialize", initialize_params())
        result = await call(client, "tools/call", envelope(**ECHO))
        assert result["content"] == [{"type": "text", "text": "hi"}]
        assert "_meta" not in result


# --- modern era --------------------------------------------------------------


@pytest.mark.anyio
async def test_discover_is_answered_by_the_session() -> None:
    async with serving(session()) as (client, connection):
        result = await call(client, "server/discover", envelope())
        assert result == {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {}},
            "instructions": INSTRUCTIONS,
            "cacheScope": "public",
            "ttlMs": 0,
            "resultType": "complete",
            "_meta": {META_SERVER_INFO: SERVER_INFO},
        }
        assert connection.era == "modern"
        assert connection.protocol_version == MODERN
        convert(result, v2026_07_28.DiscoverResult)  # fits the revision's type


@pytest.mark.anyio
async def test_discover_lists_every_modern_version_and_honours_the_ttl() -> None:
    served = ServerSession(
        [Echo1125(), Echo2026(), draft.ServerHandlers()],
        name="n",
        version="v",
        discover_ttl_ms=60_000,
    )
    async with serving(served) as (client, _):
        result = await call(client, "server/discover", envelope("draft"))
        assert result["supportedVersions"] == [MODERN, "draft"]
        assert result["ttlMs"] == 60_000
        assert result["capabilities"] == {}
        assert "instructions" not in result


@pytest.mark.anyio
async def test_modern_requests_are_dispatched_and_stamped() -> None:
    async with serving(session()) as (client, _):
        tools = await call(client, "tools/list", envelope())
        assert [tool["name"] for tool in tools["tools"]] == ["echo"]
        assert tools["resultType"] == "complete"
        assert tools["_meta"] == {META_SERVER_INFO: SERVER_INFO}
        result = await call(client, "tools/call", envelope(**ECHO))
        assert result == {
            "content": [{"type": "text", "text": "hi"}],
            "isError": False,
            "structuredContent": {"result": "hi"},
            "resultType": "complete",
            "_meta": {META_SERVER_INFO: SERVER_INFO},
        }


class MetaEcho2026(v2026_07_28.ServerHandlers):
    async def tools_call(
        self, params: v2026_07_28.CallToolRequestParams
    ) -> v2026_07_28.CallToolResultResponseResult:
        return v2026_07_28.CallToolResult(
            content=[],
            meta=v2026_07_28.ResultMetaObject(
                server_info=v2026_07_28.Implementation(name="mine", version="0")
            ),
        )


@pytest.mark.anyio
async def test_stamping_keeps_the_other_meta_keys() -> None:
    served = ServerSession([MetaEcho2026()], name="n", version="v")
    async with serving(served) as (client, _):
        result = await call(client, "tools/call", envelope(**ECHO))
        # The session names itself; its identity wins over the handler's.
        assert result["_meta"] == {META_SERVER_INFO: {"name": "n", "version": "v"}}

    class Extra2026(v2026_07_28.ServerHandlers):
        async def tools_call(
            self, params: v2026_07_28.CallToolRequestParams
        ) -> v2026_07_28.CallToolResultResponseResult:
            return convert(
                {"content": [], "_meta": {"com.example/trace": "t1"}},
                v2026_07_28.CallToolResult,
            )

    served = ServerSession([Extra2026()], name="n", version="v")
    async with serving(served) as (client, _):
        result = await call(client, "tools/call", envelope(**ECHO))
        assert result["_meta"] == {
            "com.example/trace": "t1",
            META_SERVER_INFO: {"name": "n", "version": "v"},
        }


@pytest.mark.anyio
@pytest.mark.parametrize("requested", ["2025-11-25", "2030-01-01", "draft"])
async def test_unsupported_modern_version(requested: str) -> None:
    async with serving(session()) as (client, connection):
        for method in ("server/discover", "tools/list"):
            error = await refused(client, method, envelope(requested))
            assert error.code == UNSUPPORTED_PROTOCOL_VERSION
            assert error.message == "Unsupported protocol version"
            assert error.data == {"supported": [MODERN], "requested": requested}
        assert connection.era is None  # a refused request settles nothing
        await call(client, "initialize", initialize_params())


@pytest.mark.anyio
async def test_modern_unimplemented_method_is_method_not_found() -> None:
    async with serving(session()) as (client, _):
        error = await refused(client, "prompts/list", envelope())
        assert error.code == ErrorCode.METHOD_NOT_FOUND
        error = await refused(client, "no/such/method", envelope())
        assert error.code == ErrorCode.METHOD_NOT_FOUND


@pytest.mark.anyio
async def test_modern_connection_refuses_initialize_and_bare_requests() -> None:
    async with serving(session()) as (client, connection):
        await call(client, "server/discover", envelope())
        error = await refused(client, "initialize", initialize_params())
        assert error.code == UNSUPPORTED_PROTOCOL_VERSION
        assert error.data == {"supported": [MODERN], "requested": "2025-11-25"}
        error = await refused(client, "tools/list")
        assert error.code == ErrorCode.INVALID_PARAMS
        assert META_PROTOCOL_VERSION in error.message
        # A bare ping is a bare request too; 2026-07-28 has no ping at all.
        error = await refused(client, "ping")
        assert error.code == ErrorCode.INVALID_PARAMS
        error = await refused(client, "ping", envelope())
        assert error.code == ErrorCode.METHOD_NOT_FOUND
        assert connection.era == "modern"
        assert (await call(client, "tools/call", envelope(**ECHO)))["content"]


@pytest.mark.anyio
async def test_a_failed_discover_leaves_the_era_undecided() -> None:
    """A discover whose result cannot be built (-32603) decides nothing: the
    client's `initialize` fallback is served."""
    served = session()

    def discover_result(version: str) -> bytes:
        raise TypeError("cannot build the discover result")

    served.discover_result = discover_result  # type: ignore[method-assign]
    async with serving(served) as (client, connection):
        error = await refused(client, "server/discover", envelope())
        assert error.code == ErrorCode.INTERNAL_ERROR
        assert connection.era is None
        assert connection.protocol_version is None
        result = await call(client, "initialize", initialize_params())
        assert result["protocolVersion"] == "2025-11-25"
        assert connection.era == "legacy"


@pytest.mark.anyio
async def test_modern_only_session() -> None:
    async with serving(session(MODERN)) as (client, connection):
        error = await refused(client, "initialize", initialize_params())
        assert error.code == UNSUPPORTED_PROTOCOL_VERSION
        assert error.data == {"supported": [MODERN], "requested": "2025-11-25"}
        error = await refused(client, "tools/list")
        assert error.code == ErrorCode.INVALID_PARAMS
        assert connection.era is None
        result = await call(client, "tools/call", envelope(**ECHO))
        assert result["content"] == [{"type": "text", "text": "hi"}]


# --- both eras -----------------------------------------------------------------


@pytest.mark.anyio
async def test_one_session_serves_both_eras_on_separate_connections() -> None:
    served = session()
    async with serving(served) as (legacy, legacy_state):
        async with serving(served) as (modern, modern_state):
            await call(legacy, "initialize", initialize_params("2025-06-18"))
            await call(modern, "server/discover", envelope())
            legacy_echo = await call(legacy, "tools/call", ECHO)
            modern_echo = await call(modern, "tools/call", envelope(**ECHO))
            assert "_meta" not in legacy_echo
            assert modern_echo["_meta"] == {META_SERVER_INFO: SERVER_INFO}
            assert (legacy_state.era, legacy_state.protocol_version) == (
                "legacy",
                "2025-06-18",
            )
            assert (modern_state.era, modern_state.protocol_version) == (
                "modern",
                MODERN,
            )


@pytest.mark.anyio
async def test_restricting_revisions_restricts_negotiation() -> None:
    async with serving(session("2025-06-18", MODERN)) as (client, _):
        result = await call(client, "initialize", initialize_params("2025-11-25"))
        assert result["protocolVersion"] == "2025-06-18"
    async with serving(session("2025-11-25")) as (client, _):
        result = await call(client, "initialize", initialize_params("2025-06-18"))
        assert result["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize(
    "result",
    [b"{}", b"{ }", b'{"tools":[]}', b' {"a":{"b":[1,2]}} ', b'{"resultType":"x"}'],
)
def test_stamping_splices_or_rewrites_to_the_same_json(result: bytes) -> None:
    stamped = json.loads(session().stamp(result))
    expected = {"resultType": "complete", **json.loads(result)}
    expected["_meta"] = {META_SERVER_INFO: SERVER_INFO}
    assert stamped == expected


@pytest.mark.parametrize(
    "result", [b'{"n":1.0e5}', b'{"resultType":"complete","n":1.0e5}']
)
def test_stamping_keeps_the_handlers_bytes_when_meta_is_absent(result: bytes) -> None:
    # Spliced, not decoded and encoded again (which would write 100000.0).
    stamped = session().stamp(result)
    assert stamped.endswith(b'"n":1.0e5}')
    assert json.loads(stamped)["resultType"] == "complete"


@pytest.mark.parametrize(
    "result", [b'{"_meta":null}', b'{"resultType":null}', b'{"_meta":{"k":1}}']
)
def test_stamping_never_repeats_a_member(result: bytes) -> None:
    stamped = session().stamp(result)
    assert stamped.count(b'"_meta"') == 1
    assert stamped.count(b'"resultType"') == 1
    assert json.loads(stamped)["_meta"][META_SERVER_INFO] == SERVER_INFO


# --- params that cannot be decoded -----------------------------------------------


async def exchange(served: ServerSession, *lines: bytes) -> list[Any]:
    """Send raw lines one at a time to a fresh connection; the replies."""
    client_end, server_end = memory_pair()
    replies: list[Any] = []
    with anyio.fail_after(LIMIT):
        async with Connection(server_end, served.handler()):
            for line in lines:
                await client_end.send(line)
                replies.append(json.loads(await client_end.receive()))
            await client_end.aclose()
    return replies


def initialize_line(version: str) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": initialize_params(version),
    }
    return json.dumps(message).encode()


BAD_PARAMS = [
    b'{"name":"echo","arguments":{"message":"\xff"}}',
    b'{"name":"\xff"}',
    b'{"name":"echo","_meta":{"\xff":1}}',
    b'{"name":"echo","_meta":{"progressToken":1.5}}',
    b'{"name":"echo","_meta":{"progressToken":{"a":1}}}',
    b'{"name":"echo","arguments":{"n":1e400}}',
]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
@pytest.mark.anyio
async def test_params_that_cannot_be_decoded_are_invalid_params(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = ServerSession(
        [Echo1125()],
        name=NAME,
        version=VERSION,
        versions=["2024-11-05", "2025-03-26", "2025-11-25"],
    )
    calls = [
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' % (n, params)
        for n, params in enumerate(BAD_PARAMS, 1)
    ]
    _, *replies = await exchange(served, initialize_line(version), *calls)
    assert [(r["id"], r["error"]["code"]) for r in replies] == [
        (n, -32602) for n in range(1, len(BAD_PARAMS) + 1)
    ]
    assert not any(record.exc_info for record in caplog.records)


@pytest.mark.anyio
async def test_a_modern_envelope_that_cannot_be_decoded_is_invalid_params() -> None:
    version = b'"%s":"%s"' % (META_PROTOCOL_VERSION.encode(), MODERN.encode())
    meta = b'{%s,"x":"\xff"}' % version
    discover = (
        b'{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{%s}}}'
    )
    _, *replies = await exchange(
        session(),
        discover % version,
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":%s}}' % meta,
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"\xff":1}}}',
    )
    assert [(r["id"], r["error"]["code"]) for r in replies] == [
        (1, -32602),
        (2, -32602),
    ]


# --- what the session reads once for the engine ---------------------------------


@pytest.mark.anyio
async def test_the_progress_token_comes_from_the_session_s_own_look_at_params() -> None:
    """The session decodes `_meta` anyway and hands the engine the token, so
    a key spelled with a JSON escape counts like any other (the engine's own
    byte scan would miss it)."""
    seen: list[Any] = []

    class Tokens(v2025_11_25.ServerHandlers):
        async def tools_list(self, params: Any) -> Any:
            from mcp_specgen_runtime.jsonrpc import current_request

            seen.append(current_request().progress_token)
            return v2025_11_25.ListToolsResult(tools=[])

    served = ServerSession([Tokens()], name=NAME, version=VERSION)
    escaped = b'{"_meta":{"progress\\u0054oken":"tok"}}'
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":%s}' % escaped,
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{}}}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/list",'
        b'"params":{"_meta":{"progressToken":7}}}',
    ]
    await exchange(served, initialize_line("2025-11-25"), *lines)
    assert seen == ["tok", None, 7]


@pytest.mark.anyio
async def test_large_params_are_probed_like_small_ones() -> None:
    """Past `PICK_ABOVE` bytes the session decodes only the members it
    probes (picked out of the params): same token, same refusals."""
    seen: list[Any] = []

    class Tokens(v2025_11_25.ServerHandlers):
        async def tools_list(self, params: Any) -> Any:
            seen.append(current_request().progress_token)
            return v2025_11_25.ListToolsResult(tools=[])

    served = ServerSession([Tokens()], name=NAME, version=VERSION)
    pad = b'"' + b"x" * (PICK_ABOVE + 1) + b'"'
    line = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}'
    _, *replies = await exchange(
        served,
        initialize_line("2025-11-25"),
        line % (1, b'{"pad":{"a":[%s]},"_meta":{"progress\\u0054oken":"t"}}' % pad),
        line % (2, b'{"_meta":{"progressToken":7},"pad":%s}' % pad),
        line % (3, b'{"pad":%s,"_meta":{"\xff":1}}' % pad),
    )
    assert seen == ["t", 7]
    assert [(r["id"], "error" in r) for r in replies] == [
        (1, False),
        (2, False),
        (3, True),
    ]
    assert replies[2]["error"]["code"] == -32602


@pytest.mark.anyio
async def test_a_handler_finds_the_name_the_session_read_in_its_params() -> None:
    seen: list[Any] = []

    class Names(v2025_11_25.ServerHandlers):
        async def tools_list(self, params: Any) -> Any:
            request = current_request()
            assert isinstance(request.connection, Connection)
            raw = request_params.get()
            copy = bytes(bytearray(raw or b""))
            seen.append((probed_name(raw), probed_name(copy)))
            return v2025_11_25.ListToolsResult(tools=[])

    served = ServerSession([Names()], name=NAME, version=VERSION)
    handler = served.handler()
    request_params: contextvars.ContextVar[bytes | None] = contextvars.ContextVar("p")

    async def keep_params(method: str, params: bytes | None) -> bytes | None:
        request_params.set(params)
        return await handler(method, params)

    client_end, server_end = memory_pair()
    lines = [
        initialize_line("2025-11-25"),
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"n"}}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}',
    ]
    with anyio.fail_after(LIMIT):
        async with Connection(server_end, keep_params):
            for line in lines:
                await client_end.send(line)
                await client_end.receive()
            await client_end.aclose()
    # Known for the very params served, not for equal bytes elsewhere.
    assert seen == [((True, "n"), (False, None)), ((True, None), (False, None))]

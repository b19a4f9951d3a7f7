"""`ClientGroup`: several servers behind one object, names per server, calls routed.

Most tests use `FakeClient`, which implements `GroupMember` in memory and holds
a real anyio task group between enter and exit (as `Client` does), so the
group must exit each member in the task that entered it. The last tests use
real servers: `App`s in memory, given as targets or as `Client`s.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskGroup

from mcp_specgen_runtime import encode, extra, with_extra
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.client import Client, ClientGroup, GroupError, RoutingError
from mcp_specgen_types import latest

LIMIT = 5.0

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeClient:
    """A `GroupMember` answering from plain data and recording what it got."""

    def __init__(
        self,
        tools: tuple[str, ...] = (),
        prompts: tuple[str, ...] = (),
        resources: tuple[str, ...] = (),
        *,
        fail_enter: Exception | None = None,
        fail_listing: Exception | None = None,
        barrier: Barrier | None = None,
        crash: anyio.Event | None = None,
    ) -> None:
        self.tools = tools
        self.prompts = prompts
        self.resources = resources
        self.fail_enter = fail_enter
        self.fail_listing = fail_listing
        self.barrier = barrier
        self.crash = crash
        self.calls: list[tuple[Any, ...]] = []
        self.state = "new"
        self.exit_exc: BaseException | None = None
        self._tasks: TaskGroup | None = None

    async def __aenter__(self) -> FakeClient:
        if self.barrier is not None:
            await self.barrier.wait()
        if self.fail_enter is not None:
            raise self.fail_enter
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()  # exited in __aexit__: same task or error
        if self.crash is not None:
            self._tasks.start_soon(self._die, self.crash)
        self.state = "open"
        return self

    async def _die(self, crash: anyio.Event) -> None:
        await crash.wait()
        raise ConnectionResetError("the server went away")

    async def __aexit__(self, *exc: Any) -> None:
        assert self._tasks is not None
        self.state = "closed"
        self.exit_exc = exc[1]
        await self._tasks.__aexit__(*exc)

    def _tool(self, name: str) -> latest.Tool:
        return latest.Tool(
            name=name,
            input_schema=latest.ToolInputSchema(
                type="object", properties={"q": {"type": "string"}}, required=["q"]
            ),
        )

    async def list_tools(self) -> latest.ListToolsResult:
        return latest.ListToolsResult(
            tools=[self._tool(n) for n in self.tools], cache_scope="public", ttl_ms=0
        )

    async def list_all_tools(self) -> list[latest.Tool]:
        if self.fail_listing is not None:
            raise self.fail_listing
        return [self._tool(n) for n in self.tools]

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - recorded only
    ) -> latest.CallToolResult:
        self.calls.append(("call_tool", name, arguments, timeout))
        return latest.CallToolResult(content=[latest.TextContent(text=name)])

    async def list_all_prompts(self) -> list[latest.Prompt]:
        if self.fail_listing is not None:
            raise self.fail_listing
        return [latest.Prompt(name=n) for n in self.prompts]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> latest.GetPromptResult:
        self.calls.append(("get_prompt", name, arguments))
        return latest.GetPromptResult(messages=[], description=name)

    async def list_all_resources(self) -> list[latest.Resource]:
        if self.fail_listing is not None:
            raise self.fail_listing
        return [
            latest.Resource(uri=u, name=u.rsplit("/", 1)[-1]) for u in self.resources
        ]

    async def read_resource(self, uri: str) -> latest.ReadResourceResult:
        self.calls.append(("read_resource", uri))
        return latest.ReadResourceResult(
            contents=[latest.TextResourceContents(uri=uri, text="x")],
            cache_scope="public",
            ttl_ms=0,
        )


class Barrier:
    """Lets waiters through only once `parties` of them are waiting at once."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.open = anyio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived == self.parties:
            self.open.set()
        await self.open.wait()


# --------------------------------------------------------------------------
# Names per server, calls routed
# --------------------------------------------------------------------------


async def test_tools_are_named_per_server_and_calls_routed() -> None:
    a, b = FakeClient(tools=("search", "read")), FakeClient(tools=("search",))
    with anyio.fail_after(LIMIT):
        async with ClientGroup({"web": a, "docs": b}) as group:
            tools = await group.list_all_tools()
            assert [t.name for t in tools] == ["web_search", "web_read", "docs_search"]
            # The renamed tools are still whole tools of the newest revision.
            assert tools[2].input_schema.properties == {"q": {"type": "string"}}
            result = await group.call_tool("docs_search", {"q": "x"}, timeout=3.0)
            assert result.content == [latest.TextContent(text="search")]
    assert b.calls == [("call_tool", "search", {"q": "x"}, 3.0)]
    assert a.calls == []


async def test_a_call_before_any_listing_lists_once_then_routes() -> None:
    a = FakeClient(tools=("echo",))
    with anyio.fail_after(LIMIT):
        async with ClientGroup({"a": a}) as group:
            await group.call_tool("a_echo")
            with pytest.raises(RoutingError, match="no server has a tool named 'echo'"):
                await group.call_tool("echo")
    assert a.calls == [("call_tool", "echo", None, None)]


async def test_prompts_are_named_per_server_and_routed() -> None:
    a, b = FakeClient(prompts=("greet",)), FakeClient(prompts=("greet", "bye"))
    with anyio.fail_after(LIMIT):
        async with ClientGroup({"a": a, "b": b}, separator=".") as group:
            prompts = await group.list_all_prompts()
            assert [p.name for p in prompts] == ["a.greet", "b.greet", "b.bye"]
            got = await group.get_prompt("b.greet", {"who": "me"})
            assert got.description == "greet"
    assert b.calls == [("get_prompt", "greet", {"who": "me"})]


async def test_resources_keep_their_uris_and_reads_go_to_the_lister() -> None:
    a = FakeClient(resources=("file:///a.txt", "file:///shared"))
    b = FakeClient(resources=("mem://b", "file:///shared"))
    with anyio.fail_after(LIMIT):
        async with ClientGroup({"a": a, "b": b}) as group:
            resources = await group.list_all_resources()
            assert [(r.uri, r.name) for r in resources] == [
                ("file:///a.txt", "a_a.txt"),
                ("file:///shared", "a_shared"),
                ("mem://b", "b_b"),
                ("file:///shared", "b_shared"),
            ]
            await group.read_resource("mem://b")
            with pytest.raises(RoutingError, match=r"servers \['a', 'b'\] listed"):
                await group.read_resource("file:///shared")
            await group.read_resource("file:///shared", server="a")
            with pytest.raises(RoutingError, match="no server listed"):
                await group.read_resource("file:///template/1")
            await group.read_resource("file:///template/1", server="b")
    assert a.calls == [("read_resource", "file:///shared")]
    assert b.calls == [
        ("read_resource", "mem://b"),
        ("read_resource", "file:///template/1"),
    ]


async def test_two_servers_giving_one_name_are_refused_not_overwritten() -> None:
    members = {"a_b": FakeClient(tools=("c",)), "a": FakeClient(tools=("b_c",))}
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members) as group:
            with pytest.raises(RoutingError, match="'a_b_c' names both 'c' of server"):
                await group.list_all_tools()
        async with ClientGroup(members, separator="__") as group:
            names = [t.name for t in await group.list_all_tools()]
            assert names == ["a_b__c", "a__b_c"]


async def test_a_renamed_tool_keeps_its_unknown_keys() -> None:
    class WithExtra(FakeClient):
        async def list_all_tools(self) -> list[latest.Tool]:
            tool = latest.Tool(
                name="t", input_schema=latest.ToolInputSchema(type="object")
            )
            return [with_extra(tool, {"x-vendor": 1})]  # type: ignore[list-item]

    with anyio.fail_after(LIMIT):
        async with ClientGroup({"s": WithExtra()}) as group:
            (tool,) = await group.list_all_tools()
    assert extra(tool) == {"x-vendor": 1}
    assert json.loads(encode(tool)) == {
        "name": "s_t",
        "inputSchema": {"type": "object"},
        "x-vendor": 1,
    }


# --------------------------------------------------------------------------
# Connecting: all at once; failures reported, fail fast or partial
# --------------------------------------------------------------------------


async def test_servers_connect_concurrently_and_close_in_their_own_tasks() -> None:
    barrier = Barrier(3)  # one member at a time would wait here forever
    members = {n: FakeClient(tools=("t",), barrier=barrier) for n in "xyz"}
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members) as group:
            assert group.servers == ("x", "y", "z")
            assert {m.state for m in members.values()} == {"open"}
            assert group["y"] is members["y"]
    assert {m.state for m in members.values()} == {"closed"}


async def test_by_default_any_failure_closes_the_rest_and_names_every_failure() -> None:
    good = FakeClient(tools=("t",))
    members = {
        "good": good,
        "gone": FakeClient(fail_enter=FileNotFoundError("no such command: srv")),
        "down": FakeClient(fail_enter=ConnectionRefusedError("127.0.0.1:9")),
    }
    with anyio.fail_after(LIMIT):
        with pytest.raises(GroupError) as caught:
            async with ClientGroup(members):
                pytest.fail("opened although two servers failed")
    assert set(caught.value.failures) == {"gone", "down"}
    assert isinstance(caught.value.failures["gone"], FileNotFoundError)
    message = str(caught.value)
    assert "'gone': FileNotFoundError('no such command: srv')" in message
    assert "'down': ConnectionRefusedError" in message
    assert good.state == "closed"


async def test_partial_opens_with_the_servers_that_connected() -> None:
    members = {
        "good": FakeClient(tools=("t",)),
        "bad": FakeClient(fail_enter=TimeoutError("no answer to initialize")),
    }
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members, partial=True) as group:
            assert group.servers == ("good",)
            assert set(group.failures) == {"bad"}
            assert [t.name for t in await group.list_all_tools()] == ["good_t"]
            with pytest.raises(KeyError):
                group["bad"]
    assert members["good"].state == "closed"


async def test_partial_with_no_server_connected_fails() -> None:
    members = {"bad": FakeClient(fail_enter=OSError("boom"))}
    with anyio.fail_after(LIMIT):
        with pytest.raises(GroupError, match="'bad': OSError"):
            async with ClientGroup(members, partial=True):
                pytest.fail("opened with no server")


async def test_a_listing_that_fails_names_the_server() -> None:
    members = {
        "ok": FakeClient(tools=("t",)),
        "broken": FakeClient(fail_listing=RuntimeError("500")),
    }
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members) as group:
            with pytest.raises(GroupError, match="listing tools failed: 'broken'"):
                await group.list_all_tools()
            # The other server keeps serving.
            await group["ok"].call_tool("t")


async def test_calls_route_by_the_listings_that_succeeded() -> None:
    """A server whose listing fails keeps no other server from its calls;
    a name no listing gave names the listings that failed."""
    a = FakeClient(tools=("x",), prompts=("p",), resources=("mem://a",))
    members = {"a": a, "b": FakeClient(fail_listing=TimeoutError("tools/list"))}
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members, partial=True) as group:
            await group.call_tool("a_x")
            await group.get_prompt("a_p")
            await group.read_resource("mem://a")
            with pytest.raises(GroupError, match="'b': TimeoutError") as caught:
                await group.call_tool("b_y")
            assert "no server listed a tool named 'b_y'" in str(caught.value)
            assert set(caught.value.failures) == {"b"}
            with pytest.raises(GroupError, match="'b': TimeoutError"):
                await group.read_resource("mem://b")
    assert a.calls == [
        ("call_tool", "x", None, None),
        ("get_prompt", "p", None),
        ("read_resource", "mem://a"),
    ]


async def test_a_failed_listing_keeps_the_names_its_server_listed_before() -> None:
    a, b = FakeClient(tools=("x",)), FakeClient(tools=("y",))
    with anyio.fail_after(LIMIT):
        async with ClientGroup({"a": a, "b": b}) as group:
            await group.list_all_tools()
            b.fail_listing = TimeoutError("tools/list")
            with pytest.raises(GroupError, match="no server listed a tool named"):
                await group.call_tool("a_z")  # unknown: lists again
            await group.call_tool("b_y")
    assert b.calls == [("call_tool", "y", None, None)]


async def test_a_server_that_dies_leaves_the_group_and_the_others_serve() -> None:
    crash = anyio.Event()
    members = {
        "ok": FakeClient(tools=("t",)),
        "dying": FakeClient(tools=("t",), crash=crash),
    }
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members) as group:
            assert len(await group.list_all_tools()) == 2
            crash.set()
            while "dying" in group.servers:  # a few checkpoints: the exit unwinds
                await anyio.lowlevel.checkpoint()
            assert group.servers == ("ok",)
            assert isinstance(group.failures["dying"], ExceptionGroup)
            with pytest.raises(GroupError, match="'dying' is not connected"):
                await group.call_tool("dying_t")
            await group.call_tool("ok_t")
            assert [t.name for t in await group.list_all_tools()] == ["ok_t"]
    assert members["ok"].calls == [("call_tool", "t", None, None)]


async def test_an_error_in_the_body_closes_every_server_gracefully() -> None:
    """The members exit as after a normal body (not cancelled mid-close), and
    the error propagates as it was raised."""
    members = {n: FakeClient() for n in "ab"}
    with anyio.fail_after(LIMIT):
        with pytest.raises(ValueError, match="in the body"):
            async with ClientGroup(members):
                raise ValueError("in the body")
    assert [(m.state, m.exit_exc) for m in members.values()] == [("closed", None)] * 2


def test_a_group_needs_named_servers() -> None:
    with pytest.raises(ValueError, match="at least one server"):
        ClientGroup({})
    with pytest.raises(ValueError, match="must not be empty"):
        ClientGroup({"": FakeClient()})


# --------------------------------------------------------------------------
# Real sessions: two Apps in memory
# --------------------------------------------------------------------------


def app_named(name: str) -> App:
    app = App(name, version="1.0.0")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message with the server's name."""
        return f"{name}: {message}"

    @app.prompt()
    def hello(who: str) -> str:
        """Say hello."""
        return f"hello {who} from {name}"

    @app.resource(f"mem://{name}/readme", name="readme")
    def readme() -> str:
        return f"readme of {name}"

    return app


async def test_targets_are_given_clients_with_the_options() -> None:
    """Values that are no `GroupMember` are targets: each gets a `Client`
    made with `client_options`; a `Client` given is used as it is."""
    given = Client(app_named("given"), versions=["2025-11-25"])
    targets: dict[str, App | Client] = {
        "a": app_named("a"),
        "b": app_named("b"),
        "given": given,
    }
    with anyio.fail_after(LIMIT):
        async with ClientGroup(
            targets, client_options={"versions": ["2026-07-28"], "name": "grouped"}
        ) as group:
            assert group["given"] is given
            made = [group[name] for name in ("a", "b")]
            assert all(isinstance(m, Client) for m in made)
            assert [m.protocol_version for m in made if isinstance(m, Client)] == [
                "2026-07-28",
                "2026-07-28",
            ]
            assert given.protocol_version == "2025-11-25"
            tools = [t.name for t in await group.list_all_tools()]
            assert tools == ["a_echo", "b_echo", "given_echo"]
            result = await group.call_tool("b_echo", {"message": "hi"}, timeout=5)
            assert result.content == [latest.TextContent(text="b: hi")]


def test_client_options_are_checked_when_the_group_is_made() -> None:
    with pytest.raises(TypeError, match="no_such_option"):
        ClientGroup({"a": app_named("a")}, client_options={"no_such_option": 1})


async def test_two_apps_of_different_eras_in_one_group() -> None:
    members = {
        "new": Client(app_named("new"), versions=["2026-07-28"]),
        "old": Client(app_named("old"), versions=["2025-11-25"]),
    }
    with anyio.fail_after(LIMIT):
        async with ClientGroup(members) as group:
            tools = await group.list_all_tools()
            assert [t.name for t in tools] == ["new_echo", "old_echo"]
            for tool in tools:
                assert isinstance(tool, latest.Tool)
                assert tool.input_schema.required == ["message"]
            result = await group.call_tool("old_echo", {"message": "hi"})
            assert result.content == [latest.TextContent(text="old: hi")]
            prompt = await group.get_prompt("new_hello", {"who": "me"})
            assert "hello me from new" in encode(prompt).decode()
            resources = await group.list_all_resources()
            assert [(r.uri, r.name) for r in resources] == [
                ("mem://new/readme", "new_readme"),
                ("mem://old/readme", "old_readme"),
            ]
            read = await group.read_resource("mem://old/readme")
            assert "readme of old" in encode(read).decode()

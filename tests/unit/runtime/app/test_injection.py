"""Dependency injection into tools, prompts and resources (`injection.py`):
what is injected stays out of the schema and of the client's arguments, and
each kind of dependency gives its value (and cleans up) once per call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App, Context, Depends, HttpInfo, Lifespan
from mcp_specgen_runtime.errors import ErrorCode, RpcError

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class State:
    """What the test lifespan yields."""

    name: str
    events: list[str] = field(default_factory=list[str])


EVENTS: list[str] = []


@asynccontextmanager
async def lifespan(app: App) -> AsyncIterator[State]:
    yield State("pool", EVENTS)


def plain_number() -> int:
    EVENTS.append("plain")
    return 7


async def async_name(ctx: Context[State]) -> str:
    return f"async {ctx.lifespan.name}"


def sync_resource() -> Iterator[str]:
    EVENTS.append("sync open")
    yield "sync res"
    EVENTS.append("sync close")


async def db(state: Annotated[State, Lifespan]) -> AsyncIterator[str]:
    EVENTS.append("db open")
    try:
        yield f"db of {state.name}"
    except RuntimeError as exc:
        EVENTS.append(f"db saw {exc}")
        raise
    finally:
        EVENTS.append("db close")


def session_of(conn: Annotated[str, Depends(db)], number: int = 1) -> str:
    return f"session on {conn} #{number}"


def counter() -> object:
    return object()


class Greeter:
    """A class as a dependency: its `__init__` parameters are injected."""

    def __init__(self, state: Annotated[State, Lifespan]) -> None:
        self.greeting = f"hello from {state.name}"


class Shout:
    """A callable object as a dependency: its `__call__` parameters are."""

    async def __call__(self, greeter: Annotated[Greeter, Depends(Greeter)]) -> str:
        return greeter.greeting.upper()


def tenant(ctx: Context) -> str:
    """Refuses every call: a dependency may answer with a JSON-RPC error."""
    raise RpcError(ErrorCode.INVALID_PARAMS, "no tenant in this request")


def text(result: Any) -> str:
    return result.content[0].text


def app_with_tools() -> App:
    app = App("inject", lifespan=lifespan)

    @app.tool()
    def everything(
        x: int,
        ctx: Context[State],
        state: Annotated[State, Lifespan],
        number: Annotated[int, Depends(plain_number)],
        name: Annotated[str, Depends(async_name)],
        res: Annotated[str, Depends(sync_resource)],
        conn: Annotated[str, Depends(db)],
        http: HttpInfo | None,
    ) -> str:
        """Show every injected value."""
        assert ctx.lifespan is state
        return f"{x} {state.name} {number} {name} {res} {conn} {http}"

    @app.tool()
    async def failing(conn: Annotated[str, Depends(db)]) -> str:
        raise RuntimeError("tool broke")

    @app.tool()
    async def shared(
        a: Annotated[str, Depends(db)], b: Annotated[str, Depends(session_of)]
    ) -> str:
        return f"{a} | {b}"

    @app.tool()
    async def fresh(
        a: Annotated[object, Depends(counter, cache=False)],
        b: Annotated[object, Depends(counter, cache=False)],
        c: Annotated[object, Depends(counter)],
        d: Annotated[object, Depends(counter)],
    ) -> str:
        return f"{a is b} {c is d}"

    @app.tool()
    def needs_http(http: HttpInfo) -> str:
        return str(http)

    @app.tool()
    def plain(message: str) -> str:
        return message

    @app.tool()
    def objects(
        greeter: Annotated[Greeter, Depends(Greeter)],
        shout: Annotated[str, Depends(Shout())],
    ) -> str:
        return f"{greeter.greeting} / {shout}"

    @app.tool()
    def guarded(who: Annotated[str, Depends(tenant)]) -> str:
        return who

    return app


@pytest.mark.anyio
async def test_injected_parameters_stay_out_of_the_input_schema() -> None:
    app = app_with_tools()
    schema = app.tools["everything"].input_schema
    assert schema["properties"].keys() == {"x"}
    assert schema["required"] == ["x"]
    with anyio.fail_after(LIMIT):
        async with Client(app) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
    assert listed["everything"].input_schema.properties == {"x": {"type": "integer"}}


def test_a_function_without_injection_has_no_plan() -> None:
    app = app_with_tools()
    assert app.tools["plain"].injection is None
    assert app.tools["everything"].injection is not None


@pytest.mark.anyio
async def test_every_kind_of_injection_gives_its_value() -> None:
    EVENTS.clear()
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            result = await client.call_tool("everything", {"x": 1})
    assert text(result) == "1 pool 7 async pool sync res db of pool None"
    assert EVENTS == ["plain", "sync open", "db open", "db close", "sync close"]


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["ctx", "state", "number", "conn", "http"])
async def test_an_argument_named_like_an_injected_one_is_an_unknown_argument(
    name: str,
) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            injected = await client.call_tool("everything", {"x": 1, name: "x"})
            unknown = await client.call_tool("everything", {"x": 1, "zzz": "x"})
    assert injected.is_error and unknown.is_error
    assert text(injected) == text(unknown).replace("zzz", name)
    assert f"unknown field `{name}`" in text(injected)


@pytest.mark.anyio
async def test_a_generator_dependency_sees_the_tools_error_and_cleans_up() -> None:
    EVENTS.clear()
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            result = await client.call_tool("failing", {})
    assert result.is_error and "tool broke" in text(result)
    assert EVENTS == ["db open", "db saw tool broke", "db close"]


@pytest.mark.anyio
async def test_a_dependency_runs_once_per_call_unless_cache_is_off() -> None:
    EVENTS.clear()
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            result = await client.call_tool("shared", {})
            fresh = await client.call_tool("fresh", {})
    # `session_of` asks for `db` too: one opening serves both.
    assert text(result) == "db of pool | session on db of pool #1"
    assert EVENTS == ["db open", "db close"]
    assert text(fresh) == "False True"


@pytest.mark.anyio
async def test_classes_and_callable_objects_are_dependencies_too() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            result = await client.call_tool("objects", {})
    assert text(result) == "hello from pool / HELLO FROM POOL"


@pytest.mark.anyio
async def test_a_dependency_raising_an_rpc_error_answers_the_call_with_it() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            with pytest.raises(RpcError, match="no tenant") as caught:
                await client.call_tool("guarded", {})
            assert caught.value.code == ErrorCode.INVALID_PARAMS
            assert text(await client.call_tool("plain", {"message": "on"})) == "on"


@pytest.mark.anyio
async def test_a_call_not_over_http_is_refused_by_a_plain_httpinfo() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(app_with_tools()) as client:
            result = await client.call_tool("needs_http", {})
    assert result.is_error
    assert "did not come over HTTP" in text(result)


def needs_value(value: int) -> int:
    return value


def loop(value: Annotated[int, Depends(round_the_loop)]) -> int:
    return value


def round_the_loop(value: Annotated[int, Depends(loop)]) -> int:
    return value


def test_a_dependency_parameter_nothing_fills_is_refused_at_registration() -> None:
    app = App("bad")
    with pytest.raises(TypeError, match="parameter 'value' of dependency"):

        @app.tool()
        def tool(v: Annotated[int, Depends(needs_value)]) -> str:
            return str(v)


def test_a_dependency_depending_on_itself_is_refused_at_registration() -> None:
    app = App("bad")
    with pytest.raises(TypeError, match="depends on itself"):

        @app.tool()
        def tool(v: Annotated[int, Depends(loop)]) -> str:
            return str(v)


def test_a_depends_of_something_not_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="callable"):
        Depends(3)  # type: ignore[arg-type]


def test_a_template_variable_cannot_be_an_injected_parameter() -> None:
    app = App("bad")
    with pytest.raises(ValueError, match="no parameter for"):

        @app.resource("notes://{ctx}")
        def note(ctx: Context) -> str:
            return ""


def prompt_and_resource_app() -> App:
    app = App("inject", lifespan=lifespan)

    @app.prompt()
    def greet(
        who: str, state: Annotated[State, Lifespan], conn: Annotated[str, Depends(db)]
    ) -> str:
        return f"hello {who} from {state.name} via {conn}"

    @app.resource("info://state")
    async def info(ctx: Context[State]) -> str:
        return f"state {ctx.lifespan.name}"

    @app.resource("notes://{note}")
    def note(note: str, conn: Annotated[str, Depends(db)]) -> str:
        return f"{note} from {conn}"

    return app


@pytest.mark.anyio
async def test_prompts_and_resources_get_injected_values() -> None:
    EVENTS.clear()
    app = prompt_and_resource_app()
    assert [a["name"] for a in app.prompts["greet"].listing["arguments"]] == ["who"]
    with anyio.fail_after(LIMIT):
        async with Client(app) as client:
            prompt = await client.get_prompt("greet", {"who": "ann"})
            info = await client.read_resource("info://state")
            note = await client.read_resource("notes://n1")
            with pytest.raises(RpcError, match=r"unknown arguments \['conn'\]"):
                await client.get_prompt("greet", {"who": "ann", "conn": "x"})
    assert prompt.messages[0].content.text == "hello ann from pool via db of pool"
    assert info.contents[0].text == "state pool"
    assert note.contents[0].text == "n1 from db of pool"
    assert EVENTS == ["db open", "db close"] * 2


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_tool_run_as_a_task_gets_its_injected_values(version: str) -> None:
    EVENTS.clear()
    app = App("tasks", lifespan=lifespan)

    @app.tool(task_support="optional")
    async def slow(conn: Annotated[str, Depends(db)], ctx: Context[State]) -> str:
        return f"{conn} {ctx.lifespan.name}"

    with anyio.fail_after(LIMIT):
        async with Client(app, versions=[version], cache=None) as client:
            handle = await client.call_tool_as_task("slow", {})
            assert not handle.immediate
            assert text(await handle.result()) == "db of pool pool"
    assert EVENTS == ["db open", "db close"]


CALLED = anyio.Event()
RELEASED = anyio.Event()


async def lease() -> AsyncIterator[str]:
    """Gives a connection back with an await, as a pool's release does."""
    try:
        yield "leased"
    finally:
        await anyio.lowlevel.checkpoint()
        RELEASED.set()


@pytest.mark.anyio
async def test_a_cancelled_call_still_runs_its_dependencies_cleanup() -> None:
    global CALLED, RELEASED
    CALLED, RELEASED = anyio.Event(), anyio.Event()
    app = App("cancel")

    @app.tool()
    async def hang(conn: Annotated[str, Depends(lease)]) -> str:
        CALLED.set()
        await anyio.sleep_forever()
        return conn

    with anyio.fail_after(LIMIT):
        async with Client(app) as client, anyio.create_task_group() as tasks:
            tasks.start_soon(client.call_tool, "hang", {})
            await CALLED.wait()
            tasks.cancel_scope.cancel()  # the client cancels its request
        await RELEASED.wait()

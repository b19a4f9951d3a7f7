"""`Client` against an `App` in this process (memory transport), in both eras:
one typed view, positional calls, pages, progress, logs, callbacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_type

import anyio
import pytest

from mcp_specgen_runtime import UNSET, Client
from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.client import client as client_module
from mcp_specgen_runtime.errors import (
    CapabilityError,
    ProtocolError,
    RequestTimeoutError,
)
from mcp_specgen_types import latest, v2024_11_05, v2025_11_25, v2026_07_28

LIMIT = 10.0
VERSIONS = ["2024-11-05", "2025-11-25", "2026-07-28"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_app(**options: Any) -> App:
    app = App("demo", version="1.2.3", instructions="Try echo.", **options)

    @app.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    @app.tool()
    async def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    @app.tool()
    async def slow(steps: int, pause: float, ctx: Context) -> str:
        """Report progress `steps` times, `pause` seconds apart."""
        for step in range(steps):
            await anyio.sleep(pause)
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return "done"

    @app.tool()
    async def chatty(ctx: Context) -> str:
        """Log one message."""
        await ctx.log("warning", {"said": "careful"}, logger="demo")
        return "ok"

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Sample, elicit and list roots."""
        sampled = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            max_tokens=5,
        )
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "color": {"type": "string", "default": "blue"},
            },
        }
        answer = await ctx.elicit("Your name?", schema)
        roots = await ctx.list_roots()
        content = answer.get("content", {})
        return (
            f"{sampled['content']['text']} {content.get('name')} "
            f"{content.get('color')} {roots[0]['uri']}"
        )

    @app.resource("greeting://hello", mime_type="text/plain")
    def hello() -> str:
        """A greeting."""
        return "Hello!"

    @app.prompt(arguments={"code": "the code to review"})
    def review(code: str) -> str:
        """Review some code."""
        return f"Review this: {code}"

    return app


def text_of(result: latest.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, latest.TextContent)
    return block.text


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_one_typed_view_in_every_era(version: str) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(make_app(), versions=[version]) as client:
            assert client.protocol_version == version
            era = "modern" if version == "2026-07-28" else "legacy"
            assert client.negotiated.era == era
            assert client.server_info is not None
            assert client.server_info.name == "demo"
            assert isinstance(client.server_capabilities, latest.ServerCapabilities)
            assert client.server_capabilities.tools is not None
            assert client.instructions == "Try echo."
            tools = {tool.name: tool for tool in await client.list_all_tools()}
            assert isinstance(tools["add"], latest.Tool)
            assert isinstance(tools["add"].input_schema, latest.ToolInputSchema)
            result = await client.call_tool("echo", {"message": "hi"})
            assert isinstance(result, latest.CallToolResult)
            assert text_of(result) == "hi"
            assert "3" in text_of(await client.call_tool("add", {"a": 2}))
            read = await client.read_resource("greeting://hello")
            assert isinstance(read, latest.ReadResourceResult)
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            assert isinstance(prompt, latest.GetPromptResult)
            assert len(prompt.messages) == 1
            await client.ping()


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_every_page_is_iterated(version: str) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(make_app(page_size=2), versions=[version]) as client:
            first = await client.list_tools()
            assert len(first.tools) == 2 and isinstance(first.next_cursor, str)
            names = [tool.name async for tool in client.iter_tools()]
            assert names == ["echo", "add", "slow", "chatty", "ask"]
            assert [p.name for p in await client.list_all_prompts()] == ["review"]
            resources = await client.list_all_resources()
            assert [r.uri for r in resources] == ["greeting://hello"]
            assert await client.list_all_resource_templates() == []


class CursorApp(App):
    """Answers every `tools/list` with its one tool and `nextCursor`
    `cursor(given)`: a server whose pages never end."""

    def __init__(self, cursor: Callable[[str | None], str]) -> None:
        super().__init__("paging")
        self.cursor = cursor

        @self.tool()
        def echo(message: str) -> str:
            """Return the message unchanged."""
            return message

    def list_tools(self, cursor: str | None) -> dict[str, Any]:
        return {**super().list_tools(None), "nextCursor": self.cursor(cursor)}


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_cursor_given_twice_ends_the_listing(version: str) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(CursorApp(lambda _: "again"), versions=[version]) as client:
            with pytest.raises(ProtocolError, match="'again' again"):
                await client.list_all_tools()
            with pytest.raises(ProtocolError, match="'again' again"):
                async for _ in client.iter_tools():
                    pass


@pytest.mark.anyio
async def test_pages_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "MAX_PAGES", 3)
    app = CursorApp(lambda given: str(int(given or 0) + 1))
    with anyio.fail_after(LIMIT):
        async with Client(app) as client:
            with pytest.raises(ProtocolError, match="more than 3 pages"):
                await client.list_all_tools()
            pages = 0
            with pytest.raises(ProtocolError, match="more than 3 pages"):
                async for _ in client.iter_tools():
                    pages += 1
    assert pages == 3


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_listing_what_the_server_does_not_offer_is_empty(version: str) -> None:
    app = App("tools-only")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    with anyio.fail_after(LIMIT):
        async with Client(app, versions=[version]) as client:
            assert client.server_capabilities.prompts is UNSET
            assert (await client.list_prompts()).prompts == []
            assert await client.list_all_resources() == []
            with pytest.raises(CapabilityError):
                await client.get_prompt("review")


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_progress_reaches_the_callback_of_its_call(version: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progressed(
        progress: float, total: float | None, message: str | None
    ) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(LIMIT):
        async with Client(make_app(), versions=[version]) as client:
            result = await client.call_tool(
                "slow", {"steps": 2, "pause": 0}, on_progress=progressed
            )
    assert text_of(result) == "done"
    # 2024-11-05's progress has no message: the server sends none.
    messages = ["step 1", "step 2"] if version != "2024-11-05" else [None, None]
    assert seen == [(1, 2, messages[0]), (2, 2, messages[1])]


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_progress_resets_the_timeout_when_asked(version: str) -> None:
    """Five steps of 0.1 s: longer than the 0.3 s timeout in all, shorter
    than it between two progress notifications."""
    arguments = {"steps": 5, "pause": 0.1}
    with anyio.fail_after(LIMIT):
        async with Client(make_app(), versions=[version]) as client:
            result = await client.call_tool(
                "slow", arguments, timeout=0.3, reset_timeout_on_progress=True
            )
            assert text_of(result) == "done"
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("slow", arguments, timeout=0.3)
            with pytest.raises(RequestTimeoutError):
                await client.call_tool(
                    "slow",
                    {"steps": 1, "pause": 5},
                    timeout=0.3,
                    reset_timeout_on_progress=True,
                )


@pytest.mark.anyio
async def test_a_progress_timeout_does_not_give_the_token_as_its_id() -> None:
    """The progress token is no JSON-RPC id: the error names no id rather
    than a wrong one."""
    with anyio.fail_after(LIMIT):
        async with Client(make_app()) as client:
            with pytest.raises(RequestTimeoutError) as caught:
                await client.call_tool(
                    "slow",
                    {"steps": 1, "pause": 5},
                    timeout=0.3,
                    reset_timeout_on_progress=True,
                )
    assert caught.value.request_id is None
    assert str(caught.value) == "tools/call timed out after 0.3 s"


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_log_messages_reach_on_log(version: str) -> None:
    logged: list[latest.LoggingMessageNotificationParams] = []

    async def on_log(params: latest.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    with anyio.fail_after(LIMIT):
        async with Client(make_app(), versions=[version], on_log=on_log) as client:
            await client.set_logging_level("debug")
            await client.call_tool("chatty")
    assert [(m.level, m.data, m.logger) for m in logged] == [
        ("warning", {"said": "careful"}, "demo")
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS[1:])  # 2024-11-05 has no elicitation
async def test_plain_callables_answer_the_server(version: str) -> None:
    async def sampling(
        params: latest.CreateMessageRequestParams,
    ) -> latest.CreateMessageResult:
        return latest.CreateMessageResult(
            role="assistant",
            content=latest.TextContent(text="sampled"),
            model="m",
        )

    async def elicitation(params: latest.ElicitRequestParams) -> latest.ElicitResult:
        return latest.ElicitResult(action="accept", content={"name": "Ada"})

    with anyio.fail_after(LIMIT):
        async with Client(
            make_app(),
            versions=[version],
            sampling=sampling,
            elicitation=elicitation,
            roots=["file:///work"],
        ) as client:
            result = await client.call_tool("ask")
    # "blue": the elicitation's default, filled in (SEP-1034).
    assert text_of(result) == "sampled Ada blue file:///work"


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_completions_and_subscriptions(version: str) -> None:
    app = make_app(subscriptions=True)

    @app.completion()
    def languages(
        ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> list[str]:
        return [v for v in ("python", "perl") if v.startswith(argument["value"])]

    with anyio.fail_after(LIMIT):
        async with Client(app, versions=[version]) as client:
            ref = latest.PromptReference(name="review")
            completed = await client.complete(ref, "code", "py")
            assert isinstance(completed, latest.CompleteResult)
            assert completed.completion.values == ["python"]
            if client.negotiated.era == "legacy":
                await client.subscribe_resource("greeting://hello")
                await client.unsubscribe_resource("greeting://hello")


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_view_answers_in_the_types_of_the_revision_asked(
    version: str,
) -> None:
    """`view` puts a generated typed client of any revision on the session:
    its results come in that revision's types, whatever the wire spoke."""
    with anyio.fail_after(LIMIT):
        async with Client(make_app(), versions=[version]) as client:
            old = client.view(v2024_11_05.Client)
            assert_type(old, v2024_11_05.Client)
            listed = await old.list_tools()
            assert isinstance(listed, v2024_11_05.ListToolsResult)
            assert "echo" in [t.name for t in listed.tools]
            called = await old.call_tool(name="echo", arguments={"message": "x"})
            assert called.content == [v2024_11_05.TextContent(text="x")]
            recent = client.view(v2025_11_25.Client)
            assert isinstance(await recent.list_tools(), v2025_11_25.ListToolsResult)
            said = await recent.call_tool(name="echo", arguments={"message": "y"})
            assert isinstance(said, v2025_11_25.CallToolResult)
            assert said.content == [v2025_11_25.TextContent(text="y")]
            new = client.view(v2026_07_28.Client)
            assert isinstance(await new.list_tools(), v2026_07_28.ListToolsResult)
            answered = await new.call_tool(name="echo", arguments={"message": "z"})
            assert isinstance(answered, v2026_07_28.CallToolResult)
            assert answered.content == [v2026_07_28.TextContent(text="z")]

"""OpenTelemetry end to end: a traced `Client` calling a traced `App` (over
memory, both eras), spans checked with the SDK's in-memory exporter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.telemetry import TelemetryMiddleware
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.http.server import McpHttpApp
from tests.unit.runtime.transports.http.test_server import served


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def make_app(provider: TracerProvider) -> App:
    app = App("demo", telemetry=provider)

    @app.tool()
    def echo(message: str) -> str:
        return message

    @app.tool()
    def broken() -> str:
        raise RuntimeError("boom")

    @app.resource("greeting://hello")
    def hello() -> str:
        return "Hello!"

    @app.prompt()
    def review(code: str) -> str:
        return f"Review {code}"

    return app


def named(spans: Any, name: str, kind: SpanKind) -> ReadableSpan:
    found = [s for s in spans if s.name == name and s.kind == kind]
    assert len(found) == 1, [(s.name, s.kind) for s in spans]
    return found[0]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
async def test_a_client_call_and_the_server_span_share_one_trace(
    version: str, traced: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    async with Client(app, versions=[version], telemetry=provider) as client:
        await client.call_tool("echo", {"message": "hi"})
    spans = exporter.get_finished_spans()
    sent = named(spans, "tools/call echo", SpanKind.CLIENT)
    served = named(spans, "tools/call echo", SpanKind.SERVER)
    tool = named(spans, "execute_tool echo", SpanKind.INTERNAL)
    assert sent.context is not None and served.context is not None
    assert served.context.trace_id == sent.context.trace_id
    assert served.parent is not None
    assert served.parent.span_id == sent.context.span_id
    assert tool.parent is not None and tool.parent.span_id == served.context.span_id
    attributes = dict(served.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["mcp.protocol.version"] == version
    assert attributes["gen_ai.tool.name"] == "echo"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["jsonrpc.request.id"].isdigit()  # type: ignore[union-attr]
    assert "mcp.session.id" not in attributes  # memory: no session
    assert dict(sent.attributes or {})["mcp.protocol.version"] == version
    assert served.status.status_code == StatusCode.UNSET


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_errors_set_the_status_and_error_type(
    version: str, traced: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    async with Client(app, versions=[version], telemetry=provider) as client:
        failed = await client.call_tool("broken", {})
        with pytest.raises(RpcError) as caught:
            await client.read_resource("greeting://nope")
    assert failed.is_error
    spans = exporter.get_finished_spans()
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = named(spans, "tools/call broken", kind)
        assert span.status.status_code == StatusCode.ERROR
        assert dict(span.attributes or {})["error.type"] == "tool_error"
        read = named(spans, "resources/read", kind)
        attributes = dict(read.attributes or {})
        assert read.status.status_code == StatusCode.ERROR
        assert attributes["error.type"] == str(caught.value.code)
        assert attributes["rpc.response.status_code"] == str(caught.value.code)
        assert attributes["mcp.resource.uri"] == "greeting://nope"


@pytest.mark.anyio
async def test_prompts_and_lists_are_named_as_the_conventions_say(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    async with Client(app, versions=["2026-07-28"], telemetry=provider) as client:
        await client.get_prompt("review", {"code": "x"})
        await client.list_tools()
    spans = exporter.get_finished_spans()
    prompt = named(spans, "prompts/get review", SpanKind.SERVER)
    assert dict(prompt.attributes or {})["gen_ai.prompt.name"] == "review"
    listed = named(spans, "tools/list", SpanKind.SERVER)
    assert "gen_ai.operation.name" not in dict(listed.attributes or {})


@pytest.mark.anyio
async def test_a_server_span_without_trace_context_starts_a_trace(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    async with Client(app, versions=["2025-11-25"]) as client:  # not traced
        await client.call_tool("echo", {"message": "hi"})
    served = named(exporter.get_finished_spans(), "tools/call echo", SpanKind.SERVER)
    assert served.parent is None
    handshake = named(exporter.get_finished_spans(), "initialize", SpanKind.SERVER)
    assert dict(handshake.attributes or {})["mcp.method.name"] == "initialize"


@pytest.mark.anyio
async def test_the_middleware_can_be_placed_by_hand(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = traced
    app = App("demo")
    app.add_middleware(TelemetryMiddleware(provider), methods=["tools/call"])

    @app.tool()
    def echo(message: str) -> str:
        return message

    async with Client(app, versions=["2026-07-28"]) as client:
        await client.list_tools()
        await client.call_tool("echo", {"message": "hi"})
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ["execute_tool echo", "tools/call echo"]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_nothing_of_opentelemetry_is_loaded_unless_asked() -> None:
    done = run_python("""
        import sys
        import anyio
        from mcp_specgen_runtime import Client
        from mcp_specgen_runtime.app import App
        from mcp_specgen_runtime.app.request_log import RequestLogger

        app = App("demo", middleware=[RequestLogger()])

        @app.tool()
        def echo(message: str) -> str:
            return message

        async def main() -> None:
            async with Client(app) as client:
                await client.call_tool("echo", {"message": "hi"})

        anyio.run(main)
        loaded = [m for m in sys.modules if "opentelemetry" in m or "telemetry" in m]
        print(loaded)
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_opentelemetry_asking_for_it_says_what_to_install() -> None:
    done = run_python("""
        import sys
        sys.modules["opentelemetry"] = None  # as if not installed
        from mcp_specgen_runtime.app import App
        App("demo", telemetry=True)
        """)
    assert done.returncode != 0
    assert "pip install 'mcp-specgen-runtime[otel]'" in done.stderr


@pytest.mark.anyio
async def test_the_parent_comes_from_the_w3c_trace_context_in_meta(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "traceparent": f"00-{trace_id}-{parent_id}-01",
        "tracestate": "vendor=opaque",
    }
    client_side, server_side = memory_pair()
    async with (
        Connection(server_side, app.session().handler()),
        Connection(client_side, None) as client,
    ):
        await client.request("tools/list", {"_meta": meta}, dict[str, Any], timeout=5)
    served = named(exporter.get_finished_spans(), "tools/list", SpanKind.SERVER)
    assert served.context is not None and served.parent is not None
    assert served.context.trace_id == int(trace_id, 16)
    assert served.parent.span_id == int(parent_id, 16)
    assert served.parent.is_remote
    assert served.context.trace_state.get("vendor") == "opaque"


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_over_streamable_http_one_trace_and_the_session_on_both_sides(
    version: str, traced: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    async with (
        served(McpHttpApp(app.session())) as url,
        Client(url, versions=[version], telemetry=provider) as client,
    ):
        await client.call_tool("echo", {"message": "hi"})
    spans = exporter.get_finished_spans()
    sent = named(spans, "tools/call echo", SpanKind.CLIENT)
    served_span = named(spans, "tools/call echo", SpanKind.SERVER)
    assert sent.context is not None and served_span.parent is not None
    assert served_span.parent.span_id == sent.context.span_id
    on_client = dict(sent.attributes or {}).get("mcp.session.id")
    on_server = dict(served_span.attributes or {}).get("mcp.session.id")
    if version == "2026-07-28":
        assert on_client is None and on_server is None  # the era has no sessions
    else:
        assert isinstance(on_server, str) and on_server
        assert on_client == on_server


@pytest.mark.anyio
@pytest.mark.parametrize(
    "carried",
    [
        {"traceparent": "garbage", "tracestate": "=="},
        {"traceparent": 42},
        {"traceparent": "00-" + "0" * 32 + "-" + "0" * 16 + "-01"},  # invalid ids
    ],
)
async def test_bad_trace_context_starts_a_new_trace_and_serving_goes_on(
    carried: dict[str, Any], traced: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = traced
    app = make_app(provider)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        **carried,
    }
    client_side, server_side = memory_pair()
    async with (
        Connection(server_side, app.session().handler()),
        Connection(client_side, None) as client,
    ):
        listed = await client.request(
            "tools/list", {"_meta": meta}, dict[str, Any], timeout=5
        )
    assert [tool["name"] for tool in listed["tools"]] == ["echo", "broken"]
    served = named(exporter.get_finished_spans(), "tools/list", SpanKind.SERVER)
    assert served.parent is None

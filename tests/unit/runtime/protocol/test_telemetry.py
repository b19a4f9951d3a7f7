"""protocol.telemetry: trace context in `_meta`, the MCP span attributes, and
the client's spans (requests and notifications)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.protocol.telemetry import (
    ClientTracer,
    attributes,
    extract,
    inject,
    span_name,
)
from mcp_specgen_types import v2025_11_25


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def provider() -> TracerProvider:
    return TracerProvider()


def test_inject_adds_the_current_context_beside_what_meta_holds(
    provider: TracerProvider,
) -> None:
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("outer") as span:
        body = inject({"name": "echo", "_meta": {"progressToken": 7}})
        typed = inject(v2025_11_25.PaginatedRequestParams(cursor="c"))
        bare = inject(None)
    trace_id = format(span.get_span_context().trace_id, "032x")
    assert body["name"] == "echo" and body["_meta"]["progressToken"] == 7
    assert trace_id in body["_meta"]["traceparent"]
    assert typed["cursor"] == "c" and trace_id in typed["_meta"]["traceparent"]
    assert trace_id in bare["_meta"]["traceparent"]
    assert inject({"a": 1}) == {"a": 1}  # no current span: unchanged


def test_extract_reads_only_the_carrier_keys(provider: TracerProvider) -> None:
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    context = extract({"traceparent": parent, "other": "x"})
    found = trace.get_current_span(context).get_span_context()
    assert found.trace_id == 0x4BF92F3577B34DA6A3CE929D0E0E4736 and found.is_remote
    for junk in (None, 5, [], {"traceparent": 5}):
        empty = trace.get_current_span(extract(junk)).get_span_context()
        assert not empty.is_valid


def test_names_and_attributes_follow_the_conventions() -> None:
    assert span_name("tools/call", "echo") == "tools/call echo"
    assert span_name("prompts/get", "review") == "prompts/get review"
    assert span_name("resources/read", "file:///x") == "resources/read"
    assert span_name("tools/list", None) == "tools/list"
    assert attributes(
        "tools/call",
        target="echo",
        protocol_version="2025-11-25",
        session_id="s1",
        request_id=3,
    ) == {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": "2025-11-25",
        "mcp.session.id": "s1",
        "jsonrpc.request.id": "3",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
    }
    assert attributes("resources/read", target="file:///x") == {
        "mcp.method.name": "resources/read",
        "mcp.resource.uri": "file:///x",
    }


class FakeSession:
    protocol_version = "2026-07-28"

    class connection:  # stands for the session's connection
        transport = object()


@pytest.mark.anyio
async def test_the_client_tracer_spans_requests_and_notifications() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = ClientTracer(FakeSession(), provider)  # type: ignore[arg-type]
    sent: list[Any] = []

    async def send(params: Any) -> Any:
        sent.append(params)
        return None

    async def refuse(params: Any) -> Any:
        raise RpcError(-32602, "no such tool")

    await tracer("notifications/roots/list_changed", None, send)
    with pytest.raises(RpcError):
        await tracer("tools/call", {"name": "nope"}, refuse)
    notified, failed = exporter.get_finished_spans()
    assert notified.name == "notifications/roots/list_changed"
    assert notified.kind == SpanKind.CLIENT
    assert "traceparent" in sent[0]["_meta"]
    assert failed.name == "tools/call nope"
    assert failed.status.status_code == StatusCode.ERROR
    assert dict(failed.attributes or {})["error.type"] == "-32602"

"""`TelemetryMiddleware`: an OpenTelemetry SERVER span per message an `App`
serves, and an `execute_tool` span per tool call.

    app = App("demo", telemetry=True)          # outermost middleware
    app.add_middleware(TelemetryMiddleware(tracer_provider=provider))

Each request and notification gets a span of kind SERVER whose parent is
the trace context the client put in `params._meta` (`traceparent`,
`tracestate`, `baggage`; SEP-414), named and described as the semantic
conventions for MCP say (see `protocol.telemetry`). A `tools/call` span
holds an INTERNAL `execute_tool {name}` span around the rest of the chain
and the tool. Code the handlers run (a database client, an HTTP call) sees
the span as the current one, so its own spans join the trace.

Needs `opentelemetry-api` (the `otel` extra); importing this module loads
it, which nothing else in the runtime does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from mcp_specgen_runtime.protocol.telemetry import (
    SpanKind,
    attributes,
    extract,
    record_failure,
    record_tool_error,
    span_name,
    tracer,
)

from .middleware import tool_failed

if TYPE_CHECKING:
    from .middleware import Call, CallNext

__all__ = ["TelemetryMiddleware"]


class _Meta(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


class TelemetryMiddleware:
    """Middleware tracing every message (see the module docstring).

    Args:
        tracer_provider: the `TracerProvider` to use (default: the global
            one, as `opentelemetry.trace.set_tracer_provider` set it).
    """

    def __init__(self, tracer_provider: object = None) -> None:
        self.tracer = tracer(tracer_provider)

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        target = call.target
        described = attributes(
            call.method,
            target=target,
            protocol_version=call.protocol_version,
            session_id=call.session_id,
            request_id=call.request_id,
        )
        with self.tracer.start_as_current_span(
            span_name(call.method, target),
            context=extract(_meta_of(call.raw_params)),
            kind=SpanKind.SERVER,
            attributes=described,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                if call.method != "tools/call":
                    return await call_next(call)
                with self.tracer.start_as_current_span(
                    f"execute_tool {target}" if target else "execute_tool",
                    kind=SpanKind.INTERNAL,
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        **({"gen_ai.tool.name": target} if target else {}),
                    },
                    record_exception=False,
                    set_status_on_exception=False,
                ) as tool_span:
                    try:
                        result = await call_next(call)
                    except BaseException as exc:
                        record_failure(tool_span, exc)
                        raise
                    if tool_failed(result):
                        record_tool_error(tool_span)
                        record_tool_error(span)
                    return result
            except BaseException as exc:
                record_failure(span, exc)
                raise


def _meta_of(raw: bytes | None) -> Any:
    if not raw:
        return None
    try:
        return msgspec.json.decode(raw, type=_Meta).meta
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None

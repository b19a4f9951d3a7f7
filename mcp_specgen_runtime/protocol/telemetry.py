"""OpenTelemetry for MCP: spans named and described as the semantic conventions
for MCP say, and W3C trace context carried in `params._meta` (SEP-414).

This module imports `opentelemetry-api` (the `otel` extra); nothing in the
runtime imports it unless telemetry is asked for (`App(telemetry=True)`,
`Client(..., telemetry=True)`), so a runtime without it pays nothing.

What a span says (the OpenTelemetry semantic conventions for MCP):

- its name: `"{mcp.method.name} {target}"` where the target is the tool or
  prompt named (`tools/call echo`), else the method alone (a resource URI
  is no low-cardinality name: it goes in `mcp.resource.uri`);
- `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id` (when there is
  a session), `jsonrpc.request.id` (server side: the client picks the id),
  `mcp.resource.uri`; for `tools/call` `gen_ai.tool.name` and
  `gen_ai.operation.name: "execute_tool"`, for `prompts/get`
  `gen_ai.prompt.name`;
- on failure, status ERROR and `error.type`: the JSON-RPC error code for an
  error answer (also `rpc.response.status_code`), the exception's type for
  anything else, `tool_error` for a tool result with `isError: true`.

Trace context: `traceparent`, `tracestate` and `baggage` travel as members
of `params._meta`, read and written by the globally configured propagator
(W3C trace context and baggage unless the application chose another).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

try:
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError as exc:  # pragma: no cover - shown to the user as is
    raise ImportError(
        "OpenTelemetry support needs opentelemetry-api: "
        "pip install 'mcp-specgen-runtime[otel]'"
    ) from exc

from mcp_specgen_runtime._version import __version__
from mcp_specgen_runtime.codec.wire import to_builtins
from mcp_specgen_runtime.errors import RpcError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from .client import ClientSession

__all__ = [
    "CARRIER_KEYS",
    "TOOL_ERROR",
    "ClientTracer",
    "SpanKind",
    "attributes",
    "extract",
    "inject",
    "record_failure",
    "record_tool_error",
    "span_name",
    "tracer",
]

CARRIER_KEYS = ("traceparent", "tracestate", "baggage")
"""The `_meta` members carrying trace context (SEP-414)."""

TOOL_ERROR = "tool_error"
"""`error.type` of a tool call answered with `isError: true`."""

_NAMED = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
_URI_METHODS = frozenset(
    {"resources/read", "resources/subscribe", "resources/unsubscribe"}
)


def tracer(provider: object = None) -> Tracer:
    """The runtime's tracer, from `provider` (a `TracerProvider`) or the
    global one."""
    chosen = typing.cast("trace.TracerProvider | None", provider)
    return trace.get_tracer("mcp_specgen_runtime", __version__, chosen)


def extract(meta: object) -> Context:
    """The trace context a request's `_meta` carries (empty when none)."""
    carrier: dict[str, str] = {}
    if isinstance(meta, Mapping):
        found = typing.cast("Mapping[str, Any]", meta)
        for key in CARRIER_KEYS:
            value = found.get(key)
            if isinstance(value, str):
                carrier[key] = value
    return propagate.extract(carrier)


def inject(params: Any) -> Any:
    """`params` (builtins or a generated Struct; None for none) as builtins
    with the current trace context added to its `_meta`."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if not carrier:
        return params
    body: Any = {} if params is None else to_builtins(params)
    if not isinstance(body, dict):
        return params
    found = typing.cast("dict[str, Any]", body)
    meta: Any = found.get("_meta")
    merged = dict(typing.cast("dict[str, Any]", meta)) if isinstance(meta, dict) else {}
    merged.update(carrier)
    return {**found, "_meta": merged}


def span_name(method: str, target: str | None) -> str:
    """`"{method} {target}"` for a tool or prompt, else the method."""
    if target is not None and method in _NAMED:
        return f"{method} {target}"
    return method


def attributes(
    method: str,
    *,
    target: str | None = None,
    protocol_version: str | None = None,
    session_id: str | None = None,
    request_id: object = None,
) -> dict[str, str]:
    """The MCP attributes of a span (see the module docstring)."""
    found = {"mcp.method.name": method}
    if protocol_version is not None:
        found["mcp.protocol.version"] = protocol_version
    if session_id is not None:
        found["mcp.session.id"] = session_id
    if request_id is not None:
        found["jsonrpc.request.id"] = str(request_id)
    if target is not None:
        named = _NAMED.get(method)
        if named is not None:
            found[named] = target
        elif method in _URI_METHODS:
            found["mcp.resource.uri"] = target
    if method == "tools/call":
        found["gen_ai.operation.name"] = "execute_tool"
    return found


def record_failure(span: Span, exc: BaseException) -> None:
    """Mark `span` failed by `exc`: status ERROR, `error.type`."""
    if isinstance(exc, RpcError):
        code = str(exc.code)
        span.set_attribute("error.type", code)
        span.set_attribute("rpc.response.status_code", code)
        span.set_status(Status(StatusCode.ERROR, exc.message))
    else:
        span.set_attribute("error.type", type(exc).__qualname__)
        span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))


def record_tool_error(span: Span) -> None:
    """Mark `span` as a tool call whose tool failed (`isError: true`)."""
    span.set_attribute("error.type", TOOL_ERROR)
    span.set_status(Status(StatusCode.ERROR, "the tool reported an error"))


def _target(method: str, params: Any) -> str | None:
    member = "name" if method in _NAMED else "uri" if method in _URI_METHODS else None
    if member is None or params is None:
        return None
    found: Any = (
        typing.cast("Mapping[str, Any]", params).get(member)
        if isinstance(params, Mapping)
        else getattr(params, member, None)
    )
    return found if isinstance(found, str) else None


def _failed_tool(result: Any) -> bool:
    if isinstance(result, Mapping):
        return typing.cast("Mapping[str, Any]", result).get("isError") is True
    return getattr(result, "is_error", None) is True


class ClientTracer:
    """A `ClientSession.around_send`: a CLIENT span around each request (its
    input rounds included) and notification, whose context goes to the
    server in `params._meta`; `mcp.session.id` is the HTTP transport's
    session, when it has one.

    Args:
        session: the session traced (for its protocol version).
        provider: a `TracerProvider` (default: the global one).
    """

    def __init__(self, session: ClientSession, provider: object = None) -> None:
        self.session = session
        self.tracer = tracer(provider)

    async def __call__(
        self, method: str, params: Any, send: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        target = _target(method, params)
        session_id: Any = getattr(self.session.connection.transport, "session_id", None)
        described = attributes(
            method,
            target=target,
            protocol_version=self.session.protocol_version,
            session_id=session_id if isinstance(session_id, str) else None,
        )
        with self.tracer.start_as_current_span(
            span_name(method, target),
            kind=SpanKind.CLIENT,
            attributes=described,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await send(inject(params))
            except BaseException as exc:
                record_failure(span, exc)
                raise
            if method == "tools/call" and _failed_tool(result):
                record_tool_error(span)
            return result

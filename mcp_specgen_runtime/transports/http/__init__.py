"""Streamable HTTP building blocks: the transport logic, free of any server or
client library.

- `sse`: writing Server-Sent Events and parsing event streams incrementally.
- `security`: the guards a server runs before reading a request (Host,
  Origin, Content-Type, Accept, body size) and the `SecurityPolicy` they read.
- `cors`: CORS for browser clients (`Cors`, off by default), in step with
  the Origin guard.
- `sessions`: legacy (2025) session ids and a registry with idle expiry and a
  cap on live sessions.
- `headers`: reading header fields, `MCP-Protocol-Version`, and the 2026-07-28
  request headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` with their base64
  encoding), checked against the request body.
- `probe`: a client telling a 2026 server from a legacy Streamable HTTP one,
  and that from the deprecated HTTP+SSE transport.

Every check returns an `HttpError` (status, JSON-RPC code, message, data) or
None; `HttpError.body()` is the JSON-RPC error reply to send with the status.
"""

from __future__ import annotations

from .cors import Cors
from .headers import (
    DEFAULT_PROTOCOL_VERSION,
    HEADER_MISMATCH,
    METHOD_HEADER,
    NAME_FIELDS,
    NAME_HEADER,
    PARAM_HEADER_PREFIX,
    PROTOCOL_VERSION_HEADER,
    UNSUPPORTED_PROTOCOL_VERSION,
    X_MCP_HEADER,
    HeadersLike,
    HttpError,
    HttpHeaders,
    ParamHeader,
    as_headers,
    check_param_headers,
    check_request_headers,
    client_param_headers,
    decode_header_value,
    encode_header_value,
    media_type,
    param_header_problem,
    param_headers,
    protocol_version,
    render_param_value,
    request_headers,
)
from .probe import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    FallbackInitialize,
    FallbackLegacySse,
    InitializeOutcome,
    LegacyOk,
    ModernOk,
    ModernOutcome,
    ProbeError,
    ReadStream,
    Refusal,
    RetryWithVersion,
    classify_initialize,
    classify_initialize_reply,
    classify_modern,
    classify_modern_reply,
    client_refusal,
    legacy_endpoint,
)
from .security import (
    DEFAULT_MAX_BODY_SIZE,
    LOOPBACK_ORIGINS,
    SecurityPolicy,
    accepts,
    check_accept,
    check_body_size,
    check_content_length,
    check_content_type,
    check_host,
    check_origin,
    check_request,
    is_loopback,
)
from .sessions import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    MAX_SESSION_ID_LENGTH,
    SESSION_ID_HEADER,
    SessionLimitError,
    SessionRegistry,
    is_valid_session_id,
    new_session_id,
)
from .sse import (
    DEFAULT_MAX_EVENT_SIZE,
    Event,
    EventTooLongError,
    SSEParser,
    encode_comment,
    encode_event,
)

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_EVENT_SIZE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PROTOCOL_VERSION",
    "HEADER_MISMATCH",
    "LOOPBACK_ORIGINS",
    "MAX_SESSION_ID_LENGTH",
    "METHOD_HEADER",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "NAME_FIELDS",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_ID_HEADER",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "X_MCP_HEADER",
    "Cors",
    "Event",
    "EventTooLongError",
    "FallbackInitialize",
    "FallbackLegacySse",
    "HeadersLike",
    "HttpError",
    "HttpHeaders",
    "InitializeOutcome",
    "LegacyOk",
    "ModernOk",
    "ModernOutcome",
    "ParamHeader",
    "ProbeError",
    "ReadStream",
    "Refusal",
    "RetryWithVersion",
    "SSEParser",
    "SecurityPolicy",
    "SessionLimitError",
    "SessionRegistry",
    "accepts",
    "as_headers",
    "check_accept",
    "check_body_size",
    "check_content_length",
    "check_content_type",
    "check_host",
    "check_origin",
    "check_param_headers",
    "check_request",
    "check_request_headers",
    "classify_initialize",
    "classify_initialize_reply",
    "classify_modern",
    "classify_modern_reply",
    "client_param_headers",
    "client_refusal",
    "decode_header_value",
    "encode_comment",
    "encode_event",
    "encode_header_value",
    "is_loopback",
    "is_valid_session_id",
    "legacy_endpoint",
    "media_type",
    "new_session_id",
    "param_header_problem",
    "param_headers",
    "protocol_version",
    "render_param_value",
    "request_headers",
]

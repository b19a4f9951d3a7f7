"""POSTs answered without a session: the stateless legacy mode (each request
served alone by a connection of its own) and the 2026 path (the session's
modern handler, the `_meta` envelope and `Mcp-*` headers checked first).
Both serve the request in its POST's own task and write its answer there
(`direct.py`).

The 2026 path (a POST whose params carry the `_meta` protocol version), in
detail: the standard headers must match the body (400, -32020); the
request is served on its own response (`answer_direct`), as JSON, or as
an SSE stream once the handler sends a notification before its result; a
client that goes away cancels it. An error answered as JSON gets the
status the spec gives its code (`MODERN_ERROR_STATUS`: 404 for -32601, 400
for invalid params, a missing capability or version), else 200; a
notification gets 202.
"""

from __future__ import annotations

import typing
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UnsetType

from mcp_specgen_runtime.jsonrpc.connection import (
    RequestContext,
    serve_notification,
)
from mcp_specgen_runtime.protocol.meta import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
)

from ...errors import ErrorCode, RpcError
from .answers import (
    Refused,
    refuse,
)
from .asgi import respond
from .auth import current_request
from .direct import DirectAnswer, answer_direct
from .headers import (
    HEADER_MISMATCH,
    UNSUPPORTED_PROTOCOL_VERSION,
    HttpError,
    HttpHeaders,
    check_param_headers,
    check_request_headers,
    protocol_version,
)
from .messages import (
    INITIALIZE,
    Batch,
    params_of,
    request_id,
)
from .probe import MISSING_REQUIRED_CLIENT_CAPABILITY

if TYPE_CHECKING:
    from collections.abc import (
        Callable,
        Mapping,
    )

    from mcp_specgen_runtime.jsonrpc.envelope import Envelope
    from mcp_specgen_runtime.jsonrpc.serving import Handler
    from mcp_specgen_runtime.protocol.session import ServerConnection, ServerSession


STATELESS_OWNER = "stateless"
STATELESS_UNREACHABLE = (
    "this server is stateless (no session): it cannot send requests to the client"
)
STATELESS_UNLISTED = (
    "tasks/list: this stateless server cannot tell anonymous callers apart, "
    "so it lists no tasks (authenticate to list yours)"
)
TASKS_LIST = "tasks/list"


MODERN_ERROR_STATUS: Mapping[int, int] = MappingProxyType(
    {
        ErrorCode.PARSE_ERROR: 400,
        ErrorCode.INVALID_REQUEST: 400,
        ErrorCode.INVALID_PARAMS: 400,
        HEADER_MISMATCH: 400,
        MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
        UNSUPPORTED_PROTOCOL_VERSION: 400,
        ErrorCode.METHOD_NOT_FOUND: 404,
    }
)
"""The HTTP status of a 2026 error answered as JSON (the spec's: 404 for an
unknown method, 400 for invalid params, a missing capability or version; the
Python SDK's table); any other error is 200."""


async def post_stateless(
    session: ServerSession,
    headers: HttpHeaders,
    message: Envelope | Batch,
    receive: Any,
    send: Any,
    principal: object,
) -> None:
    """A legacy POST without a session: `initialize` is answered (no
    `Mcp-Session-Id`), any other request is served at the revision its
    `MCP-Protocol-Version` names (absent: 2025-03-26) by a connection of
    its own; notifications and responses are accepted (202)."""
    if isinstance(message, Batch):
        raise refuse(400, "batches are not served by a stateless server")
    method = message.method
    the_id = request_id(message)
    if isinstance(method, UnsetType) or the_id is None:
        await respond(send, 202, b"", None)
        return
    connection = session.handler()
    # Anonymous tasks cannot be bound to a session that does not exist:
    # they belong to whoever holds the id, and nobody may list them.
    connection.key = STATELESS_OWNER
    handler: Handler = connection
    if principal is None:
        handler = unlisted(connection)
    if method != INITIALIZE:
        version = protocol_version(headers, session.legacy_versions)
        if isinstance(version, HttpError):
            raise Refused(version)
        connection.assume(version, unreachable=STATELESS_UNREACHABLE)
    params = params_of(message)
    raw_params = bytes(message.params) if len(message.params) else None
    answer = DirectAnswer(send, unreachable=STATELESS_UNREACHABLE)
    context = RequestContext(
        answer, the_id, method, progress_token(params), principal=principal
    )
    context.http_request = current_request.get()
    # Nothing holds the request once its POST is gone: a disconnect cancels it.
    await answer_direct(answer, handler, context, raw_params, receive)


async def post_modern(
    session: ServerSession,
    handler: ServerConnection,
    tool_input_schema: Callable[[str], Mapping[str, Any] | None] | None,
    headers: HttpHeaders,
    message: Envelope,
    receive: Any,
    send: Any,
    principal: object,
    params: dict[str, Any] | None = None,
) -> None:
    """A 2026 POST (`params`: the message's, when already decoded)."""
    method = message.method
    if isinstance(method, UnsetType):
        raise refuse(400, "a 2026 POST carries one request or notification")
    if params is None:
        params = params_of(message)
    raw_params = bytes(message.params) if len(message.params) else None
    the_id = request_id(message)
    if the_id is None:
        version = envelope_version(params)
        if version not in session.modern_versions:
            error = session.unsupported(version)
            raise Refused(HttpError(400, error.message, error.code, error.data))
        await respond(send, 202, b"", None)
        # Already answered 202; serve_notification logs any failure.
        await serve_notification(handler, method, raw_params)
        return
    refused = _refusal(session, tool_input_schema, headers, method, params)
    if refused is not None:
        reply = refused.body(the_id)
        await respond(send, refused.status, reply, "application/json", None)
        return
    answer = DirectAnswer(send, MODERN_ERROR_STATUS)
    context = RequestContext(
        answer, the_id, method, progress_token(params), principal=principal
    )
    context.http_request = current_request.get()
    await answer_direct(answer, handler, context, raw_params, receive)


def _refusal(
    session: ServerSession,
    tool_input_schema: Callable[[str], Mapping[str, Any] | None] | None,
    headers: HttpHeaders,
    method: str,
    params: dict[str, Any],
) -> HttpError | None:
    """Why a 2026 request is refused before it is served, in the spec's
    order: an incomplete `_meta` envelope (-32602), headers that do not
    match the body (-32020), an unsupported version (-32022). (The
    session answers the rest, a `ping`, which 2026 removed, included.)"""
    meta = members(params.get("_meta"))
    if META_PROTOCOL_VERSION not in meta or not isinstance(
        meta.get(META_CLIENT_CAPABILITIES), dict
    ):
        return HttpError(
            400,
            f"Invalid params: _meta must carry {META_PROTOCOL_VERSION!r} "
            f"and {META_CLIENT_CAPABILITIES!r}",
            ErrorCode.INVALID_PARAMS,
        )
    request = {"method": method, "params": params}
    mismatch = check_request_headers(headers, request) or _param_mismatch(
        tool_input_schema, method, params, headers
    )
    if mismatch is not None:
        return mismatch
    version = meta[META_PROTOCOL_VERSION]
    if version not in session.modern_versions:
        error = session.unsupported(version)
        return HttpError(400, error.message, error.code, error.data)
    return None


def _param_mismatch(
    tool_input_schema: Callable[[str], Mapping[str, Any] | None] | None,
    method: str,
    params: dict[str, Any],
    headers: HttpHeaders,
) -> HttpError | None:
    if tool_input_schema is None or method != "tools/call":
        return None
    name = params.get("name")
    if not isinstance(name, str):
        return None
    arguments = params.get("arguments")
    return check_param_headers(
        tool_input_schema(name),
        members(arguments) if arguments is not None else None,
        headers,
    )


# --- cluster helpers ----------------------------------------------------------------


def unlisted(connection: Handler) -> Handler:
    """`connection` for an anonymous stateless caller: `tasks/list` is
    -32601 and `initialize` declares no `tasks.list` (2025-11-25: receivers
    that cannot identify requestors SHOULD NOT declare it)."""

    async def serve(method: str, params: bytes | None) -> bytes | None:
        if method == TASKS_LIST:
            raise RpcError(ErrorCode.METHOD_NOT_FOUND, STATELESS_UNLISTED)
        result = await connection(method, params)
        if method == INITIALIZE and result is not None:
            return _without_task_list(result)
        return result

    return serve


def _without_task_list(result: bytes) -> bytes:
    body: dict[str, Any] = msgspec.json.decode(result)
    capabilities: dict[str, Any] = body.get("capabilities") or {}
    tasks: Any = capabilities.get("tasks")
    if not isinstance(tasks, dict) or "list" not in tasks:
        return result
    del tasks["list"]
    return msgspec.json.encode(body)


def members(value: object) -> dict[str, Any]:
    """`value` as a JSON object ({} when it is none)."""
    return typing.cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def envelope_version(params: Mapping[str, Any]) -> Any:
    return members(params.get("_meta")).get(META_PROTOCOL_VERSION)


def progress_token(params: Mapping[str, Any]) -> Any:
    meta = members(params.get("_meta"))
    token = meta.get("progressToken")
    return token if isinstance(token, int | str) else None

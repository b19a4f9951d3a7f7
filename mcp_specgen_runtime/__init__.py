"""mcp-codegen runtime: what generated MCP types, servers and clients need at run time.

Depends on msgspec and anyio (and cryptography, for 2026 request state). The
wire codec, the dispatcher, the JSON-RPC connection and both sessions are
importable from here, and so is the high-level `Client`::

    from mcp_specgen_runtime import Client, ClientSession, ServerSession

Streamable HTTP (`serve_http`, `McpHttpApp`, `connect_http`) needs the `http`
extra (uvicorn, httpx).
"""

from typing import TYPE_CHECKING, Any

from .codec.wire import (
    UNSET,
    ClosedStruct,
    OpenStruct,
    UnsetType,
    ValidationError,
    convert,
    decode,
    encode,
    extra,
    recursive_alias,
    structural_union,
    to_builtins,
    with_extra,
)

if TYPE_CHECKING:
    from .client.client import Client
    from .client.group import ClientGroup
    from .jsonrpc.connection import Connection, current_request
    from .jsonrpc.dispatch import Dispatcher
    from .protocol.client import ClientSession, VersionCache
    from .protocol.client_requests import request_client
    from .protocol.session import ServerSession
    from .transports.http.client import connect_http
    from .transports.http.server import McpHttpApp, serve_http
    from .transports.stdio import connect_stdio

# The engine pulls in anyio; generated types need only the codec, so they import
# fast. The engine's names load on first use.
_LAZY = {
    "Client": "client.client",
    "ClientGroup": "client.group",
    "ClientSession": "protocol.client",
    "Connection": "jsonrpc.connection",
    "McpHttpApp": "transports.http.server",
    "Dispatcher": "jsonrpc.dispatch",
    "ServerSession": "protocol.session",
    "VersionCache": "protocol.client",
    "connect_http": "transports.http.client",
    "connect_stdio": "transports.stdio",
    "current_request": "jsonrpc.connection",
    "request_client": "protocol.client_requests",
    "serve_http": "transports.http.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "UNSET",
    "Client",
    "ClientGroup",
    "ClientSession",
    "ClosedStruct",
    "Connection",
    "Dispatcher",
    "McpHttpApp",
    "OpenStruct",
    "ServerSession",
    "UnsetType",
    "ValidationError",
    "VersionCache",
    "connect_http",
    "connect_stdio",
    "convert",
    "current_request",
    "decode",
    "encode",
    "extra",
    "recursive_alias",
    "request_client",
    "serve_http",
    "structural_union",
    "to_builtins",
    "with_extra",
]

"""The MCP protocol: server and client sessions, version negotiation, adaptation
between revisions, server→client requests, sealed request state and extensions
(`extensions`; the 2026 tasks extension in `tasks/wire2026`). Stands on jsonrpc.
"""

from .client import ClientSession, VersionCache
from .client_requests import log_to_client, request_client, request_client_many
from .extensions import Extension, ExtensionResult
from .session import ServerConnection, ServerSession

__all__ = [
    "ClientSession",
    "Extension",
    "ExtensionResult",
    "ServerConnection",
    "ServerSession",
    "VersionCache",
    "log_to_client",
    "request_client",
    "request_client_many",
]

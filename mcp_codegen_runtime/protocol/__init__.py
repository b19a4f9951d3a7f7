"""The MCP protocol: server and client sessions, version negotiation, adaptation
between revisions, server→client requests and sealed request state. Stands on jsonrpc.
"""

from .client import ClientSession, VersionCache
from .client_requests import log_to_client, request_client, request_client_many
from .session import ServerConnection, ServerSession

__all__ = [
    "ClientSession",
    "ServerConnection",
    "ServerSession",
    "VersionCache",
    "log_to_client",
    "request_client",
    "request_client_many",
]

"""Transports: stdio, in-memory and Streamable HTTP (server, client, legacy SSE).
Stands on jsonrpc (the `Transport` contract) and protocol (HTTP binds sessions).
"""

from __future__ import annotations

from mcp_specgen_runtime.jsonrpc.transport import Transport

from .lines import StdioTransport
from .memory import MemoryTransport, memory_pair
from .stdio import StdioClientTransport, stdio_client, stdio_server

__all__ = [
    "MemoryTransport",
    "StdioClientTransport",
    "StdioTransport",
    "Transport",
    "memory_pair",
    "stdio_client",
    "stdio_server",
]

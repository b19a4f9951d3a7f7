"""Transports: what carries JSON-RPC messages between two peers."""

from __future__ import annotations

from .base import Transport
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

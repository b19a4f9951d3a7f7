"""Transports: what carries JSON-RPC messages between two peers."""

from __future__ import annotations

from .base import Transport
from .memory import MemoryTransport, memory_pair

__all__ = ["MemoryTransport", "Transport", "memory_pair"]

"""The `_meta` keys of the 2026-07-28 request envelope and result stamp.

A modern request carries its protocol version, client and capabilities in
`params._meta` under these keys; a modern result names its server in
`result._meta`. Session, client and both HTTP ends share this one list.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ENVELOPE_KEYS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
]

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
"""The `params._meta` key naming a modern request's protocol version."""
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
"""The `params._meta` key holding a modern request's client capabilities."""
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
"""The `params._meta` key naming the client of a modern request."""
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
"""The `params._meta` key naming the least severe log level a modern request
wants `notifications/message` for."""
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
"""The `result._meta` key naming the server in modern results."""

ENVELOPE_KEYS: Final = frozenset(
    {META_PROTOCOL_VERSION, META_CLIENT_INFO, META_CLIENT_CAPABILITIES, META_LOG_LEVEL}
)
"""The `params._meta` keys a client adds to every modern request."""

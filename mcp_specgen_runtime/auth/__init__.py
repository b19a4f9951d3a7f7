"""Authorization (OAuth 2.1, as MCP requires over HTTP): the discovery
documents both sides share and scope strings; `auth.server` checks tokens.

Needs the `auth` extra (`pip install 'mcp-specgen-runtime[auth]'`) for `auth.server`.
"""

from __future__ import annotations

from .metadata import (
    PROTECTED_RESOURCE_WELL_KNOWN,
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    canonical_resource_url,
    protected_resource_metadata_path,
    protected_resource_metadata_url,
)
from .scopes import format_scope, parse_scope

__all__ = [
    "PROTECTED_RESOURCE_WELL_KNOWN",
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "canonical_resource_url",
    "format_scope",
    "parse_scope",
    "protected_resource_metadata_path",
    "protected_resource_metadata_url",
]

"""mcp-codegen: generate exact, versioned msgspec types from the MCP JSON Schema."""

from mcp_specgen_runtime._version import __version__

__all__ = ["__version__"]

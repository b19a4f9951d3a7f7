"""mcp-codegen: generate exact, versioned msgspec types from the MCP JSON Schema."""

__version__ = "0.1.0"

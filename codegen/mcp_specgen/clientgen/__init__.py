"""`mcp-codegen client`: a typed client package for a live MCP server.

`inspect` reads what the server offers, `schema_ir` turns its tool schemas
into the generator's IR, `emit` renders the package, `lock` records and
compares what the package was generated from, `run` ties them together.
"""

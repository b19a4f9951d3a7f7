"""The dev loop: `mcp-codegen dev` (serve an `App`, reload it on changes,
attach the MCP Inspector) and `mcp-codegen install` (a client's config
entry). `targets` names what to serve, `serve` runs it (the command both
write), `reload` restarts it, `stdio` shows how to start it over stdio,
`inspector` finds the Inspector, `clients` writes the MCP clients' config
files."""

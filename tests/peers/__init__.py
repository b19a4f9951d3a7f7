"""Real MCP peers (official SDKs, reference servers), installed by benchmarks.peers."""

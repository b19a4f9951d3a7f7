"""Authorization: OAuth 2.1 for MCP over HTTP.

The resource server's checks and the client's flow (`auth.client`).
"""

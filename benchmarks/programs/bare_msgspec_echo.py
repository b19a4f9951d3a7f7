"""The stdio benchmark's ceiling: an echo "server" with no MCP library at all.

Reads newline-delimited JSON-RPC from stdin, decodes each line with
`msgspec.json.decode` (untyped), answers `initialize` and `tools/call` with
canned-shape results (the call echoing its id and `arguments.message` as one
text block), ignores notifications, and flushes each answer line.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bare-msgspec-echo", "version": "1.0.0"},
}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one message, None for notifications."""
    if "id" not in message:
        return None
    method = message.get("method")
    if method == "initialize":
        result: dict[str, Any] = INITIALIZE_RESULT
    elif method == "tools/call":
        text = message["params"]["arguments"]["message"]
        result = {"content": [{"type": "text", "text": text}]}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    """Serve stdin to stdout until stdin closes."""
    decode, encode = msgspec.json.decode, msgspec.json.encode
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        reply = answer(decode(line))
        if reply is not None:
            out.write(encode(reply) + b"\n")
            out.flush()


if __name__ == "__main__":
    main()

"""A 2025-11-25 stdio server that negotiates, then dies on `tools/list`: it
writes a last word to stderr and exits with status 3.

Bare JSON lines, no runtime: the tests need a server that fails the way a real
one does, after the handshake.
"""

from __future__ import annotations

import json
import sys

LAST_WORD = "fatal: tools/list is broken"
EXIT_STATUS = 3


def reply(message: dict[str, object], **answer: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}))
    sys.stdout.write("\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "tools/list":
        sys.stderr.write(LAST_WORD + "\n")
        sys.exit(EXIT_STATUS)
    if method == "initialize":
        server = {"name": "dies-on-call", "version": "1"}
        tools: dict[str, object] = {}
        result: dict[str, object] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": tools},
            "serverInfo": server,
        }
        reply(message, result=result)
    elif "id" in message:
        reply(message, error={"code": -32601, "message": f"no {method}"})

"""A legacy stdio server that never answers a method it does not know (no
-32601), as some hand-written servers do: it costs a modern client the whole
`server/discover` probe. Answers `initialize` (2025-11-25), `tools/list` and
`tools/call` (the text: every method received so far, comma-separated)."""

from __future__ import annotations

import json
import sys
from typing import Any


def main() -> None:
    seen: list[str] = []
    result: dict[str, Any]
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        seen.append(method)
        if "id" not in message:
            continue
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "silent", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": []}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": ",".join(seen)}]}
        else:
            continue  # silence
        answer: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": result,
        }
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

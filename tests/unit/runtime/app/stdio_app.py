"""A scaffold-style `App` server over stdio, for the tests of its run path.

Tools: `echo` answers its message; `sleep` never answers; `leave` calls
`sys.exit`. A resource and a prompt as `mcp-codegen new` writes them.
Usage: stdio_app.py [MAX_IN_FLIGHT]  (default: the runtime's)
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from mcp_specgen_runtime.app import App

app = App("fuzzed", version="0.1.0")


@app.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@app.tool()
async def sleep() -> str:
    """Never answer."""
    await anyio.sleep_forever()
    return ""


@app.tool()
def leave() -> str:
    """Exit the process, or try to."""
    sys.exit(3)


@app.resource("info://fuzzed/about", mime_type="text/plain")
def about() -> str:
    """What this server is."""
    return "fuzzed 0.1.0"


@app.prompt(arguments={"name": "who to greet"})
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    options: dict[str, Any] = {}
    if len(sys.argv) > 1:
        options["max_in_flight"] = int(sys.argv[1])
    app.run(**options)

"""Checks stdio_server's protection of stdin and stdout from the inside.

While serving it writes noise to stdout every way it can and reads stdin
behind the transport's back, then sends {"ready": ...}; it echoes the next
message back and stops serving; after that it prints {"after": ...} on the
restored stdout.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import anyio.to_thread

from mcp_specgen_runtime.transports.stdio import stdio_server


def child(code: str) -> list[str]:
    """A Python child process that inherits stdin, stdout and stderr."""
    return [sys.executable, "-c", code]


async def main() -> None:
    early = sys.stdout
    async with stdio_server() as transport:
        print("print noise")
        await anyio.to_thread.run_sync(print, "thread noise")
        early.write("early reference noise\n")
        early.flush()
        os.write(1, b"fd noise\n")
        await anyio.run_process(child("print('child noise')"), stdout=None, stderr=None)
        # Readers other than the transport find stdin empty.
        steal = "import sys; print('child read', len(sys.stdin.read()))"
        await anyio.run_process(child(steal), stdout=None, stderr=None)
        stolen = len(sys.stdin.read())
        try:
            async with stdio_server():
                nested = "allowed"
        except RuntimeError:
            nested = "refused"
        ready = {
            "ready": True,
            "nested": nested,
            "stdout": sys.stdout is sys.stderr,
            "stolen": stolen,
        }
        await transport.send(json.dumps(ready).encode())
        await transport.send(await transport.receive())
    blocking = os.get_blocking(0) and os.get_blocking(1)
    print(json.dumps({"after": sys.stdout is early, "blocking": blocking}))


if __name__ == "__main__":
    anyio.run(main)

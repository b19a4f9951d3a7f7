"""An MCP server over stdio for the transport tests.

Tools: `echo` answers `arguments.message`; `noise` writes to stdout the ways
user code might (print, print from a thread, the file descriptor, a child
process) and answers "quiet"; `crash` exits with status 3 mid-request;
`exit` and `interrupt` raise SystemExit and KeyboardInterrupt; `sleep` never
answers.
Usage: server.py [MAX_LINE_LENGTH]
"""

from __future__ import annotations

import os
import sys

import anyio
import anyio.to_thread

from mcp_specgen_runtime.jsonrpc.connection import Connection
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher
from mcp_specgen_runtime.transports.stdio import DEFAULT_MAX_LINE_LENGTH, stdio_server
from mcp_specgen_types import v2025_11_25 as rev


class Server(rev.ServerHandlers):
    async def tools_call(self, params: rev.CallToolRequestParams) -> rev.CallToolResult:
        if params.name == "crash":
            os._exit(3)
        if params.name == "exit":
            sys.exit(4)
        if params.name == "interrupt":
            raise KeyboardInterrupt
        if params.name == "sleep":
            await anyio.sleep_forever()
        if params.name == "noise":
            print("print noise")
            await anyio.to_thread.run_sync(print, "thread noise")
            os.write(1, b"fd noise\n")
            await anyio.run_process(
                child("print('child noise')"), stdout=None, stderr=None
            )
            text = "quiet"
        else:
            text = str((params.arguments or {}).get("message", ""))
        return rev.CallToolResult(content=[rev.TextContent(text=text)])


def child(code: str) -> list[str]:
    """A Python child process that inherits stdin, stdout and stderr."""
    return [sys.executable, "-c", code]


async def main(max_line_length: int) -> None:
    async with (
        stdio_server(max_line_length=max_line_length) as transport,
        Connection(transport, Dispatcher(Server()).dispatch) as connection,
    ):
        await connection.wait_closed()
    print("server stopped", file=sys.stderr)


if __name__ == "__main__":
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MAX_LINE_LENGTH
    anyio.run(main, limit)

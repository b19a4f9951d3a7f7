"""Serve the `App` a TARGET names (see `targets`): the command `mcp-codegen
dev` restarts on changes and `mcp-codegen install` writes into a client's
config.

    python -m mcp_specgen.dev.serve server.py            # stdio
    python -m mcp_specgen.dev.serve --http --port 8000 pkg.module:app

Over stdio, stdout carries MCP messages only; errors go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .targets import TargetError, load_app, parse_target

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["RELOAD_SHUTDOWN_S", "main"]

RELOAD_SHUTDOWN_S = 1.0
"""Seconds a stopping HTTP server gives open responses (an Inspector's
stream): `dev` restarts it on each change, and waiting longer only delays
the new code."""


def main(argv: Sequence[str] | None = None) -> None:
    """Parse `argv`, load the App and serve it until stopped."""
    parser = argparse.ArgumentParser(
        prog="python -m mcp_specgen.dev.serve",
        description="Serve the App a TARGET names (stdio unless --http).",
    )
    parser.add_argument("target", help="file.py[:app] or pkg.module[:app]")
    parser.add_argument(
        "--app-dir",
        type=Path,
        default=Path.cwd(),
        help="folder a module TARGET is imported from (default: this one)",
    )
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    try:
        app = load_app(parse_target(args.target, args.app_dir))
    except TargetError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
    if args.http:
        app.run(
            "http", host=args.host, port=args.port, shutdown_timeout_s=RELOAD_SHUTDOWN_S
        )
    else:
        app.run()


if __name__ == "__main__":
    main()

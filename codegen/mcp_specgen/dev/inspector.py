"""The MCP Inspector for `mcp-codegen dev`: the command that attaches it,
and whether it can run here.

It is an npm package needing Node.js 22.19 or newer, run with `npx` (which
fetches it on first use). `$MCP_INSPECTOR_COMMAND` replaces the `npx ...`
prefix with another installed copy (e.g. this repository's, from `python -m
benchmarks.peers inspector`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

__all__ = [
    "INSPECTOR_ENV",
    "INSPECTOR_PACKAGE",
    "INSPECTOR_VERSION",
    "MIN_NODE",
    "for_http",
    "for_stdio",
    "inspector_prefix",
    "missing_node",
]

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
INSPECTOR_VERSION = "2.12.0"
"""Pinned, as the repository's tests use it (`benchmarks.node22`)."""
MIN_NODE = (22, 19)
"""The Inspector's `engines.node`."""
INSPECTOR_ENV = "MCP_INSPECTOR_COMMAND"


def inspector_prefix() -> list[str]:
    """The command starting the Inspector, before its own arguments."""
    custom = os.environ.get(INSPECTOR_ENV)
    if custom:
        return shlex.split(custom)
    return ["npx", "-y", f"{INSPECTOR_PACKAGE}@{INSPECTOR_VERSION}"]


def for_http(url: str) -> list[str]:
    """The Inspector attached to the Streamable HTTP endpoint `url`."""
    return [*inspector_prefix(), "--transport", "http", "--server-url", url]


def for_stdio(command: list[str]) -> list[str]:
    """The Inspector starting the stdio server `command` itself."""
    return [*inspector_prefix(), "--", *command]


def missing_node() -> str | None:
    """Why `npx` cannot run the Inspector here (None: it can, or
    `$MCP_INSPECTOR_COMMAND` names another)."""
    if os.environ.get(INSPECTOR_ENV):
        return None
    wanted = ".".join(map(str, MIN_NODE))
    node, npx = shutil.which("node"), shutil.which("npx")
    if node is None or npx is None:
        return (
            f"the MCP Inspector needs Node.js {wanted} or newer with npx "
            "(https://nodejs.org); none is on PATH"
        )
    try:
        shown = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        shown = ""
    found = re.match(r"v(\d+)\.(\d+)", shown.strip())
    if found is None or (int(found[1]), int(found[2])) < MIN_NODE:
        return (
            f"the MCP Inspector needs Node.js {wanted} or newer; "
            f"{shown.strip() or 'an unknown version'} is on PATH"
        )
    return None

"""`mcp-codegen dev --stdio`: over stdio the client starts the server itself,
so `dev` serves nothing; it shows the command, and the Inspector command
that starts it (running the latter with `--inspector`). No reload: a restart
would end the client's session."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
from typing import TYPE_CHECKING

from .inspector import for_stdio, missing_node
from .reload import runner_command

if TYPE_CHECKING:
    from collections.abc import Callable

    from .targets import Target

__all__ = ["attach_stdio"]


def attach_stdio(
    target: Target,
    *,
    inspector: bool,
    echo: Callable[[str], None],
    fail: Callable[[str], None],
) -> int:
    """Show how to start `target` over stdio; with `inspector`, run the
    Inspector on it until it ends. The exit status (`fail` is told why
    the Inspector cannot run, and 1 returned)."""
    command = runner_command(target)
    attach = for_stdio(command)
    echo("over stdio the client starts the server; the command:")
    echo(f"  {shlex.join(command)}")
    echo("attach the MCP Inspector (it starts the server itself):")
    echo(f"  {shlex.join(attach)}")
    if not inspector:
        return 0
    problem = missing_node()
    if problem is not None:
        fail(problem)
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        return subprocess.call(attach)
    return 0

"""`progress_app` whose `server/discover` fails the way a server meets a
result it cannot build (a required field nobody fills): the engine answers
-32603. Run as a program it serves stdio.

Usage: broken_discover_app.py VERSION...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.protocol.session import ServerSession
from tests.unit.runtime.client.progress_app import make_app

FAILURE = "Missing required argument 'result_type'"


def broken(session: ServerSession) -> ServerSession:
    """`session`, its discover result failing to build."""

    def discover_result(version: str) -> bytes:
        raise TypeError(FAILURE)

    session.discover_result = discover_result  # type: ignore[method-assign]
    return session


class BrokenApp(App):
    """An `App` whose sessions fail `server/discover`."""

    def session(self) -> ServerSession:
        return broken(super().session())


def make_broken_app(versions: Sequence[str]) -> App:
    """`progress_app.make_app(versions)`, failing `server/discover`."""
    return make_app(versions, BrokenApp)


if __name__ == "__main__":
    make_broken_app(sys.argv[1:]).run("stdio")

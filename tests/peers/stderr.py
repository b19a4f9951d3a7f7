"""What a server wrote on stderr, less the one start line every HTTP server
logs (`transports/http/startline.py`): the fixtures that insist on a silent
stderr mean no warnings and no errors, not no announcement."""

from __future__ import annotations

import re

START_LINE = re.compile(r'^MCP server ".*" \S+ listening on \S+', re.MULTILINE)


def without_start_line(text: str) -> str:
    """`text` without the HTTP server's start line(s)."""
    return "".join(
        line for line in text.splitlines(keepends=True) if not START_LINE.match(line)
    )

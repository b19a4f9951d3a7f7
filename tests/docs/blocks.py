"""The fenced code blocks of a Markdown page, as the docs tests run them.

The convention (shared by every page under docs/ and the README): every
```python block is executed, in page order, all blocks of one page in one
namespace; a block whose fence follows the line `<!-- docs: serve -->` is a
server program, run as its own process over stdio instead. Other languages
(console, sh, toml, ...) are shown, never run.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

SERVE_MARKER = "<!-- docs: serve -->"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, its code (dedented), where it starts."""

    language: str
    code: str
    line: int
    serve: bool


def blocks(text: str) -> list[Block]:
    """Every fenced block of `text`, in order; `line` is the fence's (1-based)."""
    found: list[Block] = []
    lines = text.splitlines()
    previous = ""
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            if lines[index].strip():
                previous = lines[index].strip()
            index += 1
            continue
        fence, start = opening["fence"], index
        info = opening["info"].strip()
        body: list[str] = []
        index += 1
        while index < len(lines):
            closing = _FENCE.match(lines[index])
            if closing and closing["fence"].startswith(fence) and not closing["info"]:
                break
            body.append(lines[index])
            index += 1
        else:
            raise ValueError(f"line {start + 1}: the fence {fence} is never closed")
        language = info.split()[0].lower() if info else ""
        code = textwrap.dedent("\n".join(body)) + "\n"
        found.append(Block(language, code, start + 1, previous == SERVE_MARKER))
        previous = ""
        index += 1
    return found


def python_blocks(path: Path) -> list[Block]:
    """The blocks of the page at `path` that the tests execute."""
    return [
        b for b in blocks(path.read_text(encoding="utf-8")) if b.language == "python"
    ]

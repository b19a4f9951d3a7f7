"""Wrap description text for a docstring: paragraphs refilled as paragraphs,
list items as list items, code and tables kept as they are.

A description's line breaks come from the comment it was written in, not
from its meaning: inside a paragraph they are refilled to the width, but a
list item always starts its own line and a blank line stays a blank line.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_VERBATIM_START = ("|", "#", ">")


@dataclass
class _Block:
    kind: str
    """`paragraph`, `item`, `verbatim` or `blank`."""
    indent: str = ""
    marker: str = ""
    lines: list[str] = field(default_factory=list[str])


def wrap_description(text: str, width: int) -> str:
    """`text` with paragraphs and list items filled to `width` columns."""
    out: list[str] = []
    for block in _blocks(text):
        if block.kind == "blank":
            if out and out[-1]:
                out.append("")
        elif block.kind == "verbatim":
            out += block.lines
        else:
            first = block.indent + (block.marker + " " if block.marker else "")
            out.append(
                textwrap.fill(
                    " ".join(block.lines),
                    width,
                    initial_indent=first,
                    subsequent_indent=" " * len(first),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    current: _Block | None = None
    fenced = False
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        lead = line[: len(line) - len(line.lstrip())]
        if fenced or stripped.startswith("```"):
            if current is None or current.kind != "verbatim" or not fenced:
                current = _Block("verbatim")
                blocks.append(current)
            current.lines.append(line)
            if stripped.startswith("```"):
                fenced = not fenced
                if not fenced:
                    current = None
            continue
        if not stripped:
            blocks.append(_Block("blank"))
            current = None
            continue
        item = _ITEM.match(line)
        if item is not None:
            current = _Block("item", item[1], item[2], [item[3].strip()])
            blocks.append(current)
        elif (
            current is not None
            and current.kind == "item"
            and len(lead) > len(current.indent)
        ):
            current.lines.append(stripped)
        elif stripped.startswith(_VERBATIM_START) or (
            len(lead) >= 4 and (current is None or current.kind == "verbatim")
        ):
            if current is None or current.kind != "verbatim":
                current = _Block("verbatim")
                blocks.append(current)
            current.lines.append(line)
        elif current is not None and current.kind == "paragraph":
            current.lines.append(stripped)
        else:
            current = _Block("paragraph", lead, "", [stripped])
            blocks.append(current)
    return blocks

"""TSDoc in schema descriptions, rendered as the plain text of a docstring.

The schema's descriptions come from the specification's TypeScript comments:
inline links (`{@link Tool}`, `{@link CallToolRequest | tools/call}`) and
block tags (`@see`, `@example`, `@deprecated`) are markup for a TypeScript
documentation tool, not text a Python reader can use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

_LINK = re.compile(r"\{@link(?:code|plain)?\s+([^}]*?)\s*\}")
_TAG = re.compile(r"^@([A-Za-z]+)\b[ \t]*(.*)$")
_LABELS = {
    "see": "See",
    "deprecated": "Deprecated",
    "default": "Default",
    "defaultvalue": "Default",
    "returns": "Returns",
    "throws": "Raises",
}
_DROPPED = frozenset({"remarks", "privateremarks", "internal", "hidden", "category"})


def render_tsdoc(text: str, names: Collection[str] = ()) -> str:
    """`text` with its TSDoc links and block tags turned into plain text.

    `{@link X | label}` and `{@link X label}` become the label (in backticks
    when it is one word, such as a method name), `{@link X}` becomes `` `X` ``.
    `names` (the schema's definition names) recovers the label of a link
    whose `|` the schema generator dropped (`{@link CallToolRequesttools/call}`
    is `CallToolRequest` + `tools/call`).
    """
    return _block_tags(_LINK.sub(lambda match: _link(match[1], names), text))


def _link(body: str, names: Collection[str]) -> str:
    target, bar, label = body.partition("|")
    if not bar:
        target, _, label = body.partition(" ")
        if target not in names:
            prefix = max((n for n in names if body.startswith(n)), key=len, default="")
            if prefix and body[len(prefix) :][:1] not in (".", "#", " "):
                target, label = prefix, body[len(prefix) :]
    target, label = target.strip(), label.strip()
    if not label:
        return f"`{target}`"
    return _label(label)


def _label(label: str) -> str:
    """A one-word label (`tools/call`) reads as code; a phrase as text."""
    if "`" in label or any(char.isspace() for char in label):
        return label
    return f"`{label}`"


def _block_tags(text: str) -> str:
    """Block tags as labelled paragraphs; `@example` bodies as indented code."""
    out: list[str] = []
    in_example = False
    for line in text.splitlines():
        match = _TAG.match(line.strip())
        if match is None:
            if not in_example:
                out.append(line)
            elif not line.strip().startswith("```"):
                out.append("    " + line if line.strip() else "")
            continue
        tag, rest = match[1].lower(), match[2].strip()
        in_example = tag == "example"
        if out and out[-1].strip():
            out.append("")
        if in_example:
            out.append(f"Example: {rest}" if rest else "Example:")
            out.append("")
        elif tag in _DROPPED:
            if rest:
                out.append(rest)
        else:
            label = _LABELS.get(tag, tag.capitalize())
            out.append(f"{label}: {rest}" if rest else f"{label}.")
    return "\n".join(out)

"""Python names for what a server offers: methods, parameters, the class."""

from __future__ import annotations

import keyword
import re
import warnings

from mcp_specgen.naming import snake_case

from .inspect import ClientGenError

CLASS_MEMBERS = frozenset({"client", "close"})
"""Names the generated class itself uses; a tool of that name gets `_`."""

KEYWORD_ONLY = frozenset({"self", "timeout"})
"""Parameter names every method has; a schema property of that name gets `_`."""


def identifier(name: str) -> str:
    """`get-sum` -> `get_sum`, `Dynamic Text` -> `dynamic_text`; keywords get `_`."""
    text = snake_case(re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_"))
    text = re.sub(r"_+", "_", text) or "unnamed"
    if text[0].isdigit():
        text = "n_" + text
    if keyword.iskeyword(text):
        text += "_"
    return text


def parameter(name: str) -> str:
    """A keyword parameter's name (`resourceId` -> `resource_id`)."""
    text = identifier(name)
    return text + "_" if text in KEYWORD_ONLY else text


def class_name(server_name: str) -> str:
    """`mcp-servers/everything` -> `EverythingClient`."""
    last = server_name.rstrip("/").rsplit("/", 1)[-1]
    parts = re.split(r"[^0-9a-zA-Z]+", last)
    stem = "".join(part[:1].upper() + part[1:] for part in parts if part)
    if not stem or stem[0].isdigit():
        stem = "Server" + stem
    return stem + "Client"


class NameClashWarning(UserWarning):
    """Two things wanted one Python name; the later one got a number."""


class Namer:
    """Hands out method names; of two things wanting one name the later gets
    `_2`, `_3`... (callers claim in a fixed order, so this is deterministic)."""

    def __init__(self) -> None:
        self.taken: dict[str, str] = {}

    def claim(self, name: str, what: str) -> str:
        """`name` for `what` (e.g. "tool 'x'").

        Warns:
            NameClashWarning: another thing already has that name.
        """
        if name in CLASS_MEMBERS:
            name += "_"
        wanted, number = name, 2
        while name in self.taken:
            name = f"{wanted}_{number}"
            number += 1
        if name != wanted:
            warnings.warn(
                f"{what} and {self.taken[wanted]} both want the method name "
                f"{wanted!r}: {what} gets {name!r}",
                NameClashWarning,
                stacklevel=2,
            )
        self.taken[name] = what
        return name


def unique_parameters(names: list[tuple[str, str]], what: str) -> None:
    """Check that no two wire names map to one parameter name.

    Raises:
        ClientGenError: two of them do.
    """
    seen: dict[str, str] = {}
    for wire, py in names:
        if py in seen:
            raise ClientGenError(
                f"{what}: {seen[py]!r} and {wire!r} both map to the parameter {py!r}"
            )
        seen[py] = wire

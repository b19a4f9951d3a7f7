"""Python names derived mechanically from schema names."""

from __future__ import annotations

import keyword
import re

ANNOTATION_NAMES = frozenset(
    {"str", "int", "float", "bool", "list", "dict", "msgspec", "typing"}
)
"""Names generated annotations refer to; a field of that name is suffixed with `_`."""

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_IDENTIFIER = re.compile(r"[^0-9a-zA-Z_]+")


def snake_case(name: str) -> str:
    """`mimeType` -> `mime_type`, `URLElicitation` -> `url_elicitation`."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def field_name(wire_name: str) -> str:
    """The Python attribute name of a JSON property.

    `_meta` -> `meta`, `$schema` -> `schema`, `io.modelcontextprotocol/logLevel`
    -> `log_level`, keywords get a trailing underscore.
    """
    name = wire_name.rsplit("/", 1)[-1]
    name = _NOT_IDENTIFIER.sub("_", name).strip("_")
    name = snake_case(name)
    if not name:
        name = "field"
    if name[0].isdigit():
        name = "f_" + name
    # Soft keywords (`match`, `type`) are valid attribute names, and which words
    # are soft keywords depends on the Python version: only hard ones are renamed.
    # Names the generated annotations use would shadow them in the class body.
    if keyword.iskeyword(name) or name in ANNOTATION_NAMES:
        name += "_"
    return name


def method_name(method: str) -> str:
    """`tools/call` -> `tools_call`; camelCase parts are split.

    Separators become underscores and camelCase becomes snake_case.
    """
    return "_".join(snake_case(part) for part in re.split(r"[/.\-]", method) if part)


def method_constant(method: str, *, notification: bool) -> str:
    """`tools/call` -> `METHOD_TOOLS_CALL`.

    Notifications drop their `notifications/` prefix and start with `NOTIFICATION_`.
    """
    stem = method.removeprefix("notifications/") if notification else method
    prefix = "NOTIFICATION_" if notification else "METHOD_"
    return prefix + method_name(stem).upper()


def inline_type_name(owner: str, wire_name: str) -> str:
    """The name of an inline type: owner + property in PascalCase."""
    parts = re.split(r"[^0-9a-zA-Z]+", wire_name.rsplit("/", 1)[-1])
    return owner + "".join(part[:1].upper() + part[1:] for part in parts if part)

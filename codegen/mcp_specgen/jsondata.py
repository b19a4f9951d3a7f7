"""Type guards for parsed JSON (and TOML) data of unknown shape.

`json.loads` returns `Any`, and `isinstance(node, dict)` only tells a type
checker "a dict of unknown keys and values". Parsed JSON objects always have
string keys, so these guards narrow a node to `dict[str, Any]` or `list[Any]`:
the values stay `Any`, to be checked where they are used.
"""

from __future__ import annotations

from typing import Any, TypeGuard


def is_object(node: object) -> TypeGuard[dict[str, Any]]:
    """True when `node` is a JSON object."""
    return isinstance(node, dict)


def is_array(node: object) -> TypeGuard[list[Any]]:
    """True when `node` is a JSON array."""
    return isinstance(node, list)

"""Import names a generated or scaffolded package may not take."""

from __future__ import annotations

import keyword
import sys

OURS = frozenset({"mcp_specgen", "mcp_specgen_runtime", "mcp_specgen_types"})
"""The generator's, the runtime's and the types' import names."""


def is_identifier(name: str) -> bool:
    """Whether `name` can be imported (an identifier, not a keyword)."""
    return name.isidentifier() and not keyword.iskeyword(name)


def shadows(name: str) -> bool:
    """Whether a package `name` would hide a standard-library module or ours."""
    return name in sys.stdlib_module_names or name in OURS

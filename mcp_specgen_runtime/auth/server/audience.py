"""The RFC 8707 audience check both verifiers make."""

from __future__ import annotations

import typing

from ..metadata import canonical_resource_url

__all__ = ["names_resource"]


def names_resource(audience: object, resources: frozenset[str]) -> bool:
    """Whether an `aud` value (a string or a list of them) names one of
    `resources` (canonical resource URLs), compared in canonical form."""
    named: list[object] = (
        [*typing.cast("list[object]", audience)]
        if isinstance(audience, list)
        else [audience]
    )
    for value in named:
        if isinstance(value, str):
            try:
                if canonical_resource_url(value) in resources:
                    return True
            except ValueError:
                continue
    return False

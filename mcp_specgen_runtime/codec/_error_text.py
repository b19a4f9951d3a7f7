"""msgspec's error text: where an error is, and one reason for a union."""

from __future__ import annotations

import re
import typing
from typing import Any

from msgspec import ValidationError

if typing.TYPE_CHECKING:
    from collections.abc import Callable

UNKNOWN_FIELD = "Object contains unknown field"


INSIDE = re.compile(r"(.*) \(at `\$([^`]*)` inside\)", re.DOTALL)
"""The note `dec_hook` leaves for a location msgspec would otherwise lose."""

_EXPECTED = re.compile(r"Expected `([^`]+)`, got `([^`]+)`")


def union_reason(errors: list[str]) -> str:
    """One reason for a value no member accepts: `Expected `a | b`, got `c``
    when every member refused its JSON type alone, else each reason in turn."""
    if not errors:
        return "no type accepts the value"
    kinds = [_EXPECTED.fullmatch(error) for error in errors]
    got = {match.group(2) for match in kinds if match}
    if all(kinds) and len(got) == 1:
        expected = dict.fromkeys(match.group(1) for match in kinds if match)
        return f"Expected `{' | '.join(expected)}`, got `{got.pop()}`"
    # Members of the right JSON kind failed deeper down: their reasons matter,
    # "expected an object, got an array" from the others does not.
    deeper = [error for error, kind in zip(errors, kinds, strict=True) if not kind]
    return " or ".join(dict.fromkeys(deeper or errors))


def at(
    segment: str, func: Callable[..., Any], value: Any, tp: Any, allow_extra: bool
) -> Any:
    """Call `func`, and prefix the path of a validation error with `segment`."""
    try:
        return func(value, tp, allow_extra=allow_extra)
    except ValidationError as exc:
        message = str(exc)
        located = LOCATION.fullmatch(message)
        if located:
            head, path = located.groups()
            raise ValidationError(f"{head} - at `${segment}{path}`") from None
        raise ValidationError(f"{message} - at `${segment}`") from None


LOCATION = re.compile(r"(.*) - at `\$([^`]*)`", re.DOTALL)
"""msgspec's error text: the reason, then where, at the very end."""

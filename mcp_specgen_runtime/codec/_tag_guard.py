"""The tag guard: makes msgspec insist on the tag of a tagged Struct."""

from __future__ import annotations

import typing
from typing import Any

import msgspec

_tag_guards: dict[Any, Any] = {}


def require_tag(tp: Any) -> Any:
    """For a tagged Struct, a union that makes msgspec insist on the tag.

    msgspec checks a tag only when it chooses between union members; decoding a
    tagged Struct on its own accepts a message without the tag, which the schema
    (where the tag is a required const) rejects. A second member whose tag can
    never occur forces the check at no measurable cost.
    """
    try:
        guarded = _tag_guards.get(tp)
    except TypeError:  # an unhashable type expression: nothing to guard
        return tp
    if guarded is None:
        guarded = _tag_guards[tp] = _with_tag_guard(tp)
    return guarded


def _with_tag_guard(tp: Any) -> Any:
    config = getattr(tp, "__struct_config__", None)
    if not isinstance(tp, type) or config is None or config.tag_field is None:
        return tp
    guard = msgspec.defstruct(
        f"{tp.__name__}TagGuard",
        [("never", Never)],
        tag_field=config.tag_field,
        tag="\x00 never a tag" if isinstance(config.tag, str) else -(2**62),
    )
    return typing.Union[tp, guard]  # noqa: UP007 - built at run time


class Never:
    """The type of the guard's one required field: no JSON value decodes to it
    (`dec_hook` refuses it), so no message ever comes out as a guard."""

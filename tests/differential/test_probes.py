"""Hand-written instances for runtime corners the generated instances cannot reach.

A known bug is marked `xfail` (strict, see pyproject): when it is fixed the
test passes unexpectedly, fails, and its marker must be removed; from then on
it guards against the bug coming back.
"""

from __future__ import annotations

import json

import msgspec
import pytest
from differential_engine import (
    REVISIONS,
    check,
    check_definition,
    definition_names,
    json_equal,
    revision,
)
from leniencies import ELICIT_NUMBER_REVISIONS, explaining

from mcp_specgen_runtime import convert, decode, to_builtins

GUARD_TAG = "\x00 never a tag"
"""The tag value of the guard member
`mcp_specgen_runtime.codec._tag_guard._with_tag_guard` adds to a standalone tagged
struct, to make msgspec check the tag."""


def _tagged_structs() -> list[tuple[str, str, str]]:
    found = []
    for rev in REVISIONS:
        module = revision(rev).module
        for name in definition_names(rev):
            tp = getattr(module, name)
            if (
                isinstance(tp, type)
                and issubclass(tp, msgspec.Struct)
                and tp.__struct_config__.tag_field is not None
            ):
                found.append((rev, name, tp.__struct_config__.tag_field))
    return found


@pytest.mark.parametrize(
    ("rev", "name", "tag"),
    [("draft", "TextContent", "type"), ("2025-06-18", "CallToolRequest", "method")],
)
def test_guard_tag_value_is_rejected(rev: str, name: str, tag: str) -> None:
    tp = revision(rev).type_of(name)
    instance = {tag: GUARD_TAG, "x-other": 1}
    assert not revision(rev).validator(name).is_valid(instance)
    with pytest.raises(msgspec.ValidationError):
        convert(instance, tp)
    with pytest.raises(msgspec.ValidationError):
        decode(json.dumps(instance), tp)


@pytest.mark.parametrize(
    ("rev", "name", "tag"),
    [pytest.param(*t, id=f"{t[0]}/{t[1]}") for t in _tagged_structs()],
)
def test_tagged_struct_with_unknown_keys_round_trips(
    rev: str, name: str, tag: str
) -> None:
    """The slow path (unknown keys) of a standalone tagged struct keeps the tag."""
    tp = revision(rev).type_of(name)
    base = next(
        o.instance
        for o in check_definition(rev, name).outcomes
        if o.schema_valid and o.accepted and isinstance(o.instance, dict)
    )
    instance = {**base, "x-unknown": {"a": [1, 2.5, None]}}
    assert revision(rev).validator(name).is_valid(instance)
    value = convert(instance, tp)
    assert type(value) is tp
    assert json_equal(to_builtins(value), instance)
    value = decode(json.dumps(instance), tp)
    assert type(value) is tp


@pytest.mark.parametrize("rev", ELICIT_NUMBER_REVISIONS)
def test_a_fractional_elicitation_answer_is_the_listed_leniency(rev: str) -> None:
    """Each revision's override is in force, and explained by its entry."""
    instance = {"action": "accept", "content": {"amount": 2.5, "count": 2}}
    outcome = check(revision(rev), "ElicitResult", "probe", instance)
    assert (outcome.problem, outcome.codec_problem) == ("accepts-invalid", None)
    assert json_equal(outcome.output, instance)
    assert explaining(outcome) == [("*", "ElicitResult")]

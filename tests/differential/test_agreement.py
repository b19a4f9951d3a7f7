"""jsonschema and the generated types agree on every definition of every revision.

For each definition, instances are its examples, values generated from the
schema (fixed seed, see `differential_engine.Generator`) and mutations of the
valid ones. For each instance: `jsonschema.is_valid(x)` equals "`convert(x, T)`
succeeds", unless an entry of `leniencies.LENIENCIES` explains the difference;
every valid x round-trips (`to_builtins(convert(x, T)) == x`, ints and floats
told apart); `decode`/`encode` say what `convert`/`to_builtins` say.
"""

from __future__ import annotations

from collections import Counter
from fnmatch import fnmatchcase
from typing import Any

import msgspec
import pytest
from differential_engine import (
    MUTATION_KINDS,
    REVISIONS,
    all_definitions,
    check_definition,
    definition_names,
    revision,
)
from leniencies import (
    ELICIT_NUMBER_REVISIONS,
    LENIENCIES,
    MODERN_REVISIONS,
    RESULT_TYPES,
    explaining,
)

from mcp_specgen_runtime import ValidationError, convert
from mcp_specgen_types import MODULES


@pytest.mark.parametrize(
    ("rev", "name"), [pytest.param(r, n, id=f"{r}/{n}") for r, n in all_definitions()]
)
def test_definition_agrees_with_schema(rev: str, name: str) -> None:
    result = check_definition(rev, name)
    assert not result.generation_failed, "no generated instance is schema-valid"
    assert any(o.schema_valid for o in result.outcomes)
    assert any(not o.schema_valid for o in result.outcomes)
    unexplained = [o for o in result.disagreements if not explaining(o)]
    assert (
        not unexplained
    ), f"{len(unexplained)} unexplained disagreement(s):\n" + "\n".join(
        o.describe() for o in unexplained[:5]
    )


@pytest.mark.parametrize(
    "key", [pytest.param(k, id=f"{k[0]}/{k[1]}") for k in LENIENCIES]
)
def test_leniency_entry_is_exercised(key: tuple[str, str]) -> None:
    """Strict: an entry that explains no disagreement any more must go."""
    explained = [
        o
        for rev in REVISIONS
        if fnmatchcase(rev, key[0])
        for name in definition_names(rev)
        for o in check_definition(rev, name).disagreements
        if key in explaining(o)
    ]
    assert explained, f"leniency {key} explains no disagreement: remove it"


@pytest.mark.parametrize("rev", MODERN_REVISIONS)
def test_result_type_leniency_covers_exactly_the_result_types(rev: str) -> None:
    """Leniency 1 concerns each definition with `resultType` but InputRequiredResult."""
    definitions = revision(rev).definitions
    with_result_type = {
        name
        for name, node in definitions.items()
        if "resultType" in node.get("properties", {})
    }
    assert with_result_type - {"InputRequiredResult"} == set(RESULT_TYPES)
    # InputRequiredResult keeps it required: never accepted without it.
    tp = revision(rev).type_of("InputRequiredResult")
    with pytest.raises(ValidationError):
        convert({"requestState": "s"}, tp)


def test_elicit_number_leniency_covers_exactly_the_revisions_lacking_number() -> None:
    """Leniency 3 concerns each revision whose `ElicitResult.content` values
    may be integers but not numbers, while `NumberSchema` asks for numbers."""

    def value_types(node: dict[str, Any]) -> set[str]:
        found = set(node.get("type", []))
        for member in node.get("anyOf", []):
            found |= value_types(member)
        return found

    lacking = set()
    for rev in REVISIONS:
        definitions = revision(rev).definitions
        if "ElicitResult" not in definitions:
            continue
        content = definitions["ElicitResult"]["properties"]["content"]
        types = value_types(content["additionalProperties"])
        number = definitions["NumberSchema"]["properties"]["type"]["enum"]
        if "integer" in types and "number" not in types and "number" in number:
            lacking.add(rev)
    assert lacking == set(ELICIT_NUMBER_REVISIONS)


@pytest.mark.parametrize("rev", list(REVISIONS))
def test_every_tagged_struct_rejects_a_missing_tag_standalone(rev: str) -> None:
    """Once a leniency (msgspec checks a tag only inside a union), now agreement.

    Each struct that is a msgspec tagged-union member was checked on its own
    without its tag (`type`/`method`), and the codec rejected it as jsonschema
    does.
    """
    module = revision(rev).module
    tagged = {
        name: tp.__struct_config__.tag_field
        for name in definition_names(rev)
        if isinstance(tp := getattr(module, name), type)
        and issubclass(tp, msgspec.Struct)
        and tp.__struct_config__.tag_field is not None
    }
    assert tagged
    for name, tag in tagged.items():
        dropped = [
            o
            for o in check_definition(rev, name).outcomes
            if o.origin.startswith(f"mutation:drop-key@$.{tag} ")
        ]
        assert dropped, f"{name}: no instance without its tag `{tag}` was checked"
        assert not any(o.accepted or o.schema_valid for o in dropped), name


@pytest.mark.parametrize("rev", list(REVISIONS))
def test_every_mutation_kind_is_exercised(rev: str) -> None:
    kinds: Counter[str] = Counter()
    invalid: Counter[str] = Counter()
    for name in definition_names(rev):
        for o in check_definition(rev, name).outcomes:
            kind = o.mutation_kind
            if kind is not None:
                kinds[kind] += 1
                invalid[kind] += not o.schema_valid
    assert set(kinds) == set(MUTATION_KINDS)
    # These always break something somewhere (the others may only reshape).
    for kind in (
        "root-wrong-type",
        "drop-key",
        "wrong-type",
        "wrong-const",
        "wrong-item",
    ):
        assert invalid[kind] > 0, kind


def test_revisions_are_the_generated_ones() -> None:
    assert {rev: f"mcp_specgen_types.{m}" for rev, m in REVISIONS.items()} == MODULES


def test_every_definition_has_a_type() -> None:
    missing = [
        (rev, name)
        for rev, name in all_definitions()
        if not hasattr(revision(rev).module, name)
    ]
    assert not missing

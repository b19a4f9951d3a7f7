"""Every example shipped with a schema decodes into its type and encodes back as is."""

from __future__ import annotations

import json
from importlib import import_module

import pytest
from differential_engine import (
    EXAMPLE_REVISIONS,
    REVISIONS,
    canonical,
    example_files,
    examples_dir,
    json_equal,
)

from mcp_specgen_runtime import decode, encode

EXPECTED_EXAMPLES = 129
"""Example files per revision folder (2026-07-28 and draft)."""

CASES = [
    pytest.param(rev, path, id=f"{rev}/{path.parent.name}/{path.name}")
    for rev in EXAMPLE_REVISIONS
    for path in example_files(rev)
]


@pytest.mark.parametrize("rev", EXAMPLE_REVISIONS)
def test_example_count(rev: str) -> None:
    assert examples_dir(rev).is_dir(), f"{examples_dir(rev)} is missing"
    assert len(example_files(rev)) == EXPECTED_EXAMPLES


@pytest.mark.parametrize(("rev", "path"), CASES)
def test_example_round_trips(rev: str, path) -> None:  # type: ignore[no-untyped-def]
    module = import_module(f"mcp_specgen_types.{REVISIONS[rev]}")
    tp = getattr(module, path.parent.name)
    data = path.read_bytes()
    value = decode(data, tp)
    encoded = json.loads(encode(value))
    original = json.loads(data)
    assert json_equal(encoded, original), (
        f"encode(decode(x)) differs:\n  in:  {canonical(original)}\n"
        f"  out: {canonical(encoded)}"
    )

"""Helpers of the golden tests: the synthetic cases and their rendering.

Each case is a folder of `tests/cases/`: `schema.json` (an in-memory schema,
2020-12 or draft-07) and `expected/types.py` (the reviewed output of
`render_types` for it). Every case is rendered as revision `golden`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from mcp_specgen.emit import render_types
from mcp_specgen.pipeline import revision_from_document

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
REVISION = "golden"
"""The revision name of every case (short: the generated header is one line)."""
UPDATE_ENV = "MCP_CODEGEN_UPDATE_GOLDEN"
"""Set to 1 to rewrite the expected files from the generator (never in CI)."""


def case_names() -> list[str]:
    """Every case folder, sorted."""
    return sorted(p.name for p in CASES_DIR.iterdir() if (p / "schema.json").is_file())


def case_schema(case: str) -> dict[str, Any]:
    """The schema document of `case`."""
    document: dict[str, Any] = json.loads(
        (CASES_DIR / case / "schema.json").read_text(encoding="utf-8")
    )
    return document


def expected_path(case: str) -> Path:
    """The reviewed `types.py` of `case`."""
    return CASES_DIR / case / "expected" / "types.py"


@functools.cache
def render_case(case: str) -> str:
    """`types.py` of `case`, rendered now by the generator."""
    return render_types(revision_from_document(case_schema(case), REVISION))


def document(defs: dict[str, Any]) -> dict[str, Any]:
    """An inline 2020-12 schema holding `defs`."""
    return {"$schema": DIALECT_2020_12, "$defs": defs}


def render_defs(defs: dict[str, Any], name: str = "inline") -> str:
    """`types.py` of an inline 2020-12 schema holding `defs`."""
    return render_types(revision_from_document(document(defs), name))

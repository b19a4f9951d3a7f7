"""`python -m benchmarks report`: the README's tables from a results file.

Rendered from the committed figures of earlier runs (`docs/benchmarks/`), so
the cells can be compared with the README's tables of those runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from benchmarks import report
from benchmarks.__main__ import main

if TYPE_CHECKING:
    from pathlib import Path

from tests.conftest import ROOT

ALL_RUN = ROOT / "docs" / "benchmarks" / "2026-11-26.json"
REVISIONS_RUN = ROOT / "docs" / "benchmarks" / "2026-11-26-revisions-before.json"
X = "\N{MULTIPLICATION SIGN}"


@pytest.fixture(scope="module")
def all_tables() -> str:
    return report.main([str(ALL_RUN)])


def test_every_table_of_an_all_run_is_rendered(all_tables: str) -> None:
    headings = [line for line in all_tables.splitlines() if line.startswith("### ")]
    assert headings == [
        "### Targets",
        "### Wire types (`python -m benchmarks types`)",
        "### Import and start-up",
        "### stdio server (`python -m benchmarks stdio`)",
        "### Streamable HTTP server (`python -m benchmarks http`)",
        "### Scaling (`python -m benchmarks scaling`)",
    ]
    assert all_tables.startswith("From one run of `python -m benchmarks`")


def test_cells_are_the_medians_and_their_ratios(all_tables: str) -> None:
    # The README's tables of that run say the same.
    assert f"| sequential req/s | 2,008 | 1,950 | 1,395 | 1,383 | 494 | 1.44{X}" in (
        all_tables
    )
    assert "| pipelined calls/s | 24.1k | 26.6k | 24.4k | 721 | 274k |" in all_tables
    assert "| `tools/call` request (176 B) | 631k | 47.3k | 273k | 935k |" in all_tables
    assert "| cold start | 147 ms | 123 ms | 258 ms | 760 ms |" in all_tables
    assert "| 1,000,000 | 145 · 104 · 157 |" in all_tables


def test_missed_targets_are_bold(all_tables: str) -> None:
    assert (
        "| stdio | ours/TypeScript SDK pipelined calls/s >= 1x | 0.987 | **missed** |"
        in (all_tables)
    )
    assert "| stdio | ours/TypeScript SDK sequential calls/s >= 1x | 1.032 | met |" in (
        all_tables
    )
    assert f"| **0.68{X}** |" in all_tables  # under the 0.8 hand-written floor


def test_revision_tables_mark_ratios_under_the_target() -> None:
    text = report.main([str(REVISIONS_RUN)])
    assert "**2025-06-18 over stdio**" in text
    assert "**2026-07-28 over Streamable HTTP (stateless POSTs)**" in text
    assert f"| tools/list, 100 tools, lists/s | 126 | 417 | 379 | **0.30{X}** |" in text
    # Only throughput against the era's TypeScript SDK has a target.
    assert f"| sequential req/s | 1,084 | 365 | 464 | 2.97{X} | 2.34{X} |" in text
    assert f"| tools/call sequential p50 µs | 147 | 85.6 | 752 | 1.72{X} |" in text


def test_the_command_writes_a_file(tmp_path: Path) -> None:
    out = tmp_path / "tables.md"
    found = main(["report", str(REVISIONS_RUN), "--out", str(out)])
    assert out.read_text(encoding="utf-8") == found["markdown"]
    assert "### Revisions and the 2026 era" in found["markdown"]

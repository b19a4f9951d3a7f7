"""Paths, statistics and table printing shared by the benchmarks."""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
"""The repository root; every benchmark runs with it as the working folder."""

CACHE = REPO / ".cache"
"""Ignored by git: the peer venv and the default results file live here."""

SCHEMA_SOURCE_ENV = "MCP_CODEGEN_SCHEMA_SOURCE"
"""As for `mcp-codegen schema sync`: a folder laid out as <rev>/schema.json."""

Echo = Callable[[str], None]


def shared_schemas() -> Path:
    """The read-only folder of MCP schemas and examples (never copied into the repo)."""
    configured = os.environ.get(SCHEMA_SOURCE_ENV)
    if configured:
        return Path(configured).resolve()
    return (REPO.parent / "shared" / "mcp-schemas").resolve()


def project_python() -> str:
    """The interpreter of the project's virtualenv (the one running us, normally)."""
    venv_python = REPO / ".venv" / "bin" / "python"
    if venv_python.exists():
        return str(venv_python)
    return sys.executable


def summary(values_s: Sequence[float]) -> dict[str, Any]:
    """Median, min and max of timings given in seconds, reported in milliseconds."""
    ms = [v * 1000.0 for v in values_s]
    return {
        "median_ms": round(statistics.median(ms), 3),
        "min_ms": round(min(ms), 3),
        "max_ms": round(max(ms), 3),
        "n": len(ms),
        "samples_ms": [round(v, 3) for v in ms],
    }


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain-text table, first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])

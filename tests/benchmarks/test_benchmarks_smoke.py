"""Smoke test of the benchmarks: every entry point runs with tiny settings.

No timing is asserted, only that each benchmark produces its figures and the
yardstick counts: ours decodes and re-encodes every example, datamodel-codegen
does not. Runs `python -m benchmarks all --quick` once (in process), about 60 s;
installs the peer venv `.cache/peers/venv` on first use (cached afterwards).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from benchmarks import scaling
from benchmarks.__main__ import main
from benchmarks.types import CASES, CONTENDERS, DIRECTIONS, HAND, OURS, UNTYPED
from benchmarks.yardstick import exact_equal
from mcp_specgen.manifest import load_manifest
from tests.conftest import SCHEMA_DIR

if TYPE_CHECKING:
    from pathlib import Path

EXAMPLES = 129
REVISIONS = load_manifest(SCHEMA_DIR).names


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("benchmarks") / "results.json"
    return main(["all", "--quick", "--json", str(out)]), out


def test_exact_equal_tells_integers_from_floats() -> None:
    assert exact_equal({"a": [1, "x", None]}, {"a": [1, "x", None]})
    assert not exact_equal({"a": 50}, {"a": 50.0})
    assert not exact_equal([True], [1])
    assert not exact_equal({"a": 1}, {"a": 1, "b": 2})


def test_json_file_holds_every_figure(quick_run: tuple[dict[str, Any], Path]) -> None:
    results, path = quick_run
    assert json.loads(path.read_text(encoding="utf-8")) == results
    assert set(results) == {
        "meta",
        "yardstick",
        "import",
        "generation",
        "dispatch",
        "types",
        "stdio",
        "http",
        "scaling",
        "instances",
        "revisions",
    }
    assert results["meta"]["quick"] is True


def test_yardstick_counts(quick_run: tuple[dict[str, Any], Path]) -> None:
    yardstick = quick_run[0]["yardstick"]
    assert yardstick["examples"] == EXAMPLES
    assert yardstick["ours"]["passed"] == EXAMPLES
    assert yardstick["ours"]["failures"] == {}
    datamodel = yardstick["datamodel"]
    assert 0 < datamodel["passed"] < EXAMPLES
    failed = sum(info["count"] for info in datamodel["failures"].values())
    assert datamodel["passed"] + failed == EXAMPLES
    assert datamodel["generation_s"]["median"] > 0


def test_import_time_figures(quick_run: tuple[dict[str, Any], Path]) -> None:
    figures = quick_run[0]["import"]
    for name in ("ours", "ours (runtime only)", "mcp_types"):
        entry = figures["contenders"][name]
        assert entry["in_process"]["n"] == figures["repeats"]
        assert entry["in_process"]["median_ms"] > 0
    assert figures["peer_versions"] == {"mcp-types": "2.3.0"}
    assert figures["ratio_ours_to_mcp_types"] > 0


def test_generation_figures(quick_run: tuple[dict[str, Any], Path]) -> None:
    figures = quick_run[0]["generation"]
    assert figures["seconds"]["median"] > 0
    assert tuple(figures["revisions"]) == REVISIONS
    for entry in figures["revisions"].values():
        types = entry["files"]["types.py"]
        assert types["lines"] > 0
        assert types["bytes"] > 0


def test_types_figures(quick_run: tuple[dict[str, Any], Path]) -> None:
    figures = quick_run[0]["types"]
    for direction in DIRECTIONS:
        assert set(figures[direction]) == set(CASES)
        for result in figures[direction].values():
            assert set(result["contenders"]) == set(CONTENDERS)
            for entry in result["contenders"].values():
                assert entry["n"] == figures["rounds"]
                assert entry["iterations"] > 0
                assert 0 < entry["min_ops"] <= entry["median_ops"] <= entry["max_ops"]
            assert set(result["ratios"]) == {f"ours/{c}" for c in CONTENDERS[1:]}
            assert all(ratio > 0 for ratio in result["ratios"].values())
    for contender in (OURS, HAND, UNTYPED):
        assert figures["roundtrip"][contender] == dict.fromkeys(CASES, "exact")
    assert figures["versions"]["mcp-types"] == "2.3.0"


def test_dispatch_benchmark_runs() -> None:
    from benchmarks import dispatch

    figures = dispatch.run(quick=True, echo=lambda _line: None)
    assert set(figures) >= {
        "dispatch (decode + no-op handler + encode)",
        "msgspec.json.decode (untyped)",
    }


def test_scaling_figures_fill_every_cell(
    quick_run: tuple[dict[str, Any], Path],
) -> None:
    figures = quick_run[0]["scaling"]
    assert set(figures) == {"versions", *scaling.DIMENSIONS}
    assert figures["versions"]["mcp (Python SDK)"] == "2.3.0"
    assert figures["versions"]["@modelcontextprotocol/sdk"] == "1.32.2"
    pairs = {f"ours/{other}" for other in scaling.CONTENDERS[1:]}
    for name, (cells, metrics) in scaling.DIMENSIONS.items():
        dimension = figures[name]
        assert dimension["rounds"] == scaling.QUICK.rounds
        assert set(dimension["argv"]) == set(scaling.CONTENDERS)
        assert list(dimension["cells"]) == [str(c) for c in cells]
        for cell in dimension["cells"].values():
            assert set(cell["contenders"]) == set(scaling.CONTENDERS)
            for entry in cell["contenders"].values():
                assert set(entry) == {*metrics, scaling.CALLS_MADE}
                for stat in entry.values():
                    assert len(stat["samples"]) == scaling.QUICK.rounds
                    assert 0 < stat["min"] <= stat["median"] <= stat["max"]
            assert set(cell["ratios"]) == pairs
            for ratios in cell["ratios"].values():
                assert set(ratios) == set(metrics)
                assert all(value > 0 for value in ratios.values())


def test_instances_figures_cover_every_setup_and_era(
    quick_run: tuple[dict[str, Any], Path],
) -> None:
    from benchmarks.instances import SETUPS

    figures = quick_run[0]["instances"]
    for setup in SETUPS:
        got = figures["setups"][setup.name]
        assert set(got) == set(setup.eras)
        for era in setup.eras:
            assert got[era]["sequential_req_per_s"] > 0
            assert got[era]["p99_us"] >= got[era]["p50_us"] > 0
            if not setup.forwarded:
                assert got[era]["concurrent_req_per_s"] > 0
    assert (
        "Redis, forwarded from another instance (legacy)" in figures["redis_added_us"]
    )


def test_one_quick_run_renders_every_readme_table(
    quick_run: tuple[dict[str, Any], Path],
) -> None:
    from benchmarks import report

    text = report.main([str(quick_run[1])])
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == [
        "### Targets",
        "### Wire types (`python -m benchmarks types`)",
        "### Import and start-up",
        "### stdio server (`python -m benchmarks stdio`)",
        "### Streamable HTTP server (`python -m benchmarks http`)",
        "### Scaling (`python -m benchmarks scaling`)",
        "### Revisions and the 2026 era (`python -m benchmarks revisions`)",
    ]
    for table in ("2025-06-18", "2025-11-25", "2026-07-28 stdio", "2026-07-28 http"):
        assert f"| revisions {table} |" in text
    assert "--quick: smoke sizes" in text

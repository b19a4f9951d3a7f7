"""Smoke test of `benchmarks.tasks_extension_cost`: it produces its figures
(no timing asserted)."""

from __future__ import annotations

import anyio

from benchmarks import tasks_extension_cost


def test_the_benchmark_measures_both_paths() -> None:
    found = anyio.run(tasks_extension_cost.measure, 20)
    assert set(found) == {"plain_us", "task_us", "polls"}
    assert found["polls"] >= 1

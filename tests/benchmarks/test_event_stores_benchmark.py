"""The event store benchmark runs and reports every figure (no timing asserted)."""

from __future__ import annotations

from benchmarks import event_stores


def test_the_quick_run_reports_both_stores_and_every_operation(
    redis_server: object,  # installs redis-server (or skips, saying why)
) -> None:
    lines: list[str] = []
    figures = event_stores.run(quick=True, echo=lines.append)
    ops = figures["ops_per_s"]
    assert set(ops) == {"memory", "redis", "redis round trip"}
    for name in ("memory", "redis"):
        assert set(ops[name]) == {"append", "replay 10", "replay 100"}
        assert all(value > 0 for value in ops[name].values())
    assert "ops/s" in lines[0] and "appends" in lines[-1]

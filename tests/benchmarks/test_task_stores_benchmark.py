"""The task store benchmark runs and reports every figure (no timing asserted)."""

from __future__ import annotations

from benchmarks import task_stores

OPS = {"create", "get", "update", "finish", "list", "get x16"}


def test_the_quick_run_reports_every_store_and_operation(
    redis_server: object,  # installs redis-server (or skips, saying why)
) -> None:
    lines: list[str] = []
    figures = task_stores.run(quick=True, echo=lines.append)
    ops = figures["ops_per_s"]
    stores = ("memory", "sqlite (NORMAL)", "sqlite (FULL)", "redis")
    assert set(ops) == {*stores, "thread hop", "redis round trip"}
    for name in stores:
        assert set(ops[name]) == OPS
        assert all(value > 0 for value in ops[name].values())
    sizes = figures["bytes_per_task"]
    assert 0 < sizes["small result"] < sizes["4 KiB result"]
    assert 0 < sizes["redis, small result"] < sizes["redis, 4 KiB result"]
    assert "ops/s" in lines[0] and "bytes/task" in lines[-1]

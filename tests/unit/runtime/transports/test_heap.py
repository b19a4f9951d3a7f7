"""`keep_freed_memory`: malloc tuned once for large messages, glibc only."""

from __future__ import annotations

import platform

import pytest

from mcp_specgen_runtime.transports import heap


@pytest.fixture(autouse=True)
def untuned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_kept", False)


def test_both_thresholds_are_set_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []

    def mallopt(option: int, value: int) -> int:
        calls.append((option, value))
        return 1

    monkeypatch.setattr(heap, "_mallopt", lambda: mallopt)
    assert heap.keep_freed_memory()
    assert heap.keep_freed_memory()
    assert calls == [(-3, heap.MMAP_BELOW), (-1, heap.TRIM_ABOVE)]


def test_a_refusal_leaves_it_untuned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_mallopt", lambda: lambda option, value: 0)
    assert not heap.keep_freed_memory()


def test_other_c_libraries_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    assert not heap.keep_freed_memory()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_glibc_takes_the_settings() -> None:
    assert heap.keep_freed_memory()

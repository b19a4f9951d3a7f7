"""The runtime's public names: sorted, importable, and not shadowed by submodules."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import mcp_specgen_runtime


def test_all_is_complete() -> None:
    """(ruff's RUF022 keeps `__all__` sorted.)"""
    assert len(set(mcp_specgen_runtime.__all__)) == len(mcp_specgen_runtime.__all__)
    for name in mcp_specgen_runtime.__all__:
        assert hasattr(mcp_specgen_runtime, name), name


def test_no_submodule_shadows_a_public_name() -> None:
    """Importing `mcp_specgen_runtime.x` sets attribute `x` on the package."""
    submodules = {m.name for m in pkgutil.iter_modules(mcp_specgen_runtime.__path__)}
    assert submodules.isdisjoint(mcp_specgen_runtime.__all__)
    for name in submodules:
        importlib.import_module(f"mcp_specgen_runtime.{name}")
    for name in mcp_specgen_runtime.__all__:
        assert not inspect.ismodule(getattr(mcp_specgen_runtime, name)), name

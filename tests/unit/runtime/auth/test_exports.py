"""The auth packages' public names: sorted, complete, importable."""

from __future__ import annotations

from types import ModuleType

import pytest

from mcp_specgen_runtime import auth
from mcp_specgen_runtime.auth import server


@pytest.mark.parametrize("package", [auth, server], ids=["auth", "auth.server"])
def test_all_is_sorted_and_complete(package: ModuleType) -> None:
    names: list[str] = package.__all__
    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    for name in names:
        assert hasattr(package, name), name

"""Fixtures of the golden tests; the helpers live in `golden_support`.

The folder is put on `sys.path` so that `golden_support` is importable
whatever pytest's import mode.
"""

from __future__ import annotations

import importlib
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from golden_support import render_case  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import ModuleType

_package_ids = itertools.count()


@pytest.fixture
def import_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], ModuleType]]:
    """Write a `types.py` source into a fresh package under tmp_path and import it.

    Every call uses a new package name, so no test sees a module cached by
    another; the modules are dropped from `sys.modules` after the test.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    created: list[str] = []

    def load(source: str, label: str) -> ModuleType:
        package = f"golden_{label}_{next(_package_ids)}"
        folder = tmp_path / package
        folder.mkdir()
        (folder / "__init__.py").write_text("", encoding="utf-8")
        (folder / "types.py").write_text(source, encoding="utf-8")
        created.extend([package, f"{package}.types"])
        return importlib.import_module(f"{package}.types")

    yield load
    for name in created:
        sys.modules.pop(name, None)


@pytest.fixture
def load_case(
    import_source: Callable[[str, str], ModuleType],
) -> Callable[[str], ModuleType]:
    """Import the freshly rendered `types.py` of a case."""

    def load(case: str) -> ModuleType:
        return import_source(render_case(case), case)

    return load

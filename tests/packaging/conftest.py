"""Session fixtures of the packaging tests: the built distributions (cached,
see `dists`), and fresh venvs with the generator or the runtime only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging import dists


@pytest.fixture(scope="session")
def built() -> Path:
    """The folder of both sdists and wheels (and `direct/` wheels)."""
    return dists.built()


@pytest.fixture(scope="session")
def links(built: Path) -> list[Path]:
    """Where offline installs find packages: our dists and the wheelhouse."""
    return [built, dists.wheelhouse()]


@pytest.fixture(scope="session")
def product_bin(links: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with `pip install mcp-specgen[http] pytest`: its bin folder."""
    folder = tmp_path_factory.mktemp("product") / "venv"
    return dists.make_venv(folder, links, "mcp-specgen[http]", "pytest")


@pytest.fixture(scope="session")
def runtime_bin(links: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with `pip install mcp-specgen-runtime[http]`: its bin folder."""
    folder = tmp_path_factory.mktemp("runtime") / "venv"
    return dists.make_venv(folder, links, "mcp-specgen-runtime[http]")


@pytest.fixture(scope="session")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder outside the checkout (no schema/manifest.toml above)."""
    folder = tmp_path_factory.mktemp("outside")
    assert not any((p / "schema" / "manifest.toml").exists() for p in folder.parents)
    return folder


@pytest.fixture(scope="session")
def demo(product_bin: Path, links: list[Path], outside: Path) -> Path:
    """`mcp-codegen new demo` run outside the checkout, then the project
    installed into the product venv with its declared requirements (and its
    `test` extra), offline from our dists; not editable, which would need
    hatchling's `editables` too."""
    env = dists.outside_env(outside / "cache")
    dists.run(str(product_bin / "mcp-codegen"), "new", "demo", cwd=outside, env=env)
    project = outside / "demo"
    dists.install(product_bin, links, f"{project}[test]")
    dists.run(str(product_bin / "python"), "-m", "pip", "check")
    return project

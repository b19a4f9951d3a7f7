"""The three pyproject files agree: the development project (the root) needs
exactly what the two published distributions need, plus its tools, and all
read the one version."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

PACKAGING = ROOT / "packaging"


def pyproject(folder: Path) -> dict[str, Any]:
    return tomllib.loads((folder / "pyproject.toml").read_text())


def test_the_development_project_needs_what_the_distributions_need() -> None:
    root = pyproject(ROOT)["project"]
    runtime = pyproject(PACKAGING / "mcp-specgen-runtime")["project"]
    product = pyproject(PACKAGING / "mcp-specgen")["tool"]["hatch"]["metadata"]
    hook = product["hooks"]["custom"]
    extras = root["optional-dependencies"]
    assert root["dependencies"] == runtime["dependencies"]
    for extra in hook["runtime-extras"]:
        assert extras[extra] == runtime["optional-dependencies"][extra]
    assert sorted(runtime["optional-dependencies"]) == sorted(hook["runtime-extras"])
    assert extras["codegen"] == hook["dependencies"]
    assert hook["runtime-with"] == ["http"]
    assert "mcp-specgen-dev[auth,codegen,http,redis]" in extras["dev"]


def test_the_development_project_is_never_published() -> None:
    root = pyproject(ROOT)["project"]
    assert root["name"] == "mcp-specgen-dev"
    assert "Private :: Do Not Upload" in root["classifiers"]


def test_every_project_reads_the_one_version_file() -> None:
    version_file = ROOT / "mcp_specgen_runtime" / "_version.py"
    for folder in (ROOT, PACKAGING / "mcp-specgen-runtime", PACKAGING / "mcp-specgen"):
        path = pyproject(folder)["tool"]["hatch"]["version"]["path"]
        assert (folder / path).resolve() == version_file.resolve()

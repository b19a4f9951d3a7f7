"""The built wheel: namespaced import names, shipped templates, runtime-only install."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

ALLOWED_TOP_LEVEL = {"mcp_specgen", "mcp_specgen_runtime", "mcp_specgen_types"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("mcp_specgen-*.whl")
    return built


def test_wheel_installs_only_namespaced_packages(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {
        name.split("/")[0]
        for name in names
        if not name.split("/")[0].endswith(".dist-info")
    }
    assert top_level == ALLOWED_TOP_LEVEL


def test_wheel_ships_templates_manifest_and_every_revision(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").glob("*.jinja"):
        assert f"mcp_specgen/templates/{template.name}" in names
    assert "mcp_specgen/schema/manifest.toml" in names
    for module in ("v2024_11_05", "v2025_11_25", "v2026_07_28", "draft", "latest"):
        assert f"mcp_specgen_types/{module}/__init__.py" in names
    assert "mcp_specgen_types/py.typed" in names


def test_runtime_install_needs_msgspec_only(wheel: Path, tmp_path: Path) -> None:
    """A server's environment: the wheel without extras imports and decodes."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    script = (
        "import importlib.util as u, sys\n"
        "from mcp_specgen_runtime import decode, encode\n"
        "from mcp_specgen_types.v2025_11_25 import CallToolResult\n"
        'r = decode(b\'{"content":[{"type":"text","text":"hi"}]}\', CallToolResult)\n'
        "print(encode(r).decode())\n"
        "tools = ('jinja2', 'black', 'click', 'jsonschema')\n"
        "print(sorted(m for m in tools if u.find_spec(m)))\n"
    )
    result = subprocess.run(
        [str(python), "-c", script],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.stdout.splitlines() == [
        '{"content":[{"type":"text","text":"hi"}]}',
        "[]",
    ]

"""The two distributions as built: what each wheel and sdist holds, their
metadata, and a wheel built from each sdist equal to the direct one."""

from __future__ import annotations

import email
import tarfile
import zipfile
from pathlib import Path

import pytest

from mcp_specgen_runtime._version import __version__
from tests.conftest import ROOT

WHEELS = {
    "mcp-specgen": f"mcp_specgen-{__version__}-py3-none-any.whl",
    "mcp-specgen-runtime": f"mcp_specgen_runtime-{__version__}-py3-none-any.whl",
}
TOP_LEVEL = {
    "mcp-specgen": {"mcp_specgen"},
    "mcp-specgen-runtime": {"mcp_specgen_runtime", "mcp_specgen_types"},
}


def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def metadata(wheel: Path, file: str = "METADATA") -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (path,) = [n for n in archive.namelist() if n.endswith(f".dist-info/{file}")]
        return email.message_from_bytes(archive.read(path))


@pytest.mark.parametrize("dist", sorted(WHEELS))
def test_each_wheel_holds_its_own_packages_and_nothing_else(
    built: Path, dist: str
) -> None:
    listed = names(built / WHEELS[dist])
    top = {n.split("/")[0] for n in listed if ".dist-info/" not in n}
    assert top == TOP_LEVEL[dist]
    for name in listed:
        assert "__pycache__" not in name
        assert not name.endswith(".pyc")
        assert not name.startswith(("tests/", ".cache/"))


def test_the_generator_wheel_ships_templates_manifest_overrides_extensions(
    built: Path,
) -> None:
    listed = set(names(built / WHEELS["mcp-specgen"]))
    for template in (ROOT / "templates").rglob("*.jinja"):
        relative = template.relative_to(ROOT / "templates").as_posix()
        assert f"mcp_specgen/templates/{relative}" in listed
    assert "mcp_specgen/schema/manifest.toml" in listed
    for override in (ROOT / "schema" / "overrides").glob("*.toml"):
        assert f"mcp_specgen/schema/overrides/{override.name}" in listed
    assert any(n.startswith("mcp_specgen/schema/extensions/") for n in listed)
    # the synced schemas are not the project's to ship
    assert not any(
        n.endswith("/schema.json") and "/extensions/" not in n for n in listed
    )


def test_the_runtime_wheel_ships_every_revision(built: Path) -> None:
    listed = set(names(built / WHEELS["mcp-specgen-runtime"]))
    for module in ("v2024_11_05", "v2025_11_25", "v2026_07_28", "draft", "latest"):
        assert f"mcp_specgen_types/{module}/__init__.py" in listed
    assert "mcp_specgen_types/py.typed" in listed
    assert "mcp_specgen_runtime/_version.py" in listed


def test_the_generator_pins_the_runtime_at_its_own_version(built: Path) -> None:
    meta = metadata(built / WHEELS["mcp-specgen"])
    assert meta["Version"] == __version__
    requires = meta.get_all("Requires-Dist") or []
    # `mcp-codegen client URL` and the scaffolds speak HTTP: httpx comes along.
    assert f"mcp-specgen-runtime[http]=={__version__}" in requires
    assert {"black>=26.1", "click>=8.1", "jinja2>=3.1", "jsonschema>=4.23"} <= set(
        requires
    )
    for extra in ("auth", "http", "otel", "redis"):
        assert (
            f"mcp-specgen-runtime[{extra}]=={__version__}; extra == '{extra}'"
            in requires
        )
    runtime = metadata(built / WHEELS["mcp-specgen-runtime"])
    assert runtime["Version"] == __version__
    assert not any("black" in r for r in runtime.get_all("Requires-Dist") or [])


def test_only_the_generator_has_the_command(built: Path) -> None:
    with zipfile.ZipFile(built / WHEELS["mcp-specgen"]) as archive:
        (points,) = [n for n in archive.namelist() if n.endswith("entry_points.txt")]
        assert "mcp-codegen = mcp_specgen.cli:main" in archive.read(points).decode()
    assert not any(
        n.endswith("entry_points.txt")
        for n in names(built / WHEELS["mcp-specgen-runtime"])
    )


@pytest.mark.parametrize("dist", sorted(WHEELS))
def test_the_wheel_built_from_the_sdist_is_the_direct_one(
    built: Path, dist: str
) -> None:
    from_sdist = zipfile.ZipFile(built / WHEELS[dist])
    direct = zipfile.ZipFile(built / "direct" / WHEELS[dist])
    with from_sdist, direct:
        assert from_sdist.namelist() == direct.namelist()
        for name in direct.namelist():
            assert from_sdist.read(name) == direct.read(name), name


@pytest.mark.parametrize("dist", sorted(WHEELS))
def test_each_sdist_holds_plain_files_under_its_root(built: Path, dist: str) -> None:
    stem = WHEELS[dist].split("-py3")[0]
    with tarfile.open(built / f"{stem}.tar.gz") as archive:
        members = archive.getmembers()
    assert members
    for member in members:
        assert member.isfile(), f"{member.name} is not a plain file"
        assert member.name.startswith(f"{stem}/")
        assert ".." not in Path(member.name).parts
        assert "__pycache__" not in member.name
        assert not member.name.startswith(f"{stem}/tests/")

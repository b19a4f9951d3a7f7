"""Where the generator reads and writes: project manifest, shipped one, cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mcp_specgen.errors import CodegenError
from mcp_specgen.places import CACHE_ENV, locate, shipped_schema_dir, user_cache_dir
from tests.conftest import SCHEMA_DIR


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project with its own schema/manifest.toml."""
    (tmp_path / "proj" / "schema").mkdir(parents=True)
    shutil.copy(SCHEMA_DIR / "manifest.toml", tmp_path / "proj" / "schema")
    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    return tmp_path / "proj"


def test_a_project_manifest_is_found_from_a_subfolder(project: Path) -> None:
    places = locate(cwd=project / "src" / "deep")
    assert places.manifest == project / "schema" / "manifest.toml"
    assert places.schema_dir == project / "schema"
    assert not places.shipped
    assert places.out_dir(None) == project / "generated"


def test_outside_a_project_the_shipped_manifest_and_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    places = locate(cwd=tmp_path)
    assert places.shipped
    assert places.manifest == shipped_schema_dir() / "manifest.toml"
    assert places.schema_dir == tmp_path / "cache"
    assert places.out_dir(tmp_path / "out") == tmp_path / "out"
    with pytest.raises(CodegenError, match="--out DIR"):
        places.out_dir(None)
    with pytest.raises(CodegenError, match="not yours to change"):
        places.refuse_changes()


def test_the_cache_follows_xdg_without_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / "mcp-codegen" / "schemas"


def test_an_explicit_manifest_wins_and_schema_dir_is_apart(
    project: Path, tmp_path: Path
) -> None:
    manifest = project / "schema" / "manifest.toml"
    places = locate(manifest, tmp_path / "synced", cwd=tmp_path)
    assert (places.manifest, places.schema_dir) == (manifest, tmp_path / "synced")
    assert not places.shipped


def test_a_schema_dir_holding_a_manifest_is_a_project_schema_folder(
    project: Path, tmp_path: Path
) -> None:
    places = locate(schema_dir=project / "schema", cwd=tmp_path)
    assert places.manifest == project / "schema" / "manifest.toml"
    assert places.schema_dir == project / "schema"


def test_the_shipped_folder_holds_manifest_overrides_and_extensions() -> None:
    folder = shipped_schema_dir()
    assert (folder / "manifest.toml").is_file()
    assert list((folder / "overrides").glob("*.toml"))
    assert (folder / "extensions").is_dir()

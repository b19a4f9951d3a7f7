"""Extensions' schemas: pinned in the manifest, built and emitted like a revision."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

from mcp_specgen.emit import EXTENSIONS_PACKAGE, render_extension
from mcp_specgen.errors import SchemaLoadError
from mcp_specgen.manifest import load_manifest
from mcp_specgen.pipeline import load_extension
from tests.conftest import SCHEMA_DIR

if TYPE_CHECKING:
    from pathlib import Path

TASKS = "io.modelcontextprotocol/tasks"


def test_the_manifest_pins_the_tasks_extension_with_its_source() -> None:
    (pin,) = load_manifest(SCHEMA_DIR).extensions
    assert (pin.id, pin.version, pin.module) == (
        TASKS,
        "2026-07-28",
        "io_modelcontextprotocol_tasks",
    )
    assert "seps/2663-tasks-extension.md" in pin.source
    assert (SCHEMA_DIR / pin.path).is_file()


def test_the_extension_builds_its_method_table() -> None:
    (pin,) = load_manifest(SCHEMA_DIR).extensions
    rev = load_extension(SCHEMA_DIR, pin)
    table = {m.name: (m.direction, m.params_type, m.result_type) for m in rev.methods}
    assert table == {
        "tasks/get": ("client_to_server", "GetTaskRequestParams", "GetTaskResult"),
        "tasks/update": (
            "client_to_server",
            "UpdateTaskRequestParams",
            "UpdateTaskResult",
        ),
        "tasks/cancel": (
            "client_to_server",
            "CancelTaskRequestParams",
            "CancelTaskResult",
        ),
        "notifications/tasks": ("server_to_client", "DetailedTask", None),
    }
    assert (rev.extension, rev.era) == (TASKS, "modern")


def test_emitted_files_name_the_extension_and_the_schema_hash() -> None:
    (pin,) = load_manifest(SCHEMA_DIR).extensions
    files = render_extension(load_extension(SCHEMA_DIR, pin))
    base = f"{EXTENSIONS_PACKAGE}/io_modelcontextprotocol_tasks"
    assert sorted(files) == [
        f"{base}/__init__.py",
        f"{base}/methods.py",
        f"{base}/py.typed",
        f"{base}/types.py",
    ]
    types = files[f"{base}/types.py"]
    assert f"# source: schema/{pin.path}\n" in types
    assert f"# schema sha256: {pin.sha256}\n" in types
    assert f"EXTENSION_ID: Final = {TASKS!r}".replace("'", '"') in types
    assert "PROTOCOL_VERSION" not in types


def test_an_altered_extension_schema_is_refused(tmp_path: Path) -> None:
    (pin,) = load_manifest(SCHEMA_DIR).extensions
    target = tmp_path / pin.path
    target.parent.mkdir(parents=True)
    shutil.copy(SCHEMA_DIR / pin.path, target)
    target.write_bytes(target.read_bytes().replace(b"Poll a task", b"Poll it"))
    with pytest.raises(SchemaLoadError, match="sha256"):
        load_extension(tmp_path, pin)


def test_saving_the_manifest_keeps_the_extensions(tmp_path: Path) -> None:
    shutil.copy(SCHEMA_DIR / "manifest.toml", tmp_path / "manifest.toml")
    manifest = load_manifest(tmp_path)
    manifest.with_hash("draft", "0" * 64).save()
    assert load_manifest(tmp_path).extensions == manifest.extensions


def test_check_reports_a_stale_extension_module(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mcp_specgen.cli import main
    from tests.conftest import GENERATED_DIR

    out = tmp_path / "generated"
    shutil.copytree(GENERATED_DIR, out, ignore=shutil.ignore_patterns("__pycache__"))
    target = out / EXTENSIONS_PACKAGE / "io_modelcontextprotocol_tasks" / "types.py"
    target.write_text(target.read_text().replace("class Task(", "class Tusk(", 1))
    result = CliRunner().invoke(
        main, ["check", "--schema-dir", str(SCHEMA_DIR), "--out", str(out)]
    )
    assert result.exit_code == 1
    assert "+class Task(" in result.output

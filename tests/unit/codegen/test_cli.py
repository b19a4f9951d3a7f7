"""The command line: generate, check (stale and orphaned files), sync, errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_specgen.cli import main
from tests.conftest import GENERATED_DIR, ROOT, SCHEMA_DIR, SHARED_SCHEMAS


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    """A private copy of generated/."""
    target = tmp_path / "generated"
    shutil.copytree(GENERATED_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_check_passes_on_the_committed_package(out_dir: Path) -> None:
    code, output = run("check", "--schema-dir", str(SCHEMA_DIR), "--out", str(out_dir))
    assert (code, output.strip()) == (0, "generated code is up to date")


def test_check_fails_with_a_diff_on_a_stale_file(out_dir: Path) -> None:
    target = out_dir / "mcp_specgen_types" / "v2025_06_18" / "types.py"
    target.write_text(target.read_text().replace("class Tool(", "class Tool2(", 1))
    code, output = run("check", "--schema-dir", str(SCHEMA_DIR), "--out", str(out_dir))
    assert code == 1
    assert "-class Tool2(" in output
    assert "+class Tool(" in output
    assert "out of date" in output


def test_check_fails_on_orphaned_and_missing_files(out_dir: Path) -> None:
    (out_dir / "mcp_specgen_types" / "v1999_01_01.py").write_text("")
    (out_dir / "mcp_specgen_types" / "draft" / "methods.py").unlink()
    code, output = run("check", "--schema-dir", str(SCHEMA_DIR), "--out", str(out_dir))
    assert code == 1
    assert "v1999_01_01.py is not generated any more" in output
    assert "draft/methods.py is missing" in output


def test_generate_repairs_what_check_reports(out_dir: Path) -> None:
    (out_dir / "mcp_specgen_types" / "orphan.py").write_text("")
    code, output = run(
        "generate", "--schema-dir", str(SCHEMA_DIR), "--out", str(out_dir)
    )
    assert code == 0
    assert "1 changed" in output
    code, _ = run("check", "--schema-dir", str(SCHEMA_DIR), "--out", str(out_dir))
    assert code == 0


def test_generator_errors_exit_1_with_the_revision(tmp_path: Path) -> None:
    schema_dir = tmp_path / "schema"
    schema_dir.mkdir()
    shutil.copy(SCHEMA_DIR / "manifest.toml", schema_dir)
    code, output = run(
        "generate", "--schema-dir", str(schema_dir), "--out", str(tmp_path)
    )
    assert code == 1
    assert "error: 2024-11-05:" in output
    assert "schema sync" in output


def test_schema_sync_from_a_folder(tmp_path: Path) -> None:
    schema_dir = tmp_path / "schema"
    schema_dir.mkdir()
    shutil.copy(SCHEMA_DIR / "manifest.toml", schema_dir)
    code, output = run(
        "schema",
        "sync",
        "2025-11-25",
        "--schema-dir",
        str(schema_dir),
        "--from",
        str(SHARED_SCHEMAS),
    )
    assert code == 0, output
    assert output.startswith("2025-11-25: sha256 268a5f82")
    assert (schema_dir / "2025-11-25" / "schema.json").exists()


def test_output_is_identical_whatever_the_hash_seed(tmp_path: Path) -> None:
    """Two fresh processes with different PYTHONHASHSEED write the same bytes."""
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"out{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "mcp_specgen",
                "generate",
                "--schema-dir",
                str(SCHEMA_DIR),
                "--out",
                str(out),
            ],
            check=True,
            cwd=ROOT,
            env=env,
            capture_output=True,
        )
        outputs.append(
            {
                str(p.relative_to(out)): p.read_bytes()
                for p in sorted(out.rglob("*"))
                if p.is_file()
            }
        )
    assert outputs[0] == outputs[1]
    committed = {
        str(p.relative_to(GENERATED_DIR)): p.read_bytes()
        for p in sorted(GENERATED_DIR.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert outputs[0] == committed


def test_generate_a_package_of_chosen_revisions_under_its_own_name(
    tmp_path: Path,
) -> None:
    args = ["--schema-dir", str(SCHEMA_DIR), "--out", str(tmp_path)]
    chosen = ["--package", "my_types", "--revision", "2026-07-28"]
    code, output = run("generate", *args, *chosen, "--revision", "2025-11-25")
    assert code == 0, output
    package = tmp_path / "my_types"
    assert sorted(p.name for p in package.iterdir() if p.is_dir()) == [
        "extensions",
        "latest",
        "v2025_11_25",
        "v2026_07_28",
    ]
    init = (package / "__init__.py").read_text()
    assert 'KNOWN_VERSIONS: Final = (\n    "2025-11-25",\n    "2026-07-28",\n)' in init
    assert '"2025-11-25": "my_types.v2025_11_25"' in init
    assert "mcp_specgen_types" not in "".join(
        p.read_text() for p in package.rglob("*.py")
    )
    code, output = run("check", *args, *chosen, "--revision", "2025-11-25")
    assert (code, output.strip()) == (0, "generated code is up to date")
    code, output = run("check", *args, *chosen)
    assert code == 1
    assert "my_types/v2025_11_25/types.py is not generated any more" in output


def test_a_generated_package_of_another_name_imports_and_round_trips(
    tmp_path: Path,
) -> None:
    code, output = run(
        "generate",
        "--schema-dir",
        str(SCHEMA_DIR),
        "--out",
        str(tmp_path),
        "--package",
        "other_types",
        "--revision",
        "2025-11-25",
    )
    assert code == 0, output
    script = (
        "from other_types import LATEST_VERSION, MODULES\n"
        "from other_types.latest import CallToolResult\n"
        "from mcp_specgen_runtime import decode, encode\n"
        'raw = b\'{"content":[{"type":"text","text":"hi"}]}\'\n'
        "assert encode(decode(raw, CallToolResult)) == raw\n"
        "print(LATEST_VERSION, MODULES)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2025-11-25 {'2025-11-25': 'other_types.v2025_11_25'}\n"


@pytest.mark.parametrize(
    ("package", "problem"),
    [("my-types", "not a Python identifier"), ("mcp_specgen_runtime", "shadow")],
)
def test_a_bad_package_name_is_refused(
    package: str, problem: str, tmp_path: Path
) -> None:
    code, output = run(
        "generate",
        "--schema-dir",
        str(SCHEMA_DIR),
        "--out",
        str(tmp_path),
        "--package",
        package,
    )
    assert code == 1
    assert problem in output
    assert not list(tmp_path.iterdir())


def test_outside_a_project_sync_goes_to_the_cache_and_pin_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MCP_CODEGEN_CACHE", str(tmp_path / "cache"))
    code, output = run("schema", "sync", "2025-06-18", "--from", str(SHARED_SCHEMAS))
    assert code == 0, output
    assert (tmp_path / "cache" / "2025-06-18" / "schema.json").is_file()
    code, output = run("diff", "2025-06-18", "2025-06-18")
    assert code == 0, output
    code, output = run("generate", "--revision", "2025-06-18")
    assert code == 1
    assert "--out DIR" in output
    code, output = run("schema", "pin", "2025-06-18", "--from", str(SHARED_SCHEMAS))
    assert code == 1
    assert "not yours to change" in output

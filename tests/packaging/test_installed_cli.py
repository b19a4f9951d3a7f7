"""`mcp-codegen` as a user runs it: installed from the built wheels into a
fresh venv, run from a folder outside the checkout, with the manifest and
overrides shipped in the wheel and the schemas synced into a user cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SHARED_SCHEMAS
from tests.packaging.dists import outside_env, run

REVISIONS = ("--revision", "2025-11-25", "--revision", "2026-07-28")


@pytest.fixture(scope="module")
def env(outside: Path) -> dict[str, str]:
    return outside_env(outside / "cache")


def codegen(bin_dir: Path, where: Path, env: dict[str, str], *args: str) -> str:
    return run(str(bin_dir / "mcp-codegen"), *args, cwd=where, env=env)


@pytest.fixture(scope="module")
def generated(product_bin: Path, outside: Path, env: dict[str, str]) -> Path:
    """`schema sync --from` then `generate --out src --package my_types`."""
    source = os.path.relpath(SHARED_SCHEMAS, outside)
    synced = codegen(product_bin, outside, env, "schema", "sync", "--from", source)
    assert "2026-07-28: sha256 ef70b61f" in synced
    assert (outside / "cache" / "2026-07-28" / "schema.json").is_file()
    args = ("generate", "--out", "src", "--package", "my_types", *REVISIONS)
    assert "19 files, 19 changed" in codegen(product_bin, outside, env, *args)
    return outside / "src" / "my_types"


def test_pip_check_passes(product_bin: Path) -> None:
    run(str(product_bin / "python"), "-m", "pip", "check")


def test_help_lists_the_commands(
    product_bin: Path, outside: Path, env: dict[str, str]
) -> None:
    shown = codegen(product_bin, outside, env, "--help")
    for command in ("schema", "generate", "check", "diff", "new"):
        assert command in shown


def test_the_generated_package_imports_and_round_trips(
    product_bin: Path, generated: Path, env: dict[str, str]
) -> None:
    script = (
        "import my_types\n"
        "from my_types.v2025_11_25 import CallToolResult\n"
        "from mcp_specgen_runtime import decode, encode\n"
        'raw = b\'{"content":[{"type":"text","text":"hi"}],"x-vendor":1}\'\n'
        "assert encode(decode(raw, CallToolResult)) == raw\n"
        "print(my_types.KNOWN_VERSIONS, my_types.LATEST_VERSION)\n"
    )
    shown = run(
        str(product_bin / "python"), "-c", script, cwd=generated.parent, env=env
    )
    assert shown == "('2025-11-25', '2026-07-28') 2026-07-28\n"


def test_the_generated_package_is_black_formatted(
    product_bin: Path, generated: Path, env: dict[str, str]
) -> None:
    run(str(product_bin / "black"), "--check", "--quiet", str(generated), env=env)


def test_check_passes_on_what_generate_wrote(
    product_bin: Path, generated: Path, outside: Path, env: dict[str, str]
) -> None:
    args = ("check", "--out", "src", "--package", "my_types", *REVISIONS)
    shown = codegen(product_bin, outside, env, *args)
    assert shown.strip() == "generated code is up to date"


def test_diff_reads_the_cache(
    product_bin: Path, generated: Path, outside: Path, env: dict[str, str]
) -> None:
    shown = codegen(product_bin, outside, env, "diff", "2025-11-25", "2026-07-28")
    assert shown.startswith("2025-11-25 -> 2026-07-28:")


def test_new_makes_a_project_whose_tests_pass(
    product_bin: Path, demo: Path, env: dict[str, str]
) -> None:
    """`demo` is made by `mcp-codegen new` and installed with its requirements."""
    shown = run(
        str(product_bin / "pytest"), "-q", "-p", "no:cacheprovider", cwd=demo, env=env
    )
    assert "9 passed" in shown

"""`mcp-codegen new`: the files, refusals, `--revision`, determinism, lint, and
the generated project's own tests passing right away."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import mcp_specgen_types
from mcp_specgen.cli import main
from mcp_specgen.scaffold import ScaffoldError, create_project, render_project
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
DATED = [v for v in mcp_specgen_types.KNOWN_VERSIONS if v != "draft"]


def new(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["new", *args])
    return result.exit_code, result.output


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def served_versions(project: Path, package: str) -> list[str]:
    """The `PROTOCOL_VERSIONS` list of a generated server module."""
    tree = ast.parse((project / package / "server.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [
            target.id for target in node.targets if isinstance(target, ast.Name)
        ] == ["PROTOCOL_VERSIONS"]:
            value: list[str] = ast.literal_eval(node.value)
            return value
    raise AssertionError("no PROTOCOL_VERSIONS in server.py")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project made with the defaults, shared by the read-only tests."""
    return create_project("demo", tmp_path_factory.mktemp("scaffold"))


def test_the_command_creates_every_file(tmp_path: Path) -> None:
    code, output = new("my-server", "--dir", str(tmp_path))
    assert code == 0, output
    project = tmp_path / "my-server"
    assert f"created {project}" in output
    assert sorted(files_of(project)) == [
        ".gitignore",
        "README.md",
        "my_server/__init__.py",
        "my_server/__main__.py",
        "my_server/server.py",
        "pyproject.toml",
        "tests/test_server.py",
    ]


def test_the_project_metadata(demo: Path) -> None:
    meta = tomllib.loads((demo / "pyproject.toml").read_text())
    project = meta["project"]
    assert (project["name"], project["version"]) == ("demo", "0.1.0")
    assert project["requires-python"] == ">=3.11"
    assert project["dependencies"] == ["mcp-specgen-runtime[http]>=0.1"]
    assert project["optional-dependencies"] == {
        "test": ["pytest>=8", "mcp-specgen>=0.1"]
    }
    assert project["scripts"] == {"demo": "demo.__main__:main"}
    assert meta["build-system"]["build-backend"] == "hatchling.build"


def test_the_server_and_readme(demo: Path) -> None:
    server = (demo / "demo" / "server.py").read_text()
    assert 'app = App("demo", version="0.1.0", versions=PROTOCOL_VERSIONS)' in server
    assert '"""Return the message unchanged."""' in server
    assert '@app.resource("info://demo/about"' in server
    assert '@app.tool(task_support="optional")\nasync def countdown(' in server
    readme = (demo / "README.md").read_text()
    for text in (
        "pip install -e '.[test]'",
        "python -m demo",
        "pytest",
        "python -m demo --http --port 8000",
        "--redis redis://localhost:6379/0 --workers 4",
        "$MCP_REDIS_URL",
        '"mcpServers"',
        '"args": ["-m", "demo"]',
        "mcp-codegen dev --inspector",
        "mcp-codegen install --client claude-desktop",
        "--revision",
        "`countdown`",
    ):
        assert text in readme


def test_an_existing_folder_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "keep.txt").write_text("mine")
    code, output = new("demo", "--dir", str(tmp_path))
    assert code == 1
    assert "already exists" in output
    assert files_of(tmp_path / "demo") == {"keep.txt": b"mine"}
    (tmp_path / "other").write_text("a file")
    code, output = new("other", "--dir", str(tmp_path))
    assert code == 1
    assert "already exists" in output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "not a valid project name"),
        ("-demo", "not a valid project name"),
        ("demo-", "not a valid project name"),
        ("has space", "not a valid project name"),
        ("dé", "not a valid project name"),
        ("1demo", "not a valid Python identifier"),
        ("my.server", "not a valid Python identifier"),
        ("class", "not a valid Python identifier"),
        ("json", "would shadow"),
        ("mcp-specgen-runtime", "would shadow"),
        ("tests", "would shadow"),
    ],
)
def test_bad_names_are_refused(tmp_path: Path, name: str, message: str) -> None:
    code, output = new("--dir", str(tmp_path), "--", name)
    assert code == 1
    assert output.startswith("error: ")
    assert message in output
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_revision_is_refused(tmp_path: Path) -> None:
    code, output = new("demo", "--dir", str(tmp_path), "--revision", "2020-01-01")
    assert code == 1
    assert "unknown protocol revision '2020-01-01'" in output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("revision", "expected"),
    [
        (None, DATED),
        ("2024-11-05", ["2024-11-05"]),
        ("2025-06-18", ["2024-11-05", "2025-03-26", "2025-06-18"]),
        ("draft", [*DATED, "draft"]),
    ],
)
def test_the_revision_sets_the_served_versions(
    tmp_path: Path, revision: str | None, expected: list[str]
) -> None:
    option = [] if revision is None else ["--revision", revision]
    code, output = new("demo", "--dir", str(tmp_path), *option)
    assert code == 0, output
    assert served_versions(tmp_path / "demo", "demo") == expected
    readme = (tmp_path / "demo" / "README.md").read_text()
    assert f"--revision {revision or mcp_specgen_types.LATEST_VERSION}" in readme


def test_rendering_is_deterministic(tmp_path: Path) -> None:
    assert render_project("demo", "2025-11-25") == render_project("demo", "2025-11-25")
    first = create_project("demo", tmp_path / "a")
    second = create_project("demo", tmp_path / "b")
    assert files_of(first) == files_of(second)


def test_create_project_raises_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="unknown protocol revision"):
        create_project("demo", tmp_path / "new", "nope")
    assert not (tmp_path / "new").exists()


def test_the_python_passes_black_and_ruff(demo: Path) -> None:
    """With this repository's black, and its ruff rules (the project is its
    own first-party root, so ruff runs from inside it with no other config)."""
    black = subprocess.run(
        [str(BIN / "black"), "--check", "--quiet", "."],
        cwd=demo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert black.returncode == 0, black.stderr
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    ruff = subprocess.run(
        [
            str(BIN / "ruff"),
            "check",
            "--no-cache",
            "--isolated",
            "--target-version",
            lint["target-version"],
            "--line-length",
            str(lint["line-length"]),
            "--select",
            ",".join(lint["lint"]["select"]),
            ".",
        ],
        cwd=demo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr


@pytest.mark.parametrize(
    ("name", "revision"),
    [("demo", mcp_specgen_types.LATEST_VERSION), ("old-server", "2024-11-05")],
)
def test_the_generated_tests_pass(tmp_path: Path, name: str, revision: str) -> None:
    """The project's tests (in-process and over stdio) pass with this venv."""
    project = create_project(name, tmp_path, revision)
    env = {**os.environ, "PYTHONPATH": str(project)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, str(project / "tests")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9 passed" in result.stdout


def test_the_main_module_parses_its_options(demo: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "demo", "--help"],
        cwd=demo,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    for option in ("--http", "--host", "--port", "default: 127.0.0.1", "--redis"):
        assert option in result.stdout
    for option in ("--workers", "$MCP_REDIS_URL"):
        assert option in result.stdout


def test_auth_adds_the_oauth_settings_and_their_tests(tmp_path: Path) -> None:
    code, output = new("guarded", "--dir", str(tmp_path), "--auth")
    assert code == 0, output
    project = tmp_path / "guarded"
    assert {"guarded/auth.py", "tests/test_auth.py"} <= set(files_of(project))
    meta = tomllib.loads((project / "pyproject.toml").read_text())
    assert meta["project"]["dependencies"] == ["mcp-specgen-runtime[auth,http]>=0.1"]
    server = (project / "guarded" / "server.py").read_text()
    assert '@app.tool(scopes=["guarded:write"])' in server
    assert "MCP_ISSUER_URL" in (project / "README.md").read_text()
    plain = render_project("guarded", mcp_specgen_types.LATEST_VERSION)
    assert "guarded/auth.py" not in plain
    assert "scopes=" not in plain["guarded/server.py"]


def test_the_generated_auth_tests_pass(tmp_path: Path) -> None:
    """The protected project's tests (stdio, in-process, and OAuth over HTTP
    with a key made in the test) pass with this venv; its code lints."""
    project = create_project("guarded", tmp_path, auth=True)
    env = {**os.environ, "PYTHONPATH": str(project)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, str(project / "tests")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "14 passed" in result.stdout
    black = subprocess.run(
        [str(BIN / "black"), "--check", "--quiet", "."],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert black.returncode == 0, black.stderr
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    ruff = subprocess.run(
        [
            str(BIN / "ruff"),
            "check",
            "--no-cache",
            "--isolated",
            "--line-length",
            str(lint["line-length"]),
            "--select",
            ",".join(lint["lint"]["select"]),
            ".",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout
    helped = subprocess.run(
        [sys.executable, "-m", "guarded", "--help"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    for option in ("--issuer-url", "--resource-url", "--required-scopes"):
        assert option in helped.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "guarded", "--http"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("MCP_")},
    )
    assert refused.returncode == 2
    assert "--issuer-url" in refused.stderr

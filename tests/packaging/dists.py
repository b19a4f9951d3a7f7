"""The built distributions and fresh virtualenvs for the packaging tests.

Both sdists and the wheels built from them are cached under
`.cache/packaging/dist-<hash>`, keyed by a hash of every file that goes into
them, so the suite builds once per change of the sources. The dependencies
come from `.cache/packaging/deps-<hash>`, a wheelhouse downloaded once (by
pip, from the configured index) with the versions the development venv has;
every venv is then installed offline: `--no-index --find-links`.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tests.conftest import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

CACHE = ROOT / ".cache" / "packaging"
SOURCES = (
    "packaging",
    "codegen/mcp_specgen",
    "mcp_specgen_runtime",
    "generated/mcp_specgen_types",
    "templates",
    "schema/manifest.toml",
    "schema/overrides",
    "schema/extensions",
    ".gitignore",
)
"""What the distributions are built from (packaging/ links into the others)."""

DEPENDENCIES = (
    "black",
    "click",
    "jinja2",
    "jsonschema",
    "watchfiles",
    "msgspec",
    "anyio",
    "cryptography",
    "uvicorn",
    "httptools",
    "uvloop",
    "httpx",
    "pytest",
    "hatchling",
)
"""The distributions' direct requirements (with the `http` extra), pytest and
hatchling (a scaffolded project's tests and build backend), which the
wheelhouse holds at the development venv's versions."""


def source_hash() -> str:
    """A digest of the path and bytes of every file the builds read."""
    digest = hashlib.sha256()
    for source in SOURCES:
        top = ROOT / source
        files = [top] if top.is_file() else sorted(_files_under(top))
        for path in files:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
            digest.update(path.read_bytes() if not path.is_symlink() else b"link")
    return digest.hexdigest()[:16]


def _files_under(top: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = Path(folder) / name
            if not name.endswith(".pyc"):
                yield path
        for name in dirs:
            path = Path(folder) / name
            if path.is_symlink():  # packaging/'s links: their target is hashed
                yield path


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _cached(name: str, fill: Callable[[Path], None]) -> Path:
    """`CACHE/name`, filled once by `fill(folder)` (atomically, under a lock)."""
    target = CACHE / name
    with _locked(CACHE):
        if not target.is_dir():
            staging = Path(tempfile.mkdtemp(dir=CACHE, prefix=f".{name}-"))
            try:
                fill(staging)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            staging.rename(target)
    return target


def built() -> Path:
    """A folder with both sdists, the wheels built from them (`python -m
    build`, as packaging/build.py does) and, under `direct/`, the wheels built
    straight from packaging/."""

    def fill(folder: Path) -> None:
        run(
            sys.executable,
            str(ROOT / "packaging" / "build.py"),
            "--out",
            str(folder),
            "--no-isolation",
        )
        for project in ("mcp-specgen-runtime", "mcp-specgen"):
            run(
                sys.executable,
                "-m",
                "build",
                "--wheel",
                "--no-isolation",
                "--outdir",
                str(folder / "direct"),
                str(ROOT / "packaging" / project),
            )

    return _cached(f"dist-{source_hash()}", fill)


def wheelhouse() -> Path:
    """Wheels of every dependency, for offline installs."""
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in DEPENDENCIES]
    key = hashlib.sha256("\n".join(pins).encode()).hexdigest()[:16]

    def fill(folder: Path) -> None:
        run(sys.executable, "-m", "pip", "download", "-q", "-d", str(folder), *pins)

    return _cached(f"deps-{key}", fill)


def run(
    *command: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> str:
    """Run `command`; its stdout. Fails the test with its output when it fails."""
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{output}"
    return result.stdout


def make_venv(folder: Path, links: list[Path], *requirements: str) -> Path:
    """A fresh venv at `folder` with `requirements` installed offline from
    `links`; its bin folder."""
    run(sys.executable, "-m", "venv", str(folder))
    bin_dir = folder / "bin"
    install(bin_dir, links, *requirements)
    return bin_dir


def install(bin_dir: Path, links: list[Path], *requirements: str) -> None:
    """`pip install` into a venv, offline: only from the folders `links`."""
    find = [arg for link in links for arg in ("--find-links", str(link))]
    run(
        str(bin_dir / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-index",
        *find,
        *requirements,
    )


def outside_env(cache: Path) -> dict[str, str]:
    """The environment of a command run as a user would: no checkout on the
    path, no schema source from the tests, the schema cache in `cache`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "MCP_CODEGEN_SCHEMA_SOURCE", "VIRTUAL_ENV"}
    }
    env["MCP_CODEGEN_CACHE"] = str(cache)
    return env

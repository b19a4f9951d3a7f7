"""The documentation site builds with `mkdocs build --strict`: no warning at all
(a broken link, a page left out of the nav, a docstring mkdocstrings cannot
read), and every page of docs/ is in the nav."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--site-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    assert (tmp_path / "index.html").exists()
    assert (tmp_path / "reference" / "app" / "index.html").exists()

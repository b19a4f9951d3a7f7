"""Build both distributions: `python packaging/build.py [--out DIR] [--no-isolation]`.

For each of mcp-specgen-runtime and mcp-specgen, `python -m build` writes the
sdist, then the wheel built from that sdist (so a wheel never holds what its
sdist lacks), into DIR (default: dist/ at the repository root).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECTS = (HERE / "mcp-specgen-runtime", HERE / "mcp-specgen")
"""The distributions' project folders, the runtime first."""


def build(out: Path, *, isolation: bool = True) -> list[Path]:
    """Build every distribution into `out`; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    for project in PROJECTS:
        command = [sys.executable, "-m", "build", "--outdir", str(out), str(project)]
        if not isolation:
            command.insert(3, "--no-isolation")
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return sorted(set(out.iterdir()) - before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE.parent / "dist")
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="use this environment's hatchling instead of a fresh build env",
    )
    args = parser.parse_args()
    for path in build(args.out, isolation=not args.no_isolation):
        print(path)


if __name__ == "__main__":
    main()

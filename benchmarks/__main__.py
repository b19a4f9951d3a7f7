"""`python -m benchmarks [NAME] [--quick] [--json PATH]`: run the benchmarks.

Runs the chosen benchmarks (default: all) from the repository root, prints their
tables and writes every figure to a JSON file (default
`.cache/benchmarks/results.json`, ignored by git). `--quick` uses tiny repeat
counts: one datamodel-codegen flag set generated once, 3 import rounds, one
generation run.

`python -m benchmarks report RESULTS.json [--out FILE]` renders the README's
Performance tables (markdown) from such a file (`report.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import CACHE, REPO

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

DEFAULT_JSON = CACHE / "benchmarks" / "results.json"
CHOICES = (
    "yardstick",
    "import",
    "generation",
    "dispatch",
    "types",
    "stdio",
    "http",
    "scaling",
    "instances",
    "revisions",
    "all",
)


def _runners() -> dict[str, Callable[..., dict[str, Any]]]:
    from . import (
        dispatch,
        generation,
        http,
        import_time,
        instances,
        revisions,
        scaling,
        stdio,
        types,
        yardstick,
    )

    return {
        "dispatch": dispatch.run,
        "types": types.run,
        "yardstick": yardstick.run,
        "import": import_time.run,
        "generation": generation.run,
        "stdio": stdio.run,
        "http": http.run,
        "scaling": scaling.run,
        "instances": instances.run,
        "revisions": revisions.run,
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the mcp-codegen benchmarks, print their tables and "
        "write the figures to a JSON file.",
    )
    parser.add_argument("which", nargs="?", choices=CHOICES, default="all")
    parser.add_argument(
        "--quick", action="store_true", help="tiny repeat counts (smoke run)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        metavar="PATH",
        help=f"where to write the figures (default: {DEFAULT_JSON.relative_to(REPO)})",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run, print, write the JSON file; return what was written (`report`:
    render a results file instead, returning {"markdown": text})."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["report"]:
        from . import report

        return {"markdown": report.main(given[1:])}
    args = parse_args(given)
    path = args.json.resolve()  # a relative PATH is taken from the current folder
    runners = _runners()
    selected = list(runners) if args.which == "all" else [args.which]
    results: dict[str, Any] = {
        "meta": {
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "quick": args.quick,
            "benchmarks": selected,
            "python": sys.version.split()[0],
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        }
    }
    for index, name in enumerate(selected):
        if index:
            print()
        print(f"== {name} ==")
        started = time.perf_counter()
        results[name] = runners[name](quick=args.quick)
        results["meta"][f"{name}_wall_s"] = round(time.perf_counter() - started, 2)

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nfigures written to {path}")
    return results


if __name__ == "__main__":
    main()

"""Import time: one revision of ours against `mcp-types`, each in a fresh interpreter.

Contenders (each a `python -E -s -c` snippet run in a new process):

- ours: `import mcp_specgen_runtime; import mcp_specgen_types.v2025_11_25`
  with the project's venv;
- ours, runtime only: `import mcp_specgen_runtime`;
- mcp_types: `import mcp_types` (mcp-types 2.3.0, pydantic models) with the peer
  venv `.cache/peers/venv` (same base interpreter).

Primary figure: the in-process import time, `time.perf_counter()` around the import
statements inside the snippet, so interpreter start-up is not counted. Secondary:
the wall time of the whole process minus that of `python -c pass` of the same venv
(medians). Contenders alternate within each round; one warm-up round (which also
writes the bytecode caches) is discarded.

    python -m benchmarks import [--quick]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._common import REPO, Echo, project_python, summary, table
from .peers import PEERS, ensure_peers

if TYPE_CHECKING:
    from collections.abc import Sequence

TARGET_RATIO = 0.2
"""Ours should import in at most a fifth of mcp_types' time."""

_SNIPPET = """\
import time
_t0 = time.perf_counter()
{imports}
_t1 = time.perf_counter()
print(repr(_t1 - _t0))
"""


@dataclass(frozen=True)
class Contender:
    name: str
    python: str
    imports: str

    def command(self) -> list[str]:
        return [self.python, "-E", "-s", "-c", _SNIPPET.format(imports=self.imports)]


def _run_once(contender: Contender) -> tuple[float, float]:
    """(in-process import seconds, process wall seconds) of one fresh interpreter."""
    started = time.perf_counter()
    proc = subprocess.run(
        contender.command(),
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{contender.name} failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1]), wall


def breakdown(contender: Contender, top: int = 6) -> dict[str, float]:
    """Self import time (ms) by top-level package, from one `-X importtime` run.

    Shows where an import's time goes (our generated modules against msgspec and
    the standard library, say); one run, so only indicative.
    """
    command = contender.command()
    command[1:1] = ["-X", "importtime"]
    proc = subprocess.run(
        command, capture_output=True, text=True, cwd=REPO, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{contender.name} failed:\n{proc.stderr[-2000:]}")
    by_package: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line[len("import time:") :].split("|")
        package = name.strip().split(".")[0]
        by_package[package] = by_package.get(package, 0.0) + int(self_us) / 1000.0
    ranked = sorted(by_package.items(), key=lambda item: -item[1])
    shown = {name: round(ms, 2) for name, ms in ranked[:top]}
    shown["(other)"] = round(sum(ms for _name, ms in ranked[top:]), 2)
    return shown


def contenders(peer_python: str) -> list[Contender]:
    ours = project_python()
    return [
        Contender(
            "ours",
            ours,
            "import mcp_specgen_runtime\nimport mcp_specgen_types.v2025_11_25",
        ),
        Contender("ours (runtime only)", ours, "import mcp_specgen_runtime"),
        Contender("mcp_types", peer_python, "import mcp_types"),
        Contender("baseline (project venv)", ours, "pass"),
        Contender("baseline (peer venv)", peer_python, "pass"),
    ]


def run(
    *, quick: bool = False, repeats: int | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Measure, print a table, return the figures (milliseconds)."""
    n = repeats if repeats is not None else (3 if quick else 15)
    peer = str(ensure_peers(echo))
    entrants = contenders(peer)
    for entrant in entrants:  # warm-up: bytecode caches, page cache
        _run_once(entrant)
    inproc: dict[str, list[float]] = {c.name: [] for c in entrants}
    wall: dict[str, list[float]] = {c.name: [] for c in entrants}
    for round_no in range(n):
        # Alternate the order every round so neither side always goes first.
        order = entrants if round_no % 2 == 0 else list(reversed(entrants))
        for entrant in order:
            seconds, elapsed = _run_once(entrant)
            inproc[entrant.name].append(seconds)
            wall[entrant.name].append(elapsed)

    baseline_of = {
        "ours": "baseline (project venv)",
        "ours (runtime only)": "baseline (project venv)",
        "mcp_types": "baseline (peer venv)",
    }
    results: dict[str, Any] = {}
    for entrant in entrants:
        entry: dict[str, Any] = {
            "python": entrant.python,
            "statement": entrant.imports.replace("\n", "; "),
            "in_process": summary(inproc[entrant.name]),
            "process_wall": summary(wall[entrant.name]),
        }
        base = baseline_of.get(entrant.name)
        if base is not None:
            entry["process_wall_minus_startup_median_ms"] = round(
                (statistics.median(wall[entrant.name]) - statistics.median(wall[base]))
                * 1000,
                3,
            )
        results[entrant.name] = entry

    ours_ms = results["ours"]["in_process"]["median_ms"]
    peer_ms = results["mcp_types"]["in_process"]["median_ms"]
    ours_wall = results["ours"]["process_wall_minus_startup_median_ms"]
    peer_wall = results["mcp_types"]["process_wall_minus_startup_median_ms"]
    ratio = ours_ms / peer_ms
    by_name = {entrant.name: entrant for entrant in entrants}
    for name in ("ours", "mcp_types"):
        results[name]["importtime_self_ms_by_package"] = breakdown(by_name[name])
    figures: dict[str, Any] = {
        "method": (
            "in-process: perf_counter around the import statements in a fresh "
            "`python -E -s -c` (start-up excluded); process_wall: whole process, "
            "minus the median of `python -c pass` of the same venv"
        ),
        "repeats": n,
        "peer_versions": dict(PEERS),
        "contenders": results,
        "ratio_ours_to_mcp_types": round(ratio, 4),
        "ratio_ours_to_mcp_types_wall": (
            round(ours_wall / peer_wall, 4) if peer_wall > 0 else None
        ),
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio <= TARGET_RATIO,
    }
    echo(report(figures))
    return figures


def report(figures: dict[str, Any]) -> str:
    rows = []
    for name, entry in figures["contenders"].items():
        inproc = entry["in_process"]
        wall = entry.get("process_wall_minus_startup_median_ms")
        rows.append(
            [
                name,
                f"{inproc['median_ms']:.1f}",
                f"{inproc['min_ms']:.1f}-{inproc['max_ms']:.1f}",
                f"{entry['process_wall']['median_ms']:.1f}",
                "" if wall is None else f"{wall:.1f}",
            ]
        )
    verdict = "meets" if figures["meets_target"] else "misses"
    return "\n".join(
        [
            f"Import time, fresh interpreter, {figures['repeats']} alternating rounds"
            " (ms)",
            "",
            table(
                [
                    "contender",
                    "in-process median",
                    "min-max",
                    "process median",
                    "process - start-up",
                ],
                rows,
            ),
            "",
            f"ours = {figures['contenders']['ours']['statement']}",
            *(
                f"-X importtime self ms by package, {name} (one run): "
                + ", ".join(
                    f"{package} {ms:.1f}"
                    for package, ms in figures["contenders"][name][
                        "importtime_self_ms_by_package"
                    ].items()
                )
                for name in ("ours", "mcp_types")
            ),
            f"ratio ours/mcp_types (in-process medians): "
            f"{figures['ratio_ours_to_mcp_types']:.3f} ({verdict} the target "
            f"<= {figures['target_ratio']}); "
            "by process time minus start-up: "
            f"{figures['ratio_ours_to_mcp_types_wall']}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    figures = run(quick="--quick" in args)
    if "--json" in args:
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

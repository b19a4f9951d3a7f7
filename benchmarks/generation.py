"""Generation: time to render every pinned revision in memory, and what it yields.

Times `render_all(load_manifest(schema), schema)` (load, build, emit and format all
six revisions; nothing is written) in this process, `repeats` times after the
generator's modules are imported; reports the median, min and max. The schemas
must be synced first; when a pinned file is missing or its hash is off, this runs
`mcp-codegen schema sync --from <shared schemas>` (the same command by hand).

Also reports lines and bytes of the generated files per revision (`types.py`,
`methods.py`, `__init__.py`), the shared files, and whether the rendered files equal
the package on disk under `generated/`.

    python -m benchmarks generation [--quick]
"""

from __future__ import annotations

import hashlib
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import REPO, Echo, shared_schemas, table

if TYPE_CHECKING:
    from collections.abc import Sequence

SCHEMA_DIR = REPO / "schema"
GENERATED_DIR = REPO / "generated"


def _mcp_codegen_cli() -> list[str]:
    script = Path(sys.executable).parent / "mcp-codegen"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "mcp_specgen.cli"]


def ensure_synced(echo: Echo = print) -> bool:
    """Sync the pinned schemas from the shared folder unless all are present and
    match their pins; return whether a sync ran."""
    from mcp_specgen.manifest import load_manifest

    manifest = load_manifest(SCHEMA_DIR)
    stale = []
    for pin in manifest.revisions:
        path = SCHEMA_DIR / pin.name / "schema.json"
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != (
            pin.sha256
        ):
            stale.append(pin.name)
    if not stale:
        return False
    command = [*_mcp_codegen_cli(), "schema", "sync", "--from", str(shared_schemas())]
    echo(f"syncing schemas ({', '.join(stale)}): {' '.join(command)}")
    subprocess.run(command, cwd=REPO, check=True)
    return True


def _sizes(files: dict[str, str]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Lines and bytes per revision module, and of the shared files."""
    from mcp_specgen.manifest import load_manifest

    modules = {pin.module: pin.name for pin in load_manifest(SCHEMA_DIR).revisions}
    per_revision: dict[str, dict[str, Any]] = {}
    shared: dict[str, Any] = {"files": 0, "lines": 0, "bytes": 0}
    for rel, text in sorted(files.items()):
        parts = Path(rel).parts  # mcp_specgen_types/<module>/<file>
        lines = text.count("\n")
        size = len(text.encode("utf-8"))
        if len(parts) == 3 and parts[1] in modules:
            entry = per_revision.setdefault(
                modules[parts[1]],
                {"module": parts[1], "files": {}, "lines": 0, "bytes": 0},
            )
            entry["files"][parts[2]] = {"lines": lines, "bytes": size}
            entry["lines"] += lines
            entry["bytes"] += size
        else:
            shared["files"] += 1
            shared["lines"] += lines
            shared["bytes"] += size
    ordered = {
        name: per_revision[name] for name in modules.values() if name in per_revision
    }
    return ordered, shared


def run(
    *, quick: bool = False, repeats: int | None = None, echo: Echo = print
) -> dict[str, Any]:
    """Time `render_all` (median of `repeats`, default 3, quick 1); print; return."""
    n = repeats if repeats is not None else (1 if quick else 3)
    synced = ensure_synced(echo)

    started = time.perf_counter()
    from mcp_specgen.generate import compare, render_all
    from mcp_specgen.manifest import load_manifest

    import_s = time.perf_counter() - started

    times: list[float] = []
    files: dict[str, str] = {}
    for _ in range(max(1, n)):
        started = time.perf_counter()
        files = render_all(load_manifest(SCHEMA_DIR), SCHEMA_DIR)
        times.append(time.perf_counter() - started)

    per_revision, shared = _sizes(files)
    differences = compare(files, GENERATED_DIR)
    figures: dict[str, Any] = {
        "what": "render_all(load_manifest(schema), schema): all revisions, in memory",
        "repeats": len(times),
        "seconds": {
            "median": round(statistics.median(times), 3),
            "min": round(min(times), 3),
            "max": round(max(times), 3),
            "samples": [round(t, 3) for t in times],
        },
        "generator_import_s": round(import_s, 3),
        "synced_schemas": synced,
        "revisions": per_revision,
        "shared_files": shared,
        "total": {
            "files": len(files),
            "lines": sum(text.count("\n") for text in files.values()),
            "bytes": sum(len(text.encode("utf-8")) for text in files.values()),
        },
        "matches_generated_on_disk": not differences,
        "differences_on_disk": [f"{d.status}: {d.path}" for d in differences],
    }
    echo(report(figures))
    return figures


def report(figures: dict[str, Any]) -> str:
    seconds = figures["seconds"]
    rows = []
    for name, entry in figures["revisions"].items():
        types = entry["files"].get("types.py", {"lines": 0, "bytes": 0})
        rows.append(
            [
                f"{name} ({entry['module']})",
                types["lines"],
                types["bytes"],
                entry["lines"],
                entry["bytes"],
            ]
        )
    shared = figures["shared_files"]
    rows.append(["shared (package, latest)", "", "", shared["lines"], shared["bytes"]])
    total = figures["total"]
    rows.append(["total", "", "", total["lines"], total["bytes"]])
    on_disk = (
        "equal to generated/ on disk"
        if figures["matches_generated_on_disk"]
        else "DIFFERS from generated/ on disk "
        f"({len(figures['differences_on_disk'])} files)"
    )
    return "\n".join(
        [
            f"Generation of all {len(figures['revisions'])} revisions in memory: "
            f"median {seconds['median']:.2f} s over {figures['repeats']} run(s) "
            f"(min {seconds['min']:.2f}, max {seconds['max']:.2f}); "
            f"{total['files']} files, {on_disk}",
            "",
            table(
                [
                    "revision",
                    "types.py lines",
                    "types.py bytes",
                    "all lines",
                    "all bytes",
                ],
                rows,
            ),
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run(quick="--quick" in args)


if __name__ == "__main__":
    main()

"""The README's Performance tables, in markdown, from one results file.

    python -m benchmarks report RESULTS.json [--out FILE]

`RESULTS.json` is what `python -m benchmarks all` (or any one benchmark)
writes. Each table is rendered when its benchmark is in the file, in the
README's order: the targets (every target any benchmark checked, met or
missed), wire types, import and cold start, stdio, Streamable HTTP, scaling,
revisions and the 2026 era. Figures are the medians of the run; ratios are
ours / theirs from the medians, as the benchmarks compute them. The prose
around the tables (what was measured, where the time goes) stays the
README's own.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import number

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

Results = dict[str, Any]


# --- markdown ----------------------------------------------------------------------


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub markdown table."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]
    return "\n".join(lines)


def figure(value: float | None, unit: str = "") -> str:
    """A median in about 4 significant characters (`1.64M`, `12.3k`, `4,677`,
    `512`, `5.12`); `-` when there is none."""
    if value is None:
        return "-"
    if value >= 1_000_000:
        text = f"{value / 1e6:.2f}M"
    elif 1_000 <= value < 10_000:
        text = f"{value:,.0f}"
    else:
        text = number(value)
    return f"{text}{unit}"


def times(value: float | None, missed_below: float | None = None) -> str:
    """`1.23` and the multiplication sign, bold when under `missed_below`;
    `-` when there is none."""
    if value is None:
        return "-"
    text = f"{value:.2f}\N{MULTIPLICATION SIGN}"
    return f"**{text}**" if missed_below is not None and value < missed_below else text


def median(entry: dict[str, Any] | None, key: str) -> float | None:
    """The median of `key` in a contender's entry (either stat shape)."""
    if entry is None or key not in entry:
        return None
    stat = entry[key]
    for name in ("median", "median_ms", "median_ops", "median_us"):
        if name in stat:
            return float(stat[name])
    return None


def _section(title: str, body: str) -> str:
    return f"### {title}\n\n{body}"


# --- the tables --------------------------------------------------------------------


def targets(results: Results) -> str | None:
    """Every target checked in the run: its benchmark, what, value, met."""
    rows: list[list[str]] = []

    def add(where: str, checks: Iterable[dict[str, Any]]) -> None:
        for check in checks:
            verdict = "met" if check["met"] else "**missed**"
            rows.append([where, check["target"], f"{check['value']:g}", verdict])

    for name in ("stdio", "http"):
        if name in results:
            add(name, results[name]["targets"])
    for table_name, table in (results.get("revisions") or {}).items():
        add(f"revisions {table_name}", table["targets"])
    if "types" in results:
        types = results["types"]
        misses = types.get("misses", [])
        rows.append(
            [
                "types",
                "ours ≥ the SDK path and hand-written Structs (see the tables)",
                f"{len(misses)} cells missed",
                "met" if types.get("meets_targets") else "**missed**",
            ]
        )
    if "import" in results:
        found = results["import"]
        rows.append(
            [
                "import",
                f"ours / mcp_types ≤ {found['target_ratio']:g}",
                f"{found['ratio_ours_to_mcp_types']:g}",
                "met" if found["meets_target"] else "**missed**",
            ]
        )
    if not rows:
        return None
    return _section(
        "Targets", markdown_table(["benchmark", "target", "this run", ""], rows)
    )


TYPE_CASES = {
    "tools_call_request": "`tools/call` request",
    "tools_list_result": "`tools/list` result, 100 tools",
    "call_tool_result": "`CallToolResult`, 10 text blocks",
    "initialize_request": "`initialize` request",
    "initialize_result": "`initialize` result",
}
TYPE_COLUMNS = (
    "ours",
    "mcp-types (SDK)",
    "mcp-types (model)",
    "hand-written msgspec",
)


def _ops(entry: dict[str, Any] | None) -> float | None:
    return None if entry is None else float(entry["median_ops"])


def wire_types(results: Results) -> str | None:
    """Decode and encode operations per second, and the two ratios."""
    if "types" not in results:
        return None
    found = results["types"]
    floor = found["targets"]["ours_to_hand_written"]
    tables = []
    for direction in ("decode", "encode"):
        rows = []
        for case, label in TYPE_CASES.items():
            cell = found[direction].get(case)
            if cell is None:
                continue
            size = found["cases"][case]["bytes"]
            entries, ratios = cell["contenders"], cell["ratios"]
            rows.append(
                [
                    f"{label} ({figure(size)} B)",
                    *(figure(_ops(entries.get(n))) for n in TYPE_COLUMNS),
                    times(ratios.get("ours/mcp-types (SDK)")),
                    times(ratios.get("ours/hand-written msgspec"), floor),
                ]
            )
        headers = [
            "decode + validate" if direction == "decode" else "encode",
            "ours",
            "SDK path",
            "model",
            "hand msgspec",
            "ours / SDK",
            "ours / hand",
        ]
        tables.append(markdown_table(headers, rows))
    return _section("Wire types (`python -m benchmarks types`)", "\n\n".join(tables))


def import_and_start(results: Results) -> str | None:
    """Import time against `mcp_types`, and the cold starts of the stdio run."""
    parts = []
    if "import" in results:
        found = results["import"]["contenders"]
        ours = median(found["ours"], "in_process") or 0.0
        theirs = median(found["mcp_types"], "in_process") or 0.0
        runtime = median(found.get("ours (runtime only)"), "in_process")
        rows = [
            [
                "`import mcp_specgen_runtime, mcp_specgen_types.v2025_11_25`",
                f"{ours:.1f} ms",
                f"{theirs:.1f} ms",
                times(ours / theirs if theirs else None),
            ],
        ]
        if runtime is not None:
            rows.append(["… runtime only", f"{runtime:.1f} ms", "", ""])
        parts.append(markdown_table(["", "ours", "`mcp_types`", "ratio"], rows))
    if "stdio" in results:
        entries = results["stdio"]["contenders"]
        names = list(entries)
        parts.append(
            markdown_table(
                ["", *names],
                [
                    [
                        "cold start",
                        *(
                            figure(median(entries[n], "cold_start_ms"), " ms")
                            for n in names
                        ),
                    ]
                ],
            )
        )
    if not parts:
        return None
    return _section("Import and start-up", "\n\n".join(parts))


def contenders_table(
    figures: dict[str, Any],
    metrics: dict[str, str],
    short: dict[str, str] | None = None,
    ratio_to: Sequence[str] | None = None,
) -> str:
    """Rows of metrics, a column per contender, then ours / each of
    `ratio_to` (default: every other contender)."""
    entries: dict[str, Any] = figures["contenders"]
    names = list(figures.get("order") or entries)
    ours, others = names[0], list(ratio_to if ratio_to is not None else names[1:])
    short = short or {}
    headers = ["", *names, *(f"ours / {short.get(o, o)}" for o in others)]
    rows = []
    for key, label in metrics.items():
        ratios = [figures["ratios"].get(f"{ours}/{o}", {}).get(key) for o in others]
        rows.append(
            [
                label,
                *(figure(median(entries[n], key)) for n in names),
                *(times(r) for r in ratios),
            ]
        )
    return markdown_table(headers, rows)


STDIO_METRICS = {
    "sequential_calls_per_s": "sequential calls/s",
    "p50_us": "sequential p50 µs",
    "p99_us": "sequential p99 µs",
    "pipelined_calls_per_s": "pipelined calls/s",
    "cpu_us_per_call_sequential": "server CPU µs/call, sequential",
    "cpu_us_per_call_pipelined": "server CPU µs/call, pipelined",
    "peak_rss_mib": "peak RSS MiB",
}
HTTP_METRICS = {
    "sequential_req_per_s": "sequential req/s",
    "p50_us": "sequential p50 µs",
    "p99_us": "sequential p99 µs",
    "concurrent_req_per_s": "16 clients req/s",
    "cpu_us_per_req_sequential": "server CPU µs/request, sequential",
    "cpu_us_per_req_concurrent": "server CPU µs/request, 16 clients",
    "peak_rss_mib": "peak RSS MiB",
}


def stdio_table(results: Results) -> str | None:
    if "stdio" not in results:
        return None
    figures = results["stdio"]
    others = ["TypeScript SDK", "Python SDK", "bare msgspec"]
    table = contenders_table(
        figures,
        STDIO_METRICS,
        {"TypeScript SDK": "TS", "Python SDK": "Py SDK", "bare msgspec": "bare"},
        [o for o in others if o in figures["contenders"]],
    )
    return _section("stdio server (`python -m benchmarks stdio`)", table)


def http_table(results: Results) -> str | None:
    if "http" not in results:
        return None
    figures = results["http"]
    others = ["TypeScript SDK", "Python SDK"]
    table = contenders_table(
        figures,
        HTTP_METRICS,
        {"TypeScript SDK": "TS", "Python SDK": "Py SDK"},
        [o for o in others if o in figures["contenders"]],
    )
    return _section("Streamable HTTP server (`python -m benchmarks http`)", table)


SCALING = {
    "tools_list": (
        "**`tools/list` over stdio, by number of tools**",
        "tools",
        {"calls_per_s": "calls/s", "p50_us": "p50 µs", "response_bytes": "bytes"},
    ),
    "http_clients": (
        "**`tools/call echo` over Streamable HTTP, by concurrent clients**",
        "clients",
        {"req_per_s": "req/s", "p50_us": "p50 µs"},
    ),
    "message_sizes": (
        "**`tools/call echo` over stdio, by message size**",
        "message bytes",
        {"mb_per_s": "MB/s", "p50_us": "p50 µs"},
    ),
}


def scaling_tables(results: Results) -> str | None:
    """One table per dimension: a row per cell, each metric per contender,
    and ours / each SDK of the first metric."""
    if "scaling" not in results:
        return None
    parts = []
    for dimension, (title, first_column, metrics) in SCALING.items():
        found = results["scaling"].get(dimension)
        if found is None:
            continue
        cells: dict[str, Any] = found["cells"]
        names = list(next(iter(cells.values()))["contenders"])
        lead = next(iter(metrics))
        headers = [
            first_column,
            *(f"{label} ({' · '.join(names)})" for label in metrics.values()),
            *(f"ours / {name}" for name in names[1:]),
        ]
        rows = []
        for cell_name, cell in cells.items():
            entries, ratios = cell["contenders"], cell["ratios"]
            rows.append(
                [
                    f"{int(cell_name):,}",
                    *(
                        " · ".join(figure(median(entries[n], key)) for n in names)
                        for key in metrics
                    ),
                    *(
                        times(ratios.get(f"{names[0]}/{n}", {}).get(lead))
                        for n in names[1:]
                    ),
                ]
            )
        parts.append(f"{title}\n\n{markdown_table(headers, rows)}")
    return _section("Scaling (`python -m benchmarks scaling`)", "\n\n".join(parts))


def revisions_tables(results: Results) -> str | None:
    """A table per revision and transport, with ours / the era's TypeScript
    SDK (bold when under its target)."""
    if "revisions" not in results:
        return None
    parts = []
    for figures in results["revisions"].values():
        names: list[str] = figures["order"]
        ours, typescript = names[0], names[1]
        metrics: dict[str, str] = figures["metrics"]
        floors = _floors(figures.get("targets", []), metrics)
        headers = ["", *names, *(f"ours / {n}" for n in names[1:])]
        rows = []
        for key, label in metrics.items():
            ratio_cells = []
            for other in names[1:]:
                value = figures["ratios"].get(f"{ours}/{other}", {}).get(key)
                floor = floors.get(key) if other == typescript else None
                ratio_cells.append(times(value, floor))
            rows.append(
                [
                    label,
                    *(figure(median(figures["contenders"][n], key)) for n in names),
                    *ratio_cells,
                ]
            )
        parts.append(f"**{figures['title']}**\n\n{markdown_table(headers, rows)}")
    return _section(
        "Revisions and the 2026 era (`python -m benchmarks revisions`)",
        "\n\n".join(parts),
    )


def _floors(
    checks: Iterable[dict[str, Any]], metrics: dict[str, str]
) -> dict[str, float]:
    """The least ratio each targeted metric must reach, read back from the
    checks' text (`ours/X <label> >= 1.5x`)."""
    found: dict[str, float] = {}
    for check in checks:
        target: str = check["target"]
        head, _, floor = target.rpartition(" >= ")
        for key, label in metrics.items():
            if head.endswith(f" {label}"):
                found[key] = float(floor.rstrip("x"))
    return found


def provenance(results: Results) -> str:
    """The line saying where the figures come from."""
    meta = results.get("meta", {})
    walls = sum(v for k, v in meta.items() if k.endswith("_wall_s"))
    which = ", ".join(meta.get("benchmarks", [])) or "?"
    quick = " (--quick: smoke sizes, not figures to quote)" if meta.get("quick") else ""
    return (
        f"From one run of `python -m benchmarks` ({which}){quick}, started "
        f"{meta.get('started', '?')}, {walls / 60:.1f} min of benchmarks; "
        f"Python {meta.get('python', '?')}, {meta.get('platform', '?')}, "
        f"{meta.get('cpus', '?')} CPUs."
    )


SECTIONS = (
    targets,
    wire_types,
    import_and_start,
    stdio_table,
    http_table,
    scaling_tables,
    revisions_tables,
)


def render(results: Results) -> str:
    """Every table the results allow, in the README's order."""
    sections = [provenance(results)]
    sections += [text for section in SECTIONS if (text := section(results))]
    return "\n\n".join(sections) + "\n"


def main(argv: Sequence[str] | None = None) -> str:
    """Read the results, print (or write) the markdown; return it."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks report",
        description="Render the README's Performance tables from a results file.",
    )
    parser.add_argument("results", type=Path, help="a JSON file the benchmarks wrote")
    parser.add_argument("--out", type=Path, help="write here instead of printing")
    args = parser.parse_args(argv)
    text = render(json.loads(args.results.read_text(encoding="utf-8")))
    if args.out is None:
        print(text, end="")
    else:
        args.out.write_text(text, encoding="utf-8")
    return text

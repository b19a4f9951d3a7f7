"""Yardstick: the specification's own examples, decoded and re-encoded exactly.

For revision 2026-07-28 the shared schema folder holds the specification's example
instances, one folder per schema definition (`examples/<TypeName>/*.json`). An
example passes when it decodes into the type of its folder's name and encodes back
to JSON equal to the input, integers and floats told apart (`50` is not `50.0`).

Two contenders:

- datamodel-code-generator (the `datamodel-codegen` CLI of the project venv) with
  msgspec output, generated into a temporary folder and imported from there;
  decoded with `msgspec.json.decode(data, type=T)`, encoded with
  `msgspec.json.encode`. Several flag sets are tried (`CANDIDATES`); the best counts.
- ours: `mcp_specgen_types.v2026_07_28` through `mcp_specgen_runtime.decode/encode`.

    python -m benchmarks yardstick [--quick]
"""

from __future__ import annotations

import collections
import importlib.util
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ._common import Echo, shared_schemas, table

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

REVISION = "2026-07-28"
OUR_MODULE = "mcp_specgen_types.v2026_07_28"

_JSONVALUE_ANY = json.dumps({"JSONValue": "typing.Any"})

BASE_FLAGS: tuple[str, ...] = (
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "msgspec.Struct",
    "--target-python-version",
    "3.11",
    "--disable-timestamp",
)
"""Always passed; `--target-python-version` is the project's floor and interpreter
(3.12 would emit `type` statements, which Python 3.11 cannot parse)."""

_IDIOMATIC: tuple[str, ...] = (
    "--use-annotated",
    "--field-constraints",
    "--use-union-operator",
    "--use-schema-description",
    "--use-title-as-name",
    "--use-specialized-enum",
    "--use-msgspec-tagged-unions",
)

CANDIDATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Best first: on a tie the earlier candidate is kept.
    (
        "idiomatic + JSONValue=Any",
        (*_IDIOMATIC, "--type-overrides", _JSONVALUE_ANY),
    ),
    ("plain + JSONValue=Any", ("--type-overrides", _JSONVALUE_ANY)),
    ("idiomatic", _IDIOMATIC),
    ("plain", ()),
    ("idiomatic + collapse-root-models", (*_IDIOMATIC, "--collapse-root-models")),
    ("idiomatic + type-alias-type", (*_IDIOMATIC, "--use-type-alias-type")),
)
"""Flag sets tried on top of `BASE_FLAGS`.

`--type-overrides {"JSONValue": "typing.Any"}` is the one flag that matters: the
schema's `JSONValue` is a recursive union, which datamodel-codegen writes as a
recursive `TypeAlias` with a string forward reference; msgspec cannot resolve that
(`Type 'ForwardRef('JSONValue')' is not supported`). `--use-type-alias-type` writes
`typing_extensions.TypeAliasType`, which msgspec supports only as `typing.TypeAliasType`
(Python 3.12+), so on 3.11 it makes things worse. The other flags change the look of
the code, not the pass count.
"""

BEST = CANDIDATES[0]
"""The flag set the quick run uses (the best found by the full run)."""


@dataclass
class Outcome:
    """The result of one contender on every example."""

    contender: str
    passed: int = 0
    total: int = 0
    failures: dict[str, list[str]] = field(
        default_factory=lambda: collections.defaultdict(list)
    )

    def fail(self, category: str, example: str) -> None:
        self.failures[category].append(example)

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": self.total,
            "pass_rate": round(self.passed / self.total, 4) if self.total else 0.0,
            "failures": {
                category: {"count": len(names), "examples": sorted(names)}
                for category, names in sorted(
                    self.failures.items(), key=lambda item: -len(item[1])
                )
            },
        }


# ---------------------------------------------------------------------------
# Exact JSON comparison


def _tagged(value: Any) -> Any:
    """JSON value with each number tagged by kind, so `1`, `1.0` and `True` differ."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, dict):
        return ("object", {key: _tagged(item) for key, item in value.items()})
    if isinstance(value, list):
        return ("array", [_tagged(item) for item in value])
    return (type(value).__name__, value)


def exact_equal(left: Any, right: Any) -> bool:
    """Equal JSON values, integers and floats told apart, key order ignored."""
    return bool(_tagged(left) == _tagged(right))


def _mismatch_kind(expected: Any, actual: Any) -> str:
    """Name the first kind of difference between the input and its round trip."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if set(expected) - set(actual):
            return "round trip drops object members (unknown/additional properties)"
        if set(actual) - set(expected):
            return "round trip adds object members"
        for key in expected:
            if not exact_equal(expected[key], actual[key]):
                return _mismatch_kind(expected[key], actual[key])
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return "round trip changes an array's length"
        for left, right in zip(expected, actual, strict=True):
            if not exact_equal(left, right):
                return _mismatch_kind(left, right)
    if (
        isinstance(expected, int)
        and not isinstance(expected, bool)
        and isinstance(actual, float)
    ):
        return "integer re-encoded as float (`number` typed float)"
    return "round trip changes a value"


def _decode_failure_kind(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, TypeError):
        if "ForwardRef" in text:
            return "type unsupported by msgspec: recursive alias (forward reference)"
        if "must be tagged" in text:
            return "type unsupported by msgspec: union of untagged Structs"
        if "not supported" in text:
            return "type unsupported by msgspec: other"
        return f"TypeError: {text[:80]}"
    if isinstance(exc, msgspec.ValidationError):
        return "rejected as invalid (ValidationError)"
    return f"{type(exc).__name__}"


# ---------------------------------------------------------------------------
# Examples and the two contenders


def examples(revision: str = REVISION) -> list[tuple[str, Path]]:
    """(type name, file) of every example of `revision`, sorted."""
    root = shared_schemas() / revision / "examples"
    found = sorted(
        (path.parent.name, path) for path in root.glob("*/*.json") if path.is_file()
    )
    if not found:
        raise FileNotFoundError(f"no examples under {root}")
    return found


def _normal(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def resolve_type(module: ModuleType, name: str) -> Any | None:
    """The type called `name` in `module`, or the one it was unambiguously renamed to.

    A generator may rename a definition (title as name, a numeric suffix on a
    clash, other casing); accept a single candidate whose name is `name` up to case
    and punctuation, or `name` plus a numeric suffix.
    """
    if hasattr(module, name):
        return getattr(module, name)
    wanted = _normal(name)
    candidates = [
        attr
        for attr in vars(module)
        if not attr.startswith("_")
        and (
            _normal(attr) == wanted
            or re.fullmatch(re.escape(name) + r"_?\d+", attr) is not None
        )
    ]
    if len(candidates) == 1:
        return getattr(module, candidates[0])
    return None


def evaluate(
    contender: str,
    module: ModuleType,
    decode: Callable[[bytes, Any], Any],
    encode: Callable[[Any], bytes],
    cases: Sequence[tuple[str, Path]],
) -> Outcome:
    """Decode, re-encode and compare every example with one contender's types."""
    outcome = Outcome(contender, total=len(cases))
    for type_name, path in cases:
        label = f"{type_name}/{path.name}"
        target = resolve_type(module, type_name)
        if target is None:
            outcome.fail("no type of that name", label)
            continue
        data = path.read_bytes()
        try:
            value = decode(data, target)
        except Exception as exc:
            outcome.fail(_decode_failure_kind(exc), label)
            continue
        try:
            encoded = encode(value)
        except Exception as exc:
            outcome.fail(f"encode fails: {type(exc).__name__}", label)
            continue
        expected, actual = json.loads(data), json.loads(encoded)
        if exact_equal(expected, actual):
            outcome.passed += 1
        else:
            outcome.fail(_mismatch_kind(expected, actual), label)
    return outcome


def _datamodel_cli() -> list[str]:
    script = Path(sys.executable).parent / "datamodel-codegen"
    if script.exists():
        return [str(script)]
    found = shutil.which("datamodel-codegen")
    if found:
        return [found]
    raise FileNotFoundError(
        "datamodel-codegen not found; install the project's dev extra"
    )


def datamodel_version() -> str:
    from importlib.metadata import version

    return version("datamodel-code-generator")


def generate_datamodel(
    flags: Sequence[str], out: Path, schema: Path
) -> tuple[float, list[str]]:
    """Run the CLI once; return its wall time (s) and its msgspec warnings."""
    command = [
        *_datamodel_cli(),
        "--input",
        str(schema),
        "--output",
        str(out),
        *BASE_FLAGS,
        *flags,
    ]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(
            f"datamodel-codegen failed ({proc.returncode}):\n{proc.stderr[-2000:]}"
        )
    warned = [
        line.split("UserWarning: ", 1)[1]
        for line in proc.stderr.splitlines()
        if "UserWarning: msgspec cannot decode" in line
    ]
    return elapsed, warned


def load_generated(path: Path, module_name: str) -> ModuleType:
    """Import a generated file under a unique name; msgspec resolves its hints there."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def _msgspec_decode(data: bytes, target: Any) -> Any:
    return msgspec.json.decode(data, type=target)


def run_datamodel(
    label: str,
    flags: Sequence[str],
    cases: Sequence[tuple[str, Path]],
    *,
    repeats: int = 1,
    workdir: Path,
) -> dict[str, Any]:
    """Generate with one flag set (`repeats` times, for timing) and evaluate it."""
    schema = shared_schemas() / REVISION / "schema.json"
    slug = re.sub(r"[^0-9a-z]+", "_", label.lower()).strip("_")
    out = workdir / f"dmc_{slug}.py"
    times: list[float] = []
    warned: list[str] = []
    for _ in range(max(1, repeats)):
        elapsed, warned = generate_datamodel(flags, out, schema)
        times.append(elapsed)
    module_name = f"_benchmarks_dmc_{slug}"
    try:
        module = load_generated(out, module_name)
        outcome = evaluate(
            "datamodel-codegen", module, _msgspec_decode, msgspec.json.encode, cases
        )
    finally:
        sys.modules.pop(module_name, None)
    text = out.read_text(encoding="utf-8")
    return {
        "label": label,
        "flags": [*BASE_FLAGS, *flags],
        "generation_s": {
            "median": round(statistics.median(times), 3),
            "min": round(min(times), 3),
            "max": round(max(times), 3),
            "n": len(times),
        },
        "generated_lines": text.count("\n"),
        "generated_bytes": len(text.encode("utf-8")),
        "msgspec_warnings": len(warned),
        **outcome.as_dict(),
    }


def run_ours(cases: Sequence[tuple[str, Path]]) -> dict[str, Any]:
    import importlib

    from mcp_specgen_runtime import decode, encode

    module = importlib.import_module(OUR_MODULE)
    outcome = evaluate("mcp-codegen", module, decode, encode, cases)
    return {"module": OUR_MODULE, "codec": "mcp_specgen_runtime", **outcome.as_dict()}


def run(*, quick: bool = False, echo: Echo = print) -> dict[str, Any]:
    """Run the yardstick, print the tables, return the figures.

    `quick`: only the best known flag set, generated once; otherwise every
    candidate, the best one generated three times for its timing.
    """
    cases = examples()
    candidates = (BEST,) if quick else CANDIDATES
    tried: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mcp-yardstick-") as tmp:
        for label, flags in candidates:
            tried.append(run_datamodel(label, flags, cases, workdir=Path(tmp)))
        best = max(tried, key=lambda r: r["passed"])  # first on a tie
        if not quick:
            # Time the winner properly: three runs, median.
            best_flags = dict(candidates)[best["label"]]
            retimed = run_datamodel(
                best["label"], best_flags, cases, repeats=3, workdir=Path(tmp)
            )
            best["generation_s"] = retimed["generation_s"]
    ours = run_ours(cases)

    figures: dict[str, Any] = {
        "revision": REVISION,
        "examples": len(cases),
        "example_types": len({name for name, _ in cases}),
        "datamodel_code_generator_version": datamodel_version(),
        "msgspec_version": msgspec.__version__,
        "datamodel": best,
        "ours": ours,
        "candidates": [
            {
                "label": r["label"],
                "flags": r["flags"],
                "passed": r["passed"],
                "generation_s": r["generation_s"],
                "msgspec_warnings": r["msgspec_warnings"],
            }
            for r in tried
        ],
    }
    echo(report(figures))
    return figures


def report(figures: dict[str, Any]) -> str:
    total = figures["examples"]
    dmc, ours = figures["datamodel"], figures["ours"]
    lines = [
        f"Yardstick: {total} examples of {figures['revision']} "
        f"({figures['example_types']} types), decode -> encode -> exact JSON equality",
        "",
        table(
            ["contender", "passed", "rate"],
            [
                [
                    f"datamodel-codegen {figures['datamodel_code_generator_version']}"
                    " (msgspec.Struct)",
                    f"{dmc['passed']}/{total}",
                    f"{dmc['pass_rate']:.1%}",
                ],
                [
                    "mcp-codegen (ours)",
                    f"{ours['passed']}/{total}",
                    f"{ours['pass_rate']:.1%}",
                ],
            ],
        ),
        "",
        f"datamodel-codegen flags ({dmc['label']}): {' '.join(dmc['flags'])}",
        "datamodel-codegen generation (CLI wall time, "
        f"{dmc['generation_s']['n']} run(s)):"
        f" median {dmc['generation_s']['median']:.2f} s;"
        f" {dmc['generated_lines']} lines, {dmc['generated_bytes']} bytes;"
        f" {dmc['msgspec_warnings']} 'msgspec cannot decode' warnings",
    ]
    if len(figures["candidates"]) > 1:
        lines += [
            "",
            table(
                ["flag set", "passed", "gen s"],
                [
                    [c["label"], c["passed"], f"{c['generation_s']['median']:.2f}"]
                    for c in figures["candidates"]
                ],
            ),
        ]
    for name, outcome in (("datamodel-codegen", dmc), ("ours", ours)):
        if outcome["failures"]:
            lines += ["", f"{name} failures by category:"]
            lines += [
                f"  {info['count']:3d}  {category}"
                for category, info in outcome["failures"].items()
            ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run(quick="--quick" in args)


if __name__ == "__main__":
    main()


__all__ = ["CANDIDATES", "evaluate", "exact_equal", "examples", "run"]

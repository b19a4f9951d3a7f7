"""The differential check: jsonschema (the oracle) against the generated types.

For every definition of every revision this module builds instances
deterministically (the examples shipped with the schema, values generated
from the schema with a fixed seed, and mutations of those), asks jsonschema
whether each instance is valid, asks the runtime codec whether it converts,
and records every disagreement.

Used by `test_agreement.py` and `report.py`; everything is cached, so the
tests and the report do the work once per process.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import msgspec

from mcp_codegen_runtime import convert, decode, encode, to_builtins

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = Path(
    os.environ.get("MCP_SCHEMAS_DIR", REPO.parent / "shared" / "mcp-schemas")
)

REVISIONS: dict[str, str] = {
    "2024-11-05": "v2024_11_05",
    "2025-03-26": "v2025_03_26",
    "2025-06-18": "v2025_06_18",
    "2025-11-25": "v2025_11_25",
    "2026-07-28": "v2026_07_28",
    "draft": "draft",
}
"""Revision -> module of `mcp_codegen_types`."""

EXAMPLE_REVISIONS = ("2026-07-28", "draft")

# How much to generate: bounded, so the folder stays fast.
GENERATED_PER_DEFINITION = 8
"""Values generated from the schema per definition (besides the examples)."""
MUTATIONS_PER_BASE = 6
"""Sampled deep mutations per valid base instance (root mutations are all kept)."""
MAX_INSTANCES_PER_DEFINITION = 120
MAX_DEPTH = 6
"""Nesting depth beyond which generation only fills in what is required."""

# Annotation keywords: they never change what a schema accepts (format is not
# asserted, neither by jsonschema by default nor by the generated types).
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "format",
        "$comment",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "default",
        "$schema",
    }
)


# --- strict equality ------------------------------------------------------------


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values, with int/float/bool told apart (50 is not 50.0 nor True).

    Object key order does not matter; -0.0 differs from 0.0.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(
            json_equal(x, y) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def canonical(value: Any) -> str:
    """A text that tells JSON values apart exactly as `json_equal` does."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


# --- revisions ------------------------------------------------------------------


@dataclass(eq=False)
class Revision:
    name: str
    schema: dict[str, Any]
    defs_key: str
    module: ModuleType

    @property
    def definitions(self) -> dict[str, Any]:
        return self.schema[self.defs_key]

    @functools.cached_property
    def validator_cls(self) -> type[jsonschema.protocols.Validator]:
        return jsonschema.validators.validator_for(self.schema)

    @functools.cache  # noqa: B019 - revisions live as long as the process
    def validator(self, name: str) -> jsonschema.protocols.Validator:
        """A validator of definition `name`, the whole schema as its resource.

        No format checker: the generator does not assert `format` either.
        """
        root = dict(self.schema, **{"$ref": f"#/{self.defs_key}/{name}"})
        return self.validator_cls(root)

    def type_of(self, name: str) -> Any:
        return getattr(self.module, name)


@functools.cache
def revision(name: str) -> Revision:
    path = SCHEMAS / name / "schema.json"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: the differential tests read the MCP schemas from "
            "../shared/mcp-schemas (or $MCP_SCHEMAS_DIR)"
        )
    schema = json.loads(path.read_text(encoding="utf-8"))
    defs_key = "$defs" if "$defs" in schema else "definitions"
    module = import_module(f"mcp_codegen_types.{REVISIONS[name]}")
    return Revision(name=name, schema=schema, defs_key=defs_key, module=module)


def examples_dir(rev: str) -> Path:
    return SCHEMAS / rev / "examples"


def example_files(rev: str) -> list[Path]:
    return sorted(examples_dir(rev).glob("*/*.json"))


# --- generating valid instances -------------------------------------------------

STRINGS = (
    "",
    "a",
    "hello world",
    "é ☃ 😀 中文",
    "nul\u0000byte",
    "tab\tnew\nline",
    '"quoted" \\ backslash',
    "x" * 300,
    "123",
    "true",
    "null",
    "2025-01-12T15:00:58Z",
    "https://example.com/a?b=c#d",
    "file:///tmp/x.txt",
)
INTEGERS = (
    0,
    1,
    -1,
    42,
    2**31,
    -(2**31) - 1,
    2**53 + 1,
    2**63 - 1,
    -(2**63),
    2**64 + 7,
)
FLOATS = (0.5, -2.25, 1.0, 0.0, -0.0, 1e300, -1e-300, 5e-324, math.pi, 1e16, 0.1)
KEYS = (
    "x-extra",
    "com.example/key",
    "",
    "ünïcödé",
    "with space",
    "a.b",
    "UPPER",
    "0",
)


class Generator:
    """Builds values that a schema accepts, deterministically from a seed.

    Handles the keywords the MCP schemas use: type (also lists), properties,
    required, additionalProperties, items, minItems, maxItems, minimum,
    maximum, const, enum, anyOf, oneOf, allOf and local $ref, recursive ones
    included (beyond MAX_DEPTH only what is required is filled in).
    """

    def __init__(self, rev: Revision, seed: str) -> None:
        self.rev = rev
        self.prefix = f"#/{rev.defs_key}/"
        self.rng = random.Random(seed)
        self.optional = 0.5
        self._cost: dict[str, float] = {}

    # -- schema helpers -----------------------------------------------------------

    def deref(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            extra = set(node) - {"$ref"} - ANNOTATIONS
            if extra:
                raise NotImplementedError(f"$ref beside {sorted(extra)}")
            ref = node["$ref"]
            assert ref.startswith(self.prefix), ref
            node = self.rev.definitions[ref.removeprefix(self.prefix)]
        return node

    def merge_all_of(self, node: dict[str, Any]) -> dict[str, Any]:
        """One object schema from `allOf` parts (the MCP schemas only merge objects)."""
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        properties: dict[str, Any] = dict(merged.get("properties", {}))
        required: set[str] = set(merged.get("required", []))
        for part in node["allOf"]:
            part = self.deref(part)
            if "allOf" in part:
                part = self.merge_all_of(part)
            for key, sub in part.get("properties", {}).items():
                if key in properties:
                    properties[key] = _narrower(properties[key], sub)
                else:
                    properties[key] = sub
            required |= set(part.get("required", []))
            for key, value in part.items():
                if key not in ("properties", "required"):
                    merged.setdefault(key, value)
        merged["type"] = "object"
        merged["properties"] = properties
        merged["required"] = sorted(required)
        return merged

    def cost(self, node: Any, visiting: frozenset[str] = frozenset()) -> float:
        """The least nesting a value of `node` needs (inf: none without recursion)."""
        if not isinstance(node, dict):
            return 0
        if "$ref" in node:
            name = node["$ref"].removeprefix(self.prefix)
            if name in self._cost:
                return self._cost[name]
            if name in visiting:
                return math.inf
            value = self.cost(self.rev.definitions[name], visiting | {name})
            if not visiting:
                self._cost[name] = value
            return value
        if "allOf" in node:
            return self.cost(self.merge_all_of(node), visiting)
        if "const" in node or "enum" in node:
            return 0
        for keyword in ("anyOf", "oneOf"):
            if keyword in node:
                return min(self.cost(o, visiting) for o in node[keyword])
        kind = node.get("type")
        if kind == "object" or "properties" in node:
            props = node.get("properties", {})
            required = node.get("required", [])
            return 1 + max((self.cost(props[r], visiting) for r in required), default=0)
        if kind == "array":
            if node.get("minItems", 0) > 0:
                return 1 + self.cost(node.get("items", {}), visiting)
            return 1
        return 0

    # -- values -------------------------------------------------------------------

    def value(self, node: Any, depth: int = 0) -> Any:
        if node is True or node == {}:
            return self.any_value(depth)
        if not isinstance(node, dict):
            raise NotImplementedError(f"schema {node!r}")
        if "$ref" in node:
            return self.value(self.deref(node), depth)
        if "allOf" in node:
            return self.value(self.merge_all_of(node), depth)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return self.rng.choice(node["enum"])
        for keyword in ("anyOf", "oneOf"):
            if keyword in node:
                options = node[keyword]
                if depth >= MAX_DEPTH:
                    option = min(options, key=self.cost)
                else:
                    option = self.rng.choice(options)
                return self.value(option, depth)
        kind = node.get("type")
        if isinstance(kind, list):
            return self.value(dict(node, type=self.rng.choice(kind)), depth)
        if kind == "object" or (kind is None and "properties" in node):
            return self.object_value(node, depth)
        if kind == "array":
            return self.array_value(node, depth)
        if kind == "string":
            return self.string()
        if kind == "integer":
            return self.integer(node.get("minimum"), node.get("maximum"))
        if kind == "number":
            return self.number(node.get("minimum"), node.get("maximum"))
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        if kind is None:
            return self.any_value(depth)
        raise NotImplementedError(f"type {kind!r}")

    def object_value(self, node: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", []))
        deep = depth >= MAX_DEPTH
        out: dict[str, Any] = {}
        for key, sub in props.items():
            if key in required or (not deep and self.rng.random() < self.optional):
                out[key] = self.value(sub, depth + 1)
        extra = node.get("additionalProperties", True)
        if extra is not False and not deep:
            # Maps always get some entries; objects with properties sometimes
            # carry keys the schema does not name (they are open).
            count = self.rng.randint(0, 3) if not props else int(
                self.rng.random() < 0.3
            ) * self.rng.randint(1, 2)
            for _ in range(count):
                key = self.rng.choice(KEYS)
                if key in props or key in out:
                    continue
                out[key] = self.value({} if extra is True else extra, depth + 1)
        return out

    def array_value(self, node: dict[str, Any], depth: int) -> list[Any]:
        low = node.get("minItems", 0)
        high = node.get("maxItems", 3)
        count = low if depth >= MAX_DEPTH else self.rng.randint(low, max(low, min(3, high)))
        items = node.get("items", {})
        return [self.value(items, depth + 1) for _ in range(count)]

    def string(self) -> str:
        if self.rng.random() < 0.7:
            return self.rng.choice(STRINGS)
        return "".join(
            self.rng.choice("abcXYZ09 _-/:.é€😀") for _ in range(self.rng.randint(1, 12))
        )

    def integer(self, low: float | None, high: float | None) -> int:
        pool = [i for i in INTEGERS if _within(i, low, high)]
        pool.append(self.rng.randint(int(low if low is not None else -(10**6)), 10**6))
        return self.rng.choice(pool)

    def number(self, low: float | None, high: float | None) -> int | float:
        pool: list[int | float] = [
            v for v in (*INTEGERS, *FLOATS) if _within(v, low, high)
        ]
        lo = low if low is not None else -1e6
        hi = high if high is not None else 1e6
        pool.append(self.rng.uniform(lo, hi))
        return self.rng.choice(pool)

    def any_value(self, depth: int) -> Any:
        """Any JSON value (the schema `{}`)."""
        kinds = ["null", "bool", "int", "float", "str"]
        if depth < MAX_DEPTH:
            kinds += ["list", "dict"]
        kind = self.rng.choice(kinds)
        if kind == "null":
            return None
        if kind == "bool":
            return self.rng.random() < 0.5
        if kind == "int":
            return self.rng.choice(INTEGERS)
        if kind == "float":
            return self.rng.choice(FLOATS)
        if kind == "str":
            return self.string()
        if kind == "list":
            return [self.any_value(depth + 1) for _ in range(self.rng.randint(0, 2))]
        return {
            self.rng.choice(KEYS): self.any_value(depth + 1)
            for _ in range(self.rng.randint(0, 2))
        }


def _within(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _narrower(a: Any, b: Any) -> Any:
    core_a = {k: v for k, v in a.items() if k not in ANNOTATIONS}
    core_b = {k: v for k, v in b.items() if k not in ANNOTATIONS}
    return b if core_a.items() <= core_b.items() else a


# --- mutations ------------------------------------------------------------------

Path_ = tuple[str | int, ...]

MUTATION_KINDS = (
    "root-wrong-type",
    "drop-key",
    "wrong-type",
    "wrong-const",
    "extra-key",
    "wrong-item",
    "integral-float",
    "huge-int",
)
"""Ways an instance is broken (or, for some, only reshaped; jsonschema decides)."""

EXTRA_KEY = "x-differential-extra"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


_OTHER_VALUES: dict[str, tuple[Any, ...]] = {
    "null": (None,),
    "boolean": (True, False),
    "number": (7, 2.5),
    "string": ("not-the-right-type",),
    "array": ([], [1, "two"]),
    "object": ({}, {"k": "v"}),
}


def _wrong_typed(value: Any, rng: random.Random) -> Any:
    kinds = [k for k in _OTHER_VALUES if k != _json_kind(value)]
    return rng.choice(_OTHER_VALUES[rng.choice(kinds)])


def _nodes(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _nodes(sub, (*path, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from _nodes(sub, (*path, index))


def _replace(value: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = _replace(value[head], rest, new)
        return out
    out_list = list(value)
    out_list[head] = _replace(value[head], rest, new)  # type: ignore[index]
    return out_list


def _get(value: Any, path: Path_) -> Any:
    for part in path:
        value = value[part]
    return value


@dataclass(frozen=True)
class Mutation:
    kind: str
    path: Path_
    instance: Any


def mutations(base: Any, rng: random.Random, deep_limit: int) -> list[Mutation]:
    """Broken variants of `base`: all at the root, `deep_limit` sampled below it."""
    found: list[Mutation] = []
    for path, node in _nodes(base):
        parent_path = path[:-1]
        if not path:
            found.append(Mutation("root-wrong-type", path, _wrong_typed(node, rng)))
        else:
            found.append(
                Mutation("wrong-type", path, _replace(base, path, _wrong_typed(node, rng)))
            )
            if isinstance(path[-1], str):
                parent = dict(_get(base, parent_path))
                del parent[path[-1]]
                found.append(
                    Mutation("drop-key", path, _replace(base, parent_path, parent))
                )
        if isinstance(node, dict) and EXTRA_KEY not in node:
            found.append(
                Mutation(
                    "extra-key",
                    path,
                    _replace(base, path, {**node, EXTRA_KEY: {"x": [1, 2.5, None]}}),
                )
            )
        if isinstance(node, list) and node:
            index = rng.randrange(len(node))
            found.append(
                Mutation(
                    "wrong-item",
                    (*path, index),
                    _replace(base, (*path, index), _wrong_typed(node[index], rng)),
                )
            )
        if isinstance(node, str):
            found.append(
                Mutation("wrong-const", path, _replace(base, path, node + "-not-const"))
            )
        if type(node) is int:
            found.append(Mutation("wrong-const", path, _replace(base, path, node + 1)))
            found.append(
                Mutation("integral-float", path, _replace(base, path, float(node)))
                if abs(node) < 2**53
                else Mutation("integral-float", path, _replace(base, path, 1e16))
            )
            found.append(Mutation("huge-int", path, _replace(base, path, 2**64 + 1)))
    shallow = [m for m in found if len(m.path) <= 1]
    deep = [m for m in found if len(m.path) > 1]
    # Sample the deep ones kind by kind, so that every kind is represented.
    by_kind: dict[str, list[Mutation]] = {}
    for m in deep:
        by_kind.setdefault(m.kind, []).append(m)
    picked: list[Mutation] = []
    pools = [rng.sample(v, len(v)) for _, v in sorted(by_kind.items())]
    while len(picked) < deep_limit and any(pools):
        for pool in pools:
            if pool and len(picked) < deep_limit:
                picked.append(pool.pop())
    return shallow + picked


# --- checking -------------------------------------------------------------------


@dataclass
class Outcome:
    """What jsonschema and the codec said about one instance."""

    revision: str
    definition: str
    origin: str
    """`example:<file>`, `generated:<n>` or `mutation:<kind>@<path> of <base origin>`."""
    instance: Any
    schema_valid: bool
    accepted: bool
    problem: str | None = None
    """Why this is a disagreement (None: the two agree)."""
    detail: str = ""
    converted: Any = field(default=None, repr=False)
    output: Any = field(default=None, repr=False)
    """to_builtins of the converted value (when accepted)."""

    @property
    def mutation_kind(self) -> str | None:
        if self.origin.startswith("mutation:"):
            return self.origin.removeprefix("mutation:").split("@", 1)[0]
        return None


def check(rev: Revision, name: str, origin: str, instance: Any) -> Outcome:
    """Compare jsonschema and the codec (convert, and decode/encode) on one instance."""
    tp = rev.type_of(name)
    schema_valid = rev.validator(name).is_valid(instance)
    outcome = Outcome(
        revision=rev.name,
        definition=name,
        origin=origin,
        instance=instance,
        schema_valid=schema_valid,
        accepted=False,
    )
    try:
        converted = convert(instance, tp)
    except msgspec.ValidationError as exc:
        outcome.detail = str(exc)
        if schema_valid:
            outcome.problem = "rejects-valid"
        return _check_decode(outcome, tp, None)
    except Exception as exc:  # a crash is always a disagreement
        outcome.problem = "crash"
        outcome.detail = f"convert raised {type(exc).__name__}: {exc}"
        return outcome
    outcome.accepted = True
    outcome.converted = converted
    try:
        outcome.output = to_builtins(converted)
    except Exception as exc:
        outcome.problem = "crash"
        outcome.detail = f"to_builtins raised {type(exc).__name__}: {exc}"
        return outcome
    if not schema_valid:
        outcome.problem = "accepts-invalid"
    elif not json_equal(outcome.output, instance):
        outcome.problem = "roundtrip"
        outcome.detail = f"to_builtins gave {canonical(outcome.output)}"
    return _check_decode(outcome, tp, outcome.output)


def _check_decode(outcome: Outcome, tp: Any, output: Any) -> Outcome:
    """`decode`/`encode` (the fast path) must say what `convert`/`to_builtins` say."""
    data = json.dumps(outcome.instance, ensure_ascii=False).encode()
    try:
        decoded = decode(data, tp)
    except msgspec.ValidationError as exc:
        if outcome.accepted and outcome.problem is None:
            outcome.problem = "decode-mismatch"
            outcome.detail = f"convert accepts, decode rejects: {exc}"
        return outcome
    except Exception as exc:
        if outcome.problem is None:
            outcome.problem = "crash"
            outcome.detail = f"decode raised {type(exc).__name__}: {exc}"
        return outcome
    if not outcome.accepted:
        if outcome.problem is None:
            outcome.problem = "decode-mismatch"
            outcome.detail = f"convert rejects ({outcome.detail}), decode accepts"
        return outcome
    encoded = json.loads(encode(decoded))
    if not json_equal(encoded, output) and outcome.problem is None:
        outcome.problem = "decode-mismatch"
        outcome.detail = (
            f"encode(decode(x)) = {canonical(encoded)} but "
            f"to_builtins(convert(x)) = {canonical(output)}"
        )
    return outcome


@dataclass
class DefinitionResult:
    revision: str
    definition: str
    outcomes: list[Outcome]
    generated: int
    """Generated candidates that jsonschema accepts."""
    generation_failed: bool
    """No generated candidate was valid (the definition got no generated instance)."""

    @property
    def disagreements(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.problem is not None]


def _seed(rev: str, name: str) -> str:
    return f"mcp-codegen differential {rev} {name}"


@functools.cache
def check_definition(rev_name: str, name: str) -> DefinitionResult:
    rev = revision(rev_name)
    rng = random.Random(_seed(rev_name, name) + " mutations")
    seen: set[str] = set()
    outcomes: list[Outcome] = []

    def add(origin: str, instance: Any) -> Outcome | None:
        key = canonical(instance)
        if key in seen or len(outcomes) >= MAX_INSTANCES_PER_DEFINITION:
            return None
        seen.add(key)
        outcome = check(rev, name, origin, instance)
        outcomes.append(outcome)
        return outcome

    bases: list[tuple[str, Any]] = []
    if rev_name in EXAMPLE_REVISIONS:
        for path in sorted((examples_dir(rev_name) / name).glob("*.json")):
            instance = json.loads(path.read_text(encoding="utf-8"))
            outcome = add(f"example:{path.name}", instance)
            if outcome is not None and outcome.schema_valid:
                bases.append((outcome.origin, instance))

    generator = Generator(rev, _seed(rev_name, name))
    node = rev.definitions[name]
    generated = 0
    for index in range(GENERATED_PER_DEFINITION):
        # First only what is required, then everything, then at random.
        generator.optional = 0.0 if index == 0 else 1.0 if index == 1 else 0.5
        instance = generator.value(node)
        outcome = add(f"generated:{index}", instance)
        if outcome is not None and outcome.schema_valid:
            generated += 1
            bases.append((outcome.origin, instance))

    # Each base gets its root mutations; deep ones are sampled.
    for origin, base in bases[:4]:
        for m in mutations(base, rng, MUTATIONS_PER_BASE):
            add(f"mutation:{m.kind}@{_path_text(m.path)} of {origin}", m.instance)
    return DefinitionResult(
        revision=rev_name,
        definition=name,
        outcomes=outcomes,
        generated=generated,
        generation_failed=generated == 0,
    )


def _path_text(path: Path_) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def definition_names(rev_name: str) -> list[str]:
    return list(revision(rev_name).definitions)


def all_definitions() -> list[tuple[str, str]]:
    return [(rev, name) for rev in REVISIONS for name in definition_names(rev)]

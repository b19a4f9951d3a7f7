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
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import msgspec

from mcp_specgen_runtime import convert, decode, encode, to_builtins

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
"""Revision -> module of `mcp_specgen_types`."""

EXAMPLE_REVISIONS = ("2026-07-28", "draft")

# How much to generate: bounded, so that the folder stays fast. For a longer
# exploration run the report with MCP_DIFFERENTIAL_SCALE=10 (budgets times 10)
# and/or another MCP_DIFFERENTIAL_SEED; the tests use the defaults.
SEED = os.environ.get("MCP_DIFFERENTIAL_SEED", "0")
SCALE = int(os.environ.get("MCP_DIFFERENTIAL_SCALE", "1"))
GENERATED_PER_DEFINITION = 8 * SCALE
"""Values generated from the schema per definition (besides the examples)."""
MUTATIONS_PER_BASE = 6 * SCALE
"""Sampled deep mutations per valid base instance (see `mutations`)."""
BASES_PER_DEFINITION = 4 * SCALE
"""Valid instances (examples first, then generated ones) that get mutated."""
MAX_INSTANCES_PER_DEFINITION = 90 * SCALE
MAX_DEPTH = 5
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
    module = import_module(f"mcp_specgen_types.{REVISIONS[name]}")
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
    "meta",
    "mime_type",
    "_mcp_extra",
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
            count = (
                self.rng.randint(0, 3)
                if not props
                else int(self.rng.random() < 0.3) * self.rng.randint(1, 2)
            )
            for _ in range(count):
                key = self.rng.choice(KEYS)
                if key in props or key in out:
                    continue
                out[key] = self.value({} if extra is True else extra, depth + 1)
        return out

    def array_value(self, node: dict[str, Any], depth: int) -> list[Any]:
        low = node.get("minItems", 0)
        high = node.get("maxItems", 3)
        count = (
            low if depth >= MAX_DEPTH else self.rng.randint(low, max(low, min(3, high)))
        )
        items = node.get("items", {})
        return [self.value(items, depth + 1) for _ in range(count)]

    def string(self) -> str:
        if self.rng.random() < 0.7:
            return self.rng.choice(STRINGS)
        return "".join(
            self.rng.choice("abcXYZ09 _-/:.é€😀")
            for _ in range(self.rng.randint(1, 12))
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
    "out-of-range",
    "long-array",
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
                Mutation(
                    "wrong-type", path, _replace(base, path, _wrong_typed(node, rng))
                )
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
        if type(node) in (int, float):
            found.extend(
                Mutation("out-of-range", path, _replace(base, path, bad))
                for bad in (-1, 1.5)
                if node != bad
            )
        if isinstance(node, list) and node:
            longer = node * (101 // len(node) + 1)
            found.append(Mutation("long-array", path, _replace(base, path, longer)))
    # Kept whole: everything at the root and its properties, and the removal
    # of string-valued properties anywhere (discriminators, consts, resultType).
    kept: list[Mutation] = []
    deep: list[Mutation] = []
    for m in found:
        keep = len(m.path) <= 1 or (
            m.kind == "drop-key" and isinstance(_get(base, m.path), str)
        )
        (kept if keep else deep).append(m)
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
    return kept + picked


# --- checking -------------------------------------------------------------------


@dataclass
class Outcome:
    """What jsonschema and the codec said about one instance."""

    revision: str
    definition: str
    origin: str
    """`example:<file>`, `generated:<n>` or `mutation:<kind>@<path> of <base>`."""
    instance: Any
    schema_valid: bool
    accepted: bool
    """`convert(instance, T)` succeeded."""
    problem: str | None = None
    """How jsonschema and `convert`/`to_builtins` disagree (None: they agree):
    `accepts-invalid`, `rejects-valid`, `roundtrip` (valid, accepted, but
    `to_builtins` gives something else), `wrong-class` (the definition is a
    Struct but convert returned another class) or `crash` (an exception other
    than ValidationError)."""
    detail: str = ""
    codec_problem: str | None = None
    """`decode`/`encode` (the fast path) disagreeing with `convert`/`to_builtins`."""
    converted: Any = field(default=None, repr=False)
    output: Any = field(default=None, repr=False)
    """`to_builtins` of the converted value (when accepted)."""
    finding: Finding | None = field(default=None, repr=False)
    """Set by `analyse` (cached there)."""

    @property
    def disagrees(self) -> bool:
        return self.problem is not None or self.codec_problem is not None

    @property
    def mutation_kind(self) -> str | None:
        if self.origin.startswith("mutation:"):
            return self.origin.removeprefix("mutation:").split("@", 1)[0]
        return None

    def describe(self) -> str:
        lines = [
            f"{self.revision} {self.definition} [{self.origin}]",
            f"  instance: {_short(canonical(self.instance))}",
            f"  jsonschema: {'valid' if self.schema_valid else 'invalid'}; "
            f"convert: {'accepts' if self.accepted else 'rejects'}",
        ]
        if self.problem:
            lines.append(f"  problem: {self.problem} {_short(self.detail)}")
        if self.accepted and self.output is not None:
            lines.append(f"  to_builtins: {_short(canonical(self.output))}")
        if self.codec_problem:
            lines.append(f"  codec: {_short(self.codec_problem)}")
        if self.problem or self.codec_problem:
            lines.append(f"  finding: {analyse(self)}")
        return "\n".join(lines)


def _short(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def check(rev: Revision, name: str, origin: str, instance: Any) -> Outcome:
    """Compare jsonschema and the codec (convert, and decode/encode) on one instance."""
    tp = rev.type_of(name)
    outcome = Outcome(
        revision=rev.name,
        definition=name,
        origin=origin,
        instance=instance,
        schema_valid=rev.validator(name).is_valid(instance),
        accepted=False,
    )
    try:
        outcome.converted = convert(instance, tp)
        outcome.output = to_builtins(outcome.converted)
        outcome.accepted = True
    except msgspec.ValidationError as exc:
        outcome.detail = str(exc)
    except Exception as exc:  # a crash is always a disagreement
        outcome.problem = "crash"
        outcome.detail = f"{type(exc).__name__}: {exc}"
        return outcome
    if (
        outcome.accepted
        and isinstance(tp, type)
        and issubclass(tp, msgspec.Struct)
        and type(outcome.converted) is not tp
    ):
        outcome.problem = "wrong-class"
        outcome.detail = f"convert gave a {type(outcome.converted).__name__}"
    elif outcome.schema_valid and not outcome.accepted:
        outcome.problem = "rejects-valid"
    elif outcome.accepted and not outcome.schema_valid:
        outcome.problem = "accepts-invalid"
    elif outcome.accepted and not json_equal(outcome.output, instance):
        outcome.problem = "roundtrip"
        outcome.detail = f"to_builtins(convert(x)) = {canonical(outcome.output)}"
    outcome.codec_problem = _compare_decode(outcome, tp)
    return outcome


def _compare_decode(outcome: Outcome, tp: Any) -> str | None:
    """`decode`/`encode` must say what `convert`/`to_builtins` say."""
    data = json.dumps(outcome.instance, ensure_ascii=False).encode()
    try:
        decoded = decode(data, tp)
        encoded = json.loads(encode(decoded))
    except msgspec.ValidationError as exc:
        if outcome.accepted:
            return f"convert accepts, decode rejects: {exc}"
        return None
    except Exception as exc:
        return f"decode/encode raised {type(exc).__name__}: {exc}"
    if not outcome.accepted:
        return f"convert rejects ({outcome.detail}), decode accepts"
    if not json_equal(encoded, outcome.output):
        return (
            f"encode(decode(x)) = {canonical(encoded)} but "
            f"to_builtins(convert(x)) = {canonical(outcome.output)}"
        )
    return None


# --- explaining disagreements -----------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """The precise shape of one disagreement, as far as it can be told.

    shape:
      `default-added`: the codec accepted an object missing a required
        property and the round trip adds it back with the Python default
        (`key`, `value`); the repaired instance is schema-valid.
      `tag-added`: likewise, but the property is the msgspec tag of the struct.
      `integral-float`: jsonschema takes an integral float (1.0) as an
        `integer`; the codec rejects it, and accepts the same instance with
        those floats written as ints.
      `fractional-number`: the codec accepts (and round-trips unchanged) a
        fractional float (1.5) where the schema wants an `integer`; with those
        floats truncated to ints, jsonschema accepts the instance too.
      `not-json-schema`: the codec rejects a JSON Schema keyword's value
        (`key`) that the schema text leaves open but JSON Schema 2020-12
        itself forbids (`"required": 7`): the meta-schema rejects the object
        holding it (`owner`), and without that keyword both accept.
      `required-absent`: the codec accepts (and round-trips unchanged) an
        object that lacks required properties (`value`, their names), and
        that is all jsonschema finds wrong with it.
      `result-type-decides`: the codec rejects an instance whose result the
        schema reads by shape alone (an InputRequiredResult with a `resultType`
        other than `input_required`, or an `input_required` one as the
        complete type); with the other `resultType` (`value` is the one
        given) both accept, the codec decoding `owner`.
      `unknown`: none of the above.
    owner: the generated struct that holds the property (the innermost
      struct on the way to it), else the definition under test.
    """

    shape: str
    owner: str
    key: str | None = None
    value: Any = None
    path: str = ""
    standalone: bool = False
    """`tag-added`: the type declared where the struct sits is the struct itself
    (the definition under test, a field, list item or map value of that type),
    not a union holding it."""


def analyse(outcome: Outcome) -> Finding:
    """The shape and owner of a disagreement (computed once per outcome)."""
    if outcome.finding is None:
        outcome.finding = _analyse(outcome)
    return outcome.finding


def _analyse(outcome: Outcome) -> Finding:
    rev = revision(outcome.revision)
    if outcome.codec_problem is not None:
        return Finding(shape="unknown", owner=outcome.definition)
    if outcome.problem == "accepts-invalid":
        added = _added_keys(outcome.instance, outcome.output)
        if (
            added is not None
            and len(added) == 1
            and rev.validator(outcome.definition).is_valid(outcome.output)
        ):
            ((path, key, value),) = added
            owner = _owner(outcome.converted, path, outcome.definition)
            struct = _struct_at(outcome.converted, path)
            is_tag = (
                struct is not None
                and struct.__struct_config__.tag_field == key
                and struct.__struct_config__.tag == value
            )
            declared = _declared_type(
                rev.type_of(outcome.definition), outcome.converted, path
            )
            return Finding(
                shape="tag-added" if is_tag else "default-added",
                owner=owner,
                key=key,
                value=value,
                path=_path_text((*path, key)),
                standalone=struct is not None and declared is type(struct),
            )
    if outcome.problem == "accepts-invalid" and json_equal(
        outcome.output, outcome.instance
    ):
        fractions = [
            path
            for path, node in _nodes(outcome.instance)
            if type(node) is float and math.isfinite(node) and not node.is_integer()
        ]
        if fractions and rev.validator(outcome.definition).is_valid(
            _truncate(outcome.instance)
        ):
            path = fractions[0]
            return Finding(
                shape="fractional-number",
                owner=_owner(outcome.converted, path[:-1], outcome.definition),
                path=_path_text(path),
                value=_get(outcome.instance, path),
            )
    if outcome.problem == "accepts-invalid" and json_equal(
        outcome.output, outcome.instance
    ):
        absent = _required_absent(rev, outcome)
        if absent is not None:
            return absent
    if outcome.problem == "rejects-valid":
        floats = [
            path
            for path, node in _nodes(outcome.instance)
            if type(node) is float and node.is_integer()
        ]
        if floats:
            fixed = _intify(outcome.instance)
            try:
                converted = convert(fixed, rev.type_of(outcome.definition))
            except msgspec.ValidationError:
                # Rejected for its resultType too (both are listed leniencies)?
                flipped = _result_type_flipped(rev, outcome.definition, fixed)
                converted, fixed = flipped[2:] if flipped else (None, fixed)
            if converted is not None and rev.validator(outcome.definition).is_valid(
                fixed
            ):
                path = floats[0]
                return Finding(
                    shape="integral-float",
                    owner=_owner(converted, path[:-1], outcome.definition),
                    path=_path_text(path),
                    value=_get(outcome.instance, path),
                )
        keyword = _not_json_schema(rev, outcome)
        if keyword is not None:
            return keyword
        decided = _result_type_decides(rev, outcome)
        if decided is not None:
            return decided
    return Finding(shape="unknown", owner=outcome.definition)


def _required_absent(rev: Revision, outcome: Outcome) -> Finding | None:
    """The `required-absent` finding of an accepted instance, if it is one."""
    errors = list(rev.validator(outcome.definition).iter_errors(outcome.instance))
    if not errors or any(e.validator != "required" for e in errors):
        return None
    where = tuple(errors[0].absolute_path)
    missing = sorted(
        str(key)
        for e in errors
        for key in typing.cast("list[Any]", e.validator_value)
        if isinstance(e.instance, dict) and key not in e.instance
    )
    return Finding(
        shape="required-absent",
        owner=_owner(outcome.converted, where, outcome.definition),
        value=tuple(missing),
        path=_path_text(where),
    )


def _result_type_decides(rev: Revision, outcome: Outcome) -> Finding | None:
    """The `result-type-decides` finding of a rejected instance, if it is one."""
    flipped = _result_type_flipped(rev, outcome.definition, outcome.instance)
    if flipped is None:
        return None
    path, said, converted, _ = flipped
    return Finding(
        shape="result-type-decides",
        owner=_owner(converted, path, outcome.definition),
        key="resultType",
        value=said,
        path=_path_text((*path, "resultType")),
    )


def _result_type_flipped(
    rev: Revision, definition: str, instance: Any
) -> tuple[Path_, str, Any, Any] | None:
    """(path, resultType given, converted, instance) of the first `resultType`
    that, made the other kind (input_required or not), lets both accept."""
    for path, node in _nodes(instance):
        if not isinstance(node, dict) or not isinstance(node.get("resultType"), str):
            continue
        said = node["resultType"]
        other = "complete" if said == "input_required" else "input_required"
        fixed = _replace(instance, path, {**node, "resultType": other})
        try:
            converted = convert(fixed, rev.type_of(definition))
        except msgspec.ValidationError:
            continue
        if rev.validator(definition).is_valid(fixed):
            return path, said, converted, fixed
    return None


_META_2020_12 = jsonschema.Draft202012Validator(
    jsonschema.Draft202012Validator.META_SCHEMA
)


def _not_json_schema(rev: Revision, outcome: Outcome) -> Finding | None:
    """The `not-json-schema` finding of a rejected instance, if it is one."""
    where = re.search(r"at `\$((?:\.[^.\[`]+|\[\d+\])*)`", outcome.detail)
    if where is None:
        return None
    path: Path_ = tuple(
        int(index) if index else key
        for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", where.group(1))
    )
    for cut in range(len(path) - 1, -1, -1):
        holder, keyword = path[:cut], path[cut]
        try:
            node = _get(outcome.instance, holder)
        except (KeyError, IndexError, TypeError):
            continue  # a location inside a union member, not from the top
        if not isinstance(keyword, str) or not isinstance(node, dict):
            continue
        if _META_2020_12.is_valid(node):
            return None
        fixed = _replace(
            outcome.instance, holder, {k: v for k, v in node.items() if k != keyword}
        )
        try:
            converted = convert(fixed, rev.type_of(outcome.definition))
        except msgspec.ValidationError:
            return None
        if not rev.validator(outcome.definition).is_valid(fixed):
            return None
        return Finding(
            shape="not-json-schema",
            owner=_owner(converted, holder, outcome.definition),
            key=keyword,
            path=_path_text(path[: cut + 1]),
            value=node[keyword],
        )
    return None


def _added_keys(before: Any, after: Any, path: Path_ = ()) -> list[Any] | None:
    """Keys `after` has and `before` lacks, if that is the only difference."""
    if isinstance(before, dict) and isinstance(after, dict):
        if not before.keys() <= after.keys():
            return None
        found: list[Any] = [(path, k, after[k]) for k in after if k not in before]
        for key in before:
            sub = _added_keys(before[key], after[key], (*path, key))
            if sub is None:
                return None
            found.extend(sub)
        return found
    if isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            return None
        found = []
        for index, (x, y) in enumerate(zip(before, after, strict=True)):
            sub = _added_keys(x, y, (*path, index))
            if sub is None:
                return None
            found.extend(sub)
        return found
    return [] if json_equal(before, after) else None


def _intify(value: Any) -> Any:
    if type(value) is float and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _intify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_intify(v) for v in value]
    return value


def _truncate(value: Any) -> Any:
    """`value` with every finite fractional float truncated to an int."""
    if type(value) is float and math.isfinite(value) and not value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _truncate(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_truncate(v) for v in value]
    return value


def _walk_converted(value: Any, path: Path_) -> list[Any]:
    """The converted objects met along `path` (wire keys and list indexes)."""
    met = [value]
    for part in path:
        if isinstance(value, msgspec.Struct):
            fields = dict(
                zip(
                    value.__struct_encode_fields__, value.__struct_fields__, strict=True
                )
            )
            if part not in fields:
                break
            value = getattr(value, fields[part])
        elif isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            break
        met.append(value)
    return met


def _struct_at(value: Any, path: Path_) -> msgspec.Struct | None:
    met = _walk_converted(value, path)
    if len(met) == len(path) + 1 and isinstance(met[-1], msgspec.Struct):
        return met[-1]
    return None


def _strip(tp: Any) -> Any:
    """`tp` without Annotated and without the UnsetType of optional fields."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(tp) if m is not msgspec.UnsetType]
        if len(members) == 1:
            return _strip(members[0])
    return tp


def _declared_type(root: Any, converted: Any, path: Path_) -> Any:
    """The type declared for the value at `path` (None when it cannot be told)."""
    declared = _strip(root)
    value = converted
    for part in path:
        if isinstance(value, msgspec.Struct):
            fields = dict(
                zip(
                    value.__struct_encode_fields__, value.__struct_fields__, strict=True
                )
            )
            if part not in fields:
                return None
            hints = typing.get_type_hints(type(value), include_extras=True)
            declared = _strip(hints[fields[part]])
            value = getattr(value, fields[part])
        elif isinstance(value, list) and typing.get_origin(declared) is list:
            declared = _strip(typing.get_args(declared)[0])
            value = value[part]  # type: ignore[index]
        elif isinstance(value, dict) and typing.get_origin(declared) is dict:
            declared = _strip(typing.get_args(declared)[1])
            value = value[part]
        else:
            return None
    return declared


def _owner(value: Any, path: Path_, default: str) -> str:
    structs = [v for v in _walk_converted(value, path) if isinstance(v, msgspec.Struct)]
    return type(structs[-1]).__name__ if structs else default


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
        return [o for o in self.outcomes if o.disagrees]


def _seed(rev: str, name: str) -> str:
    return f"mcp-codegen differential {SEED} {rev} {name}"


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
    for origin, base in bases[:BASES_PER_DEFINITION]:
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

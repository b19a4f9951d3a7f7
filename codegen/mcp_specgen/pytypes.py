"""Render IR type expressions as Python type annotations."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import ir


@dataclass
class Imports:
    """Names the rendered annotations need, so modules import only what they use."""

    typing: set[str] = field(default_factory=set[str])
    msgspec: bool = False
    reserved: set[str] = field(default_factory=set[str])
    """Declaration names; a `typing` name equal to one is written `typing.X`."""
    typing_module: bool = False

    def use(self, name: str) -> str:
        """Record a use of `typing.<name>` and return how to spell it."""
        if name in self.reserved:
            self.typing_module = True
            return f"typing.{name}"
        self.typing.add(name)
        return name


def render(expr: ir.TypeExpr, imports: Imports) -> str:
    """The Python annotation for `expr` (names of declarations are used as-is)."""
    if isinstance(expr, ir.Ref):
        return expr.name
    if isinstance(expr, ir.Primitive):
        return _primitive(expr, imports)
    if isinstance(expr, ir.LiteralType):
        return (
            imports.use("Literal") + "[" + ", ".join(repr(v) for v in expr.values) + "]"
        )
    if isinstance(expr, ir.ArrayOf):
        inner = f"list[{render(expr.items, imports)}]"
        bounds = _meta(imports, min_length=expr.min_items, max_length=expr.max_items)
        return f"{imports.use('Annotated')}[{inner}, {bounds}]" if bounds else inner
    if isinstance(expr, ir.MapOf):
        return f"dict[str, {render(expr.values, imports)}]"
    return join_union([render(member, imports) for member in expr.members])


def join_union(annotations: list[str]) -> str:
    """`A | B` from rendered members: nested unions spread, no duplicates, None last."""
    parts: list[str] = []
    for annotation in annotations:
        for part in split_union(annotation):
            if part not in parts:
                parts.append(part)
    if "None" in parts:
        parts.remove("None")
        parts.append("None")
    return " | ".join(parts)


def split_union(annotation: str) -> list[str]:
    """The top-level members of a rendered union annotation."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in annotation:
        depth += char in "["
        depth -= char in "]"
        current += char
        if depth == 0 and current.endswith(" | "):
            parts.append(current[:-3])
            current = ""
    parts.append(current)
    return parts


def _primitive(expr: ir.Primitive, imports: Imports) -> str:
    if expr.name == "any":
        return imports.use("Any")
    if expr.name == "null":
        return "None"
    if expr.name in ("str", "bool"):
        return expr.name
    # JSON numbers keep their form: 50 stays an int, 0.5 a float.
    names = ["int"] if expr.name == "int" else ["int", "float"]
    rendered: list[str] = []
    for name in names:
        low, high = expr.minimum, expr.maximum
        if name == "int":
            # msgspec wants integer bounds on int; for integers they are equivalent.
            low = math.ceil(low) if low is not None else None
            high = math.floor(high) if high is not None else None
        bounds = _meta(imports, ge=low, le=high)
        rendered.append(
            f"{imports.use('Annotated')}[{name}, {bounds}]" if bounds else name
        )
    return " | ".join(rendered)


def _meta(imports: Imports, **constraints: int | float | None) -> str:
    given = {k: v for k, v in constraints.items() if v is not None}
    if not given:
        return ""
    imports.msgspec = True
    return "msgspec.Meta(" + ", ".join(f"{k}={v!r}" for k, v in given.items()) + ")"


def references(expr: ir.TypeExpr) -> set[str]:
    """Names of the declarations `expr` mentions."""
    if isinstance(expr, ir.Ref):
        return {expr.name}
    if isinstance(expr, ir.ArrayOf):
        return references(expr.items)
    if isinstance(expr, ir.MapOf):
        return references(expr.values)
    if isinstance(expr, ir.UnionOf):
        return set[str]().union(*(references(m) for m in expr.members))
    return set()

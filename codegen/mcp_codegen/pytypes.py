"""Render IR type expressions as Python type annotations."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ir


@dataclass
class Imports:
    """Names the rendered annotations need, so modules import only what they use."""

    typing: set[str] = field(default_factory=set)
    msgspec: bool = False

    def sorted_typing(self) -> list[str]:
        return sorted(self.typing)


def render(expr: ir.TypeExpr, imports: Imports) -> str:
    """The Python annotation for `expr` (names of declarations are used as-is)."""
    if isinstance(expr, ir.Ref):
        return expr.name
    if isinstance(expr, ir.Primitive):
        return _primitive(expr, imports)
    if isinstance(expr, ir.LiteralType):
        imports.typing.add("Literal")
        return "Literal[" + ", ".join(repr(v) for v in expr.values) + "]"
    if isinstance(expr, ir.ArrayOf):
        inner = f"list[{render(expr.items, imports)}]"
        bounds = _meta(imports, min_length=expr.min_items, max_length=expr.max_items)
        return f"Annotated[{inner}, {bounds}]" if bounds else inner
    if isinstance(expr, ir.MapOf):
        return f"dict[str, {render(expr.values, imports)}]"
    parts: list[str] = []
    for member in expr.members:
        text = render(member, imports)
        if text not in parts:
            parts.append(text)
    return " | ".join(parts)


def _primitive(expr: ir.Primitive, imports: Imports) -> str:
    if expr.name == "any":
        imports.typing.add("Any")
        return "Any"
    if expr.name == "null":
        return "None"
    if expr.name in ("str", "bool"):
        return expr.name
    bounds = _meta(imports, ge=expr.minimum, le=expr.maximum)
    # JSON numbers keep their form: 50 stays an int, 0.5 a float.
    names = ["int"] if expr.name == "int" else ["int", "float"]
    if not bounds:
        return " | ".join(names)
    return " | ".join(f"Annotated[{name}, {bounds}]" for name in names)


def _meta(imports: Imports, **constraints: int | float | None) -> str:
    given = {k: v for k, v in constraints.items() if v is not None}
    if not given:
        return ""
    imports.typing.add("Annotated")
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
        return set().union(*(references(m) for m in expr.members))
    return set()

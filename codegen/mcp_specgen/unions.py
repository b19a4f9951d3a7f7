"""Decide how each union is decoded: inline, tagged by a const, or structurally.

msgspec decodes a union in one pass when it holds at most one object-like
type and one array-like type, or when all its objects are Structs tagged by
one const property. Everything else is a `structural` union, resolved at run
time by trying members from the most specific to the least.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from . import ir
from .errors import UnsupportedSchemaError

Kind = Literal[
    "struct", "custom", "map", "array", "str", "int", "number", "bool", "null", "any"
]

# When several const properties could tag a union, prefer the protocol's own.
_TAG_PREFERENCE = ("type", "method", "mode")


class _Classifier:
    def __init__(
        self,
        decls: dict[str, ir.Decl],
        pending: dict[str, tuple[str, tuple[ir.TypeExpr, ...], str]],
        revision: str,
        exclusive: set[str],
    ) -> None:
        self.decls = dict(decls)
        self.pending = pending
        self.revision = revision
        self.exclusive = exclusive
        self.visiting: set[str] = set()
        self.pointer = ""

    def run(self) -> dict[str, ir.Decl]:
        for name in sorted(self.pending):
            self.classify(name)
        return self.decls

    def classify(self, name: str) -> ir.Decl:
        if name in self.decls:
            return self.decls[name]
        pointer, members, description = self.pending[name]
        if name in self.visiting:
            # A union that contains itself: only JSON-value style recursion is met.
            return ir.AliasDecl(
                name=name, pointer=pointer, target=ir.UnionOf(members=members)
            )
        self.visiting.add(name)
        outer_pointer, self.pointer = self.pointer, pointer
        flat = self.flatten(members)
        kinds: list[Kind] = [self.kind(m) for m in flat]
        decl: ir.Decl
        if "any" in kinds:
            decl = ir.AliasDecl(
                name=name,
                pointer=pointer,
                target=ir.Primitive(name="any"),
                description=description,
            )
        elif self.is_simple(kinds):
            decl = ir.AliasDecl(
                name=name,
                pointer=pointer,
                target=ir.UnionOf(members=members),
                description=description,
            )
        else:
            tag = self.common_tag(flat, kinds)
            if tag is not None:
                self.apply_tag(flat, tag)
                decl = ir.UnionDecl(
                    name=name,
                    pointer=pointer,
                    members=members,
                    strategy="tagged",
                    tag_field=tag,
                    description=description,
                )
            else:
                decl = ir.UnionDecl(
                    name=name,
                    pointer=pointer,
                    members=self.by_specificity(members),
                    strategy="structural",
                    description=description,
                )
        if name in self.exclusive and not self.disjoint(decl, kinds):
            raise UnsupportedSchemaError(
                "oneOf whose members may overlap (only disjoint members are supported)",
                revision=self.revision,
                pointer=pointer,
            )
        self.pointer = outer_pointer
        self.visiting.discard(name)
        self.decls[name] = decl
        return decl

    @staticmethod
    def disjoint(decl: ir.Decl, kinds: list[Kind]) -> bool:
        """True when no JSON value can match two members (oneOf == anyOf then)."""
        if isinstance(decl, ir.UnionDecl):
            return decl.strategy == "tagged" and kinds.count("array") == 0
        return (
            len(set(kinds)) == len(kinds)
            and "any" not in kinds
            and not ({"int", "number"} <= set(kinds))
        )

    def flatten(self, members: tuple[ir.TypeExpr, ...]) -> list[ir.TypeExpr]:
        """Members with nested inline and tagged unions spread out."""
        flat: list[ir.TypeExpr] = []
        for member in members:
            target = self.resolve(member)
            if isinstance(target, ir.UnionOf):
                flat.extend(self.flatten(target.members))
            elif isinstance(target, ir.UnionDecl) and target.strategy == "tagged":
                flat.extend(self.flatten(target.members))
            else:
                flat.append(member)
        return flat

    def resolve(self, expr: ir.TypeExpr) -> ir.TypeExpr | ir.Decl:
        """Follow references through aliases to what decides the JSON kind."""
        while isinstance(expr, ir.Ref):
            if expr.name in self.pending and expr.name not in self.decls:
                decl = self.classify(expr.name)
            else:
                decl = self.decls[expr.name]
            if isinstance(decl, ir.AliasDecl):
                expr = decl.target
                continue
            return decl
        return expr

    def kind(self, expr: ir.TypeExpr) -> Kind:
        target = self.resolve(expr)
        if isinstance(target, ir.StructDecl):
            return "struct"
        if isinstance(target, ir.UnionDecl):
            return "custom"
        if isinstance(target, ir.MapOf):
            return "map"
        if isinstance(target, ir.ArrayOf):
            return "array"
        if isinstance(target, ir.LiteralType):
            kinds: set[Kind] = {_literal_kind(v) for v in target.values}
            if len(kinds) != 1:
                raise UnsupportedSchemaError(
                    f"enum mixes JSON types {sorted(kinds)}",
                    revision=self.revision,
                    pointer=self.pointer,
                )
            return kinds.pop()
        if isinstance(target, ir.Primitive):
            return target.name if target.name != "number" else "number"
        raise UnsupportedSchemaError(
            f"cannot classify {target!r}", revision=self.revision
        )

    @staticmethod
    def is_simple(kinds: list[Kind]) -> bool:
        if "custom" in kinds:
            return False
        object_like = kinds.count("struct") + kinds.count("map")
        return object_like <= 1 and kinds.count("array") <= 1

    def common_tag(self, flat: list[ir.TypeExpr], kinds: list[Kind]) -> str | None:
        """A const property that tells every struct member apart, if there is one."""
        if "custom" in kinds or "map" in kinds or kinds.count("array") > 1:
            return None
        structs: list[ir.StructDecl] = []
        for member, kind in zip(flat, kinds, strict=True):
            if kind == "struct":
                target = self.resolve(member)
                assert isinstance(target, ir.StructDecl)
                structs.append(target)
        candidates: set[str] | None = None
        for struct in structs:
            consts = {
                f.wire_name
                for f in struct.fields
                if f.required
                and isinstance(f.type, ir.LiteralType)
                and len(f.type.values) == 1
                and isinstance(f.type.values[0], str)
            }
            if struct.tag_field is not None:
                consts = {struct.tag_field}
            candidates = consts if candidates is None else candidates & consts
        for tag in sorted(
            candidates or (), key=lambda t: (t not in _TAG_PREFERENCE, t)
        ):
            values = [_tag_value(s, tag) for s in structs]
            if len(set(values)) == len(values):
                return tag
        return None

    def apply_tag(self, flat: list[ir.TypeExpr], tag: str) -> None:
        for member in flat:
            struct = self.resolve(member)
            if not isinstance(struct, ir.StructDecl) or struct.tag_field is not None:
                continue
            value = _tag_value(struct, tag)
            self.decls[struct.name] = msgspec.structs.replace(
                struct,
                fields=tuple(f for f in struct.fields if f.wire_name != tag),
                tag_field=tag,
                tag_value=value,
            )

    def by_specificity(
        self, members: tuple[ir.TypeExpr, ...]
    ) -> tuple[ir.TypeExpr, ...]:
        """Structs with more required, then more, properties first; others after."""

        def rank(item: tuple[int, ir.TypeExpr]) -> tuple[int, int, int, int]:
            index, member = item
            target = self.resolve(member)
            if isinstance(target, ir.StructDecl):
                required = sum(f.required for f in target.fields) + (
                    target.tag_field is not None
                )
                total = len(target.fields) + (target.tag_field is not None)
                return (0, -required, -total, index)
            return (1, 0, 0, index)

        return tuple(member for _, member in sorted(enumerate(members), key=rank))


def _tag_value(struct: ir.StructDecl, tag: str) -> str:
    if struct.tag_field == tag and struct.tag_value is not None:
        return struct.tag_value
    for f in struct.fields:
        if f.wire_name == tag and isinstance(f.type, ir.LiteralType):
            value = f.type.values[0]
            assert isinstance(value, str)
            return value
    raise KeyError(tag)


def _literal_kind(value: object) -> Kind:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "str"
    return "null"


def classify_unions(
    decls: dict[str, ir.Decl],
    pending: dict[str, tuple[str, tuple[ir.TypeExpr, ...], str]],
    revision: str,
    exclusive: set[str] | None = None,
) -> dict[str, ir.Decl]:
    """Turn every pending union into an alias (simple) or a `UnionDecl`.

    Raises:
        UnsupportedSchemaError: an enum mixes JSON types, or a `oneOf` (named in
            `exclusive`) has members that may overlap.
    """
    return _Classifier(decls, pending, revision, exclusive or set()).run()

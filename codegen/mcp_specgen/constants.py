"""Protocol constants of a revision: `_meta` keys and error codes its schema defines."""

from __future__ import annotations

from . import ir
from .errors import NameCollisionError
from .naming import field_name, snake_case


def meta_keys(decls: dict[str, ir.Decl], revision: str) -> tuple[ir.Constant, ...]:
    """Every key declared by an object that some `_meta` property holds."""
    found: dict[str, tuple[str, str]] = {}
    for decl in decls.values():
        if not isinstance(decl, ir.StructDecl):
            continue
        for f in decl.fields:
            if f.wire_name != "_meta" or not isinstance(f.type, ir.Ref):
                continue
            meta = decls[f.type.name]
            if isinstance(meta, ir.StructDecl):
                for key in meta.fields:
                    doc = (
                        key.description.split("\n\n")[0]
                        or f"The `{key.wire_name}` key."
                    )
                    const = "META_" + field_name(key.wire_name).upper()
                    found.setdefault(key.wire_name, (const, doc))
    return _unique(
        tuple(ir.Constant(name=n, value=w, doc=d) for w, (n, d) in found.items()),
        revision,
    )


def error_codes(
    decls: dict[str, ir.Decl], definition_names: tuple[str, ...], revision: str
) -> tuple[ir.Constant, ...]:
    """The const `code` of every error definition (`ParseError` -> `ERROR_PARSE`)."""
    codes: list[ir.Constant] = []
    for name in definition_names:
        decl = decls.get(name)
        if not isinstance(decl, ir.StructDecl) or not name.endswith("Error"):
            continue
        code = _const_code(decl) or _const_code(_error_member(decl, decls))
        if code is not None:
            stem = snake_case(name.removesuffix("Error")).upper()
            doc = f"The error code of `{name}`."
            codes.append(ir.Constant(name=f"ERROR_{stem}", value=code, doc=doc))
    return _unique(tuple(codes), revision)


def _error_member(decl: ir.StructDecl, decls: dict[str, ir.Decl]) -> ir.Decl | None:
    for f in decl.fields:
        if f.wire_name == "error" and isinstance(f.type, ir.Ref):
            return decls[f.type.name]
    return None


def _const_code(decl: ir.Decl | None) -> int | None:
    if not isinstance(decl, ir.StructDecl):
        return None
    for f in decl.fields:
        if f.wire_name == "code" and isinstance(f.type, ir.LiteralType):
            value = f.type.values[0]
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _unique(
    constants: tuple[ir.Constant, ...], revision: str
) -> tuple[ir.Constant, ...]:
    by_name: dict[str, ir.Constant] = {}
    for constant in constants:
        other = by_name.setdefault(constant.name, constant)
        if other.value != constant.value:
            raise NameCollisionError(
                f"constant {constant.name} would hold both {other.value!r} and "
                f"{constant.value!r}",
                revision=revision,
            )
    return tuple(sorted(by_name.values(), key=lambda c: c.name))

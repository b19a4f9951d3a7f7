"""What changed between two revisions, computed on the IR.

`diff_revisions(a, b)` compares two built revisions and returns a
`RevisionDiff`: plain, frozen, sorted data that the reports (`diff_report.py`)
and any cross-revision tooling read. Types are compared by name and methods by
method name; type expressions are compared as rendered Python annotations, so
two revisions agree on a field when the generated code would.

A struct's tag (the const discriminator a tagged union reads, kept as
`tag_field`/`tag_value` in the IR) counts as a required field of literal type.
Descriptions, JSON pointers and union decoding strategies are not compared.
The IR is built after `schema/overrides/`, so the diff shows the patched types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

from . import ir
from .manifest import load_manifest
from .pipeline import load_revision
from .pytypes import Imports, join_union, render

if TYPE_CHECKING:
    from pathlib import Path

    from .manifest import Manifest

Kind = Literal["struct", "union", "alias"]


class TypeEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A named type and its kind."""

    name: str
    kind: Kind


class FieldSig(msgspec.Struct, frozen=True, kw_only=True):
    """A struct field as the generated code declares it."""

    wire_name: str
    annotation: str
    """The rendered type, without the `UnsetType` of optional fields."""
    required: bool
    default: str | int | bool | None = None

    @property
    def optional(self) -> bool:
        """Absent unless given: not required and without a default."""
        return not self.required and self.default is None

    def describe(self) -> str:
        """`str (required)`, `str = 'a'` or `list[Icon] | UnsetType (optional)`."""
        if self.optional:
            return join_union([self.annotation, "UnsetType"]) + " (optional)"
        text = self.annotation + (" (required)" if self.required else "")
        return text if self.default is None else f"{text} = {self.default!r}"


class FieldChange(msgspec.Struct, frozen=True, kw_only=True):
    """A field present in both revisions whose type, requiredness or default differs."""

    wire_name: str
    a: FieldSig
    b: FieldSig

    @property
    def type_changed(self) -> bool:
        """The rendered annotations differ."""
        return self.a.annotation != self.b.annotation

    @property
    def required_changed(self) -> bool:
        """The field became required or optional."""
        return self.a.required != self.b.required

    @property
    def default_changed(self) -> bool:
        """The default value differs."""
        return self.a.default != self.b.default


class TypeChange(msgspec.Struct, frozen=True, kw_only=True):
    """A type present in both revisions whose definition differs.

    Which attributes apply depends on the kinds: the field and `open` ones for
    structs, the member ones for unions, the target ones for aliases. When the
    kind itself changed, only `shape_a`/`shape_b` describe the two sides.
    """

    name: str
    kind_a: Kind
    kind_b: Kind
    fields_added: tuple[FieldSig, ...] = ()
    fields_removed: tuple[FieldSig, ...] = ()
    fields_changed: tuple[FieldChange, ...] = ()
    open_a: bool | None = None
    """Whether the struct keeps unknown keys in A; set only when that changed."""
    open_b: bool | None = None
    members_gained: tuple[str, ...] = ()
    """Rendered union members that B has and A lacks."""
    members_lost: tuple[str, ...] = ()
    target_a: str | None = None
    """The rendered alias target in A; set only when the target changed."""
    target_b: str | None = None
    shape_a: str | None = None
    """A one-line summary of the type in A when its kind changed."""
    shape_b: str | None = None

    @property
    def kind_changed(self) -> bool:
        """The type is a struct, union or alias in one revision and not the other."""
        return self.kind_a != self.kind_b

    @property
    def open_changed(self) -> bool:
        """The struct went from open to closed or back."""
        return self.open_a != self.open_b

    @property
    def target_changed(self) -> bool:
        """The alias points at another type."""
        return self.target_a != self.target_b


class MethodSig(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC method as a revision defines it."""

    name: str
    direction: ir.Direction
    message: Literal["request", "notification"]
    message_type: str
    params_type: str | None
    params_required: bool
    result_type: str | None


class MethodChange(msgspec.Struct, frozen=True, kw_only=True):
    """A method present in both revisions whose definition differs."""

    name: str
    a: MethodSig
    b: MethodSig

    @property
    def direction_changed(self) -> bool:
        """Who may send the method changed."""
        return self.a.direction != self.b.direction

    @property
    def message_changed(self) -> bool:
        """A request became a notification or the reverse."""
        return self.a.message != self.b.message

    @property
    def message_type_changed(self) -> bool:
        """The type of the whole message has another name."""
        return self.a.message_type != self.b.message_type

    @property
    def params_changed(self) -> bool:
        """The params type, or whether params are required, changed."""
        return (self.a.params_type, self.a.params_required) != (
            self.b.params_type,
            self.b.params_required,
        )

    @property
    def result_changed(self) -> bool:
        """The result type changed."""
        return self.a.result_type != self.b.result_type


class RevisionDiff(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that differs between revision `a` and revision `b`."""

    a: str
    b: str
    methods_added: tuple[MethodSig, ...]
    methods_removed: tuple[MethodSig, ...]
    method_changes: tuple[MethodChange, ...]
    methods_unchanged: tuple[str, ...]
    types_added: tuple[TypeEntry, ...]
    types_removed: tuple[TypeEntry, ...]
    type_changes: tuple[TypeChange, ...]
    types_unchanged: tuple[TypeEntry, ...]

    @property
    def counts(self) -> dict[str, int]:
        """How many methods and types were added, removed, changed or kept."""
        return {
            "methods_added": len(self.methods_added),
            "methods_removed": len(self.methods_removed),
            "methods_changed": len(self.method_changes),
            "methods_unchanged": len(self.methods_unchanged),
            "types_added": len(self.types_added),
            "types_removed": len(self.types_removed),
            "types_changed": len(self.type_changes),
            "types_unchanged": len(self.types_unchanged),
        }

    @property
    def empty(self) -> bool:
        """Nothing was added, removed or changed."""
        return not (
            self.methods_added
            or self.methods_removed
            or self.method_changes
            or self.types_added
            or self.types_removed
            or self.type_changes
        )

    def type_change(self, name: str) -> TypeChange | None:
        """The change of type `name`; None when it is the same in both revisions.

        Raises:
            KeyError: `name` is not a type of both revisions.
        """
        for change in self.type_changes:
            if change.name == name:
                return change
        if any(entry.name == name for entry in self.types_unchanged):
            return None
        raise KeyError(name)

    def method_change(self, name: str) -> MethodChange | None:
        """The change of method `name`; None when it is the same in both revisions.

        Raises:
            KeyError: `name` is not a method of both revisions.
        """
        for change in self.method_changes:
            if change.name == name:
                return change
        if name in self.methods_unchanged:
            return None
        raise KeyError(name)

    def fields_only_in_a(self, name: str) -> tuple[FieldSig, ...]:
        """Fields of type `name` that A has and B lacks (empty for unions, aliases).

        Raises:
            KeyError: `name` is not a type of both revisions, or changed kind.
        """
        change = self._same_kind(name)
        return change.fields_removed if change else ()

    def fields_only_in_b(self, name: str) -> tuple[FieldSig, ...]:
        """Fields of type `name` that B has and A lacks (empty for unions, aliases).

        Raises:
            KeyError: `name` is not a type of both revisions, or changed kind.
        """
        change = self._same_kind(name)
        return change.fields_added if change else ()

    def _same_kind(self, name: str) -> TypeChange | None:
        change = self.type_change(name)
        if change is not None and change.kind_changed:
            raise KeyError(f"{name} changed kind: {change.kind_a} -> {change.kind_b}")
        return change


def load_diff(
    schema_dir: Path, a: str, b: str, manifest: Manifest | None = None
) -> RevisionDiff:
    """Load the pinned revisions `a` and `b` from `schema_dir` and diff them.

    `manifest` defaults to the one in `schema_dir`.

    Raises:
        CodegenError: a revision is unknown, missing or cannot be built.
    """
    if manifest is None:
        manifest = load_manifest(schema_dir)
    return diff_revisions(
        load_revision(schema_dir, manifest.get(a), manifest),
        load_revision(schema_dir, manifest.get(b), manifest),
    )


def diff_revisions(a: ir.Revision, b: ir.Revision) -> RevisionDiff:
    """What changed from revision `a` to revision `b`, every part sorted by name."""
    imports = Imports(reserved={d.name for d in a.decls + b.decls})
    methods_a = {m.name: _method_sig(m) for m in a.methods}
    methods_b = {m.name: _method_sig(m) for m in b.methods}
    common_methods = sorted(methods_a.keys() & methods_b.keys())
    decls_a = {d.name: d for d in a.decls}
    decls_b = {d.name: d for d in b.decls}
    type_changes: list[TypeChange] = []
    types_unchanged: list[TypeEntry] = []
    for name in sorted(decls_a.keys() & decls_b.keys()):
        change = _type_change(decls_a[name], decls_b[name], imports)
        if change is None:
            types_unchanged.append(TypeEntry(name=name, kind=_kind(decls_a[name])))
        else:
            type_changes.append(change)
    return RevisionDiff(
        a=a.name,
        b=b.name,
        methods_added=_only(methods_b, methods_a),
        methods_removed=_only(methods_a, methods_b),
        method_changes=tuple(
            MethodChange(name=name, a=methods_a[name], b=methods_b[name])
            for name in common_methods
            if methods_a[name] != methods_b[name]
        ),
        methods_unchanged=tuple(
            name for name in common_methods if methods_a[name] == methods_b[name]
        ),
        types_added=_entries(decls_b, decls_a),
        types_removed=_entries(decls_a, decls_b),
        type_changes=tuple(type_changes),
        types_unchanged=tuple(types_unchanged),
    )


def _only(
    left: dict[str, MethodSig], right: dict[str, MethodSig]
) -> tuple[MethodSig, ...]:
    return tuple(left[name] for name in sorted(left.keys() - right.keys()))


def _entries(
    left: dict[str, ir.Decl], right: dict[str, ir.Decl]
) -> tuple[TypeEntry, ...]:
    return tuple(
        TypeEntry(name=name, kind=_kind(left[name]))
        for name in sorted(left.keys() - right.keys())
    )


def _method_sig(method: ir.Method) -> MethodSig:
    return MethodSig(
        name=method.name,
        direction=method.direction,
        message=method.message,
        message_type=method.message_type,
        params_type=method.params_type,
        params_required=method.params_required,
        result_type=method.result_type,
    )


def _kind(decl: ir.Decl) -> Kind:
    if isinstance(decl, ir.StructDecl):
        return "struct"
    return "union" if isinstance(decl, ir.UnionDecl) else "alias"


def _type_change(a: ir.Decl, b: ir.Decl, imports: Imports) -> TypeChange | None:
    kind_a, kind_b = _kind(a), _kind(b)
    base = TypeChange(name=a.name, kind_a=kind_a, kind_b=kind_b)
    if kind_a != kind_b:
        change = msgspec.structs.replace(
            base, shape_a=_shape(a, imports), shape_b=_shape(b, imports)
        )
    elif isinstance(a, ir.StructDecl) and isinstance(b, ir.StructDecl):
        change = _struct_change(base, a, b, imports)
    elif isinstance(a, ir.UnionDecl) and isinstance(b, ir.UnionDecl):
        members_a = {render(m, imports) for m in a.members}
        members_b = {render(m, imports) for m in b.members}
        change = msgspec.structs.replace(
            base,
            members_gained=tuple(sorted(members_b - members_a)),
            members_lost=tuple(sorted(members_a - members_b)),
        )
    else:
        assert isinstance(a, ir.AliasDecl) and isinstance(b, ir.AliasDecl)
        target_a, target_b = render(a.target, imports), render(b.target, imports)
        if target_a == target_b:
            return None
        change = msgspec.structs.replace(base, target_a=target_a, target_b=target_b)
    return None if change == base else change


def _struct_change(
    base: TypeChange, a: ir.StructDecl, b: ir.StructDecl, imports: Imports
) -> TypeChange:
    fields_a, fields_b = _fields(a, imports), _fields(b, imports)
    common = sorted(fields_a.keys() & fields_b.keys())
    return msgspec.structs.replace(
        base,
        fields_added=tuple(
            fields_b[n] for n in sorted(fields_b.keys() - fields_a.keys())
        ),
        fields_removed=tuple(
            fields_a[n] for n in sorted(fields_a.keys() - fields_b.keys())
        ),
        fields_changed=tuple(
            FieldChange(wire_name=n, a=fields_a[n], b=fields_b[n])
            for n in common
            if fields_a[n] != fields_b[n]
        ),
        open_a=a.open if a.open != b.open else None,
        open_b=b.open if a.open != b.open else None,
    )


def _fields(decl: ir.StructDecl, imports: Imports) -> dict[str, FieldSig]:
    """The struct's fields by wire name, its tag included as a required literal."""
    fields = {
        f.wire_name: FieldSig(
            wire_name=f.wire_name,
            annotation=render(f.type, imports),
            required=f.required,
            default=f.default,
        )
        for f in decl.fields
    }
    if decl.tag_field is not None:
        tag = ir.LiteralType(values=(decl.tag_value,))
        fields[decl.tag_field] = FieldSig(
            wire_name=decl.tag_field, annotation=render(tag, imports), required=True
        )
    return fields


def _shape(decl: ir.Decl, imports: Imports) -> str:
    """`{a, b, c}` for a struct, `A | B` for a union, the target for an alias."""
    if isinstance(decl, ir.StructDecl):
        return "{" + ", ".join(sorted(_fields(decl, imports))) + "}"
    if isinstance(decl, ir.UnionDecl):
        return join_union(sorted(render(m, imports) for m in decl.members))
    return render(decl.target, imports)

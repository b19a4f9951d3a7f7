"""IR -> Python source files: jinja2 templates, then black.

`render_package` returns every file of the generated package as text, keyed
by its path relative to the output folder; writing and checking them is the
caller's job (see `generate.py`).
"""

from __future__ import annotations

import functools
import itertools
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import black
import jinja2
from black.mode import Mode, TargetVersion

from . import __version__, ir
from .docwrap import wrap_description
from .errors import UnsupportedSchemaError
from .naming import method_constant, snake_case
from .pytypes import Imports, join_union, references, render

if TYPE_CHECKING:
    from collections.abc import Callable

PACKAGE = "mcp_specgen_types"
"""Import name of the generated package."""

RUNTIME = "mcp_specgen_runtime"


def templates_dir() -> Path:
    """The templates folder: shipped in the wheel, or the checkout's `templates/`."""
    shipped = Path(str(resources.files("mcp_specgen"))) / "templates"
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parents[2] / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    # jinja2 types `filters` by its own built-in filters (a union of their
    # signatures); a filter may be any callable.
    filters = cast("dict[str, Callable[..., object]]", env.filters)
    filters["docstring"] = docstring
    filters["isort"] = isort_names
    filters["sort_all"] = sort_all
    return env


def docstring(text: str, indent: int = 0) -> str:
    """A triple-quoted literal holding `text`, wrapped to fit 88 columns."""
    width = 88 - indent - 6
    wrapped = wrap_description(text.strip(), width)
    body = _escape_docstring(wrapped)
    pad = " " * indent
    lines = body.splitlines() or [""]
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    inner = "\n".join((pad + line) if line.strip() else "" for line in lines[1:])
    return f'"""{lines[0]}\n{inner}\n{pad}"""'


def _escape_docstring(text: str) -> str:
    """Escape what would end or corrupt a triple-quoted literal.

    Backslashes are doubled, a quote is escaped when another quote follows it or
    when it ends the text, and control characters other than newline and tab
    become `\\xNN` escapes.
    """
    out: list[str] = []
    for index, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char == '"' and (index + 1 == len(text) or text[index + 1] == '"'):
            out.append('\\"')
        elif (ord(char) < 32 and char not in "\n\t") or ord(char) == 127:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return "".join(out)


def constant_of(method: ir.Method) -> str:
    """The module constant naming `method` (`METHOD_TOOLS_CALL`)."""
    return method_constant(method.name, notification=method.message == "notification")


def _name_category(name: str) -> int:
    """ruff's grouping of names: constants, then classes, then the rest."""
    if name.isupper() and len(name) > 1:
        return 0
    return 1 if name[:1].isupper() else 2


def isort_names(names: list[str]) -> list[str]:
    """Order imported names as isort and ruff do (case-folded within a group)."""
    return sorted(set(names), key=lambda n: (_name_category(n), n.lower(), n))


def sort_all(names: list[str]) -> list[str]:
    """Order `__all__` as ruff's RUF022 does (case-sensitive within a group)."""
    return sorted(set(names), key=lambda n: (_name_category(n), n))


def format_python(source: str) -> str:
    """Format generated source with black (in-process)."""
    mode = Mode(target_versions={TargetVersion.PY311}, line_length=88)
    return black.format_str(source, mode=mode)


def header(rev: ir.Revision) -> dict[str, str]:
    extension, _, version = rev.name.partition("@") if rev.extension else ("", "", "")
    return {
        "revision": rev.name,
        "sha256": rev.sha256,
        "version": __version__,
        "runtime": RUNTIME,
        "source": f"schema/{rev.source or rev.name + '/schema.json'}",
        "title": (
            f"the MCP extension {extension} ({version})"
            if rev.extension
            else f"MCP revision {rev.name}"
        ),
        "extension": extension,
        "extension_version": version,
    }


def render_revision(rev: ir.Revision) -> dict[str, str]:
    """The files of one revision's subpackage, as {relative path: text}."""
    base = f"{PACKAGE}/{rev.module}"
    return {
        f"{base}/types.py": render_types(rev),
        f"{base}/methods.py": render_methods(rev),
        f"{base}/dispatch.py": render_dispatch(rev),
        f"{base}/__init__.py": render_init(rev),
        f"{base}/py.typed": "",
    }


EXTENSIONS_PACKAGE = f"{PACKAGE}/extensions"
"""Where extensions' subpackages go."""


def version_constants(rev: ir.Revision) -> list[str]:
    """The constants naming what a `types.py` is of."""
    if rev.extension:
        return ["EXTENSION_ID", "EXTENSION_VERSION"]
    return ["PROTOCOL_VERSION"]


def render_extension(rev: ir.Revision) -> dict[str, str]:
    """The files of one extension's subpackage: its types and method table
    (the server session dispatches through the table; no stubs)."""
    base = f"{EXTENSIONS_PACKAGE}/{rev.module}"
    return {
        f"{base}/types.py": render_types(rev),
        f"{base}/methods.py": render_methods(rev),
        f"{base}/__init__.py": render_init(rev),
        f"{base}/py.typed": "",
    }


def render_extensions_root(
    extensions: tuple[ir.Revision, ...], package: str = PACKAGE
) -> str:
    """`extensions/__init__.py`: the module of each extension, by identifier."""
    return _template(
        "extensions_init.py.jinja",
        version=__version__,
        package=package,
        extensions=[
            {"id": header(r)["extension"], "module": r.module} for r in extensions
        ],
    )


def render_package(
    revisions: tuple[ir.Revision, ...],
    latest: str,
    rendered: dict[str, str] | None = None,
    package: str = PACKAGE,
) -> dict[str, str]:
    """Every file of the generated package, as {relative path: text}.

    `rendered` may hold the revisions' own files already (see `render_revision`).
    Paths start with `PACKAGE`; `package` is the import name the code uses.
    """
    files: dict[str, str] = {}
    if rendered is None:
        for rev in revisions:
            files.update(render_revision(rev))
    else:
        files.update(rendered)
    latest_rev = next(rev for rev in revisions if rev.name == latest)
    files[f"{PACKAGE}/latest/__init__.py"] = render_latest(latest_rev)
    files[f"{PACKAGE}/__init__.py"] = render_root(revisions, latest, package)
    files[f"{PACKAGE}/conversions.py"] = render_conversions(revisions)
    files[f"{PACKAGE}/py.typed"] = ""
    return files


def _template(name: str, **context: Any) -> str:
    return format_python(environment().get_template(name).render(**context))


def render_types(rev: ir.Revision, h: dict[str, str] | None = None) -> str:
    """`types.py`: one Python type per schema definition and inline type.

    `h` replaces the header (what the module says it was generated from).
    """
    imports = Imports(reserved={d.name for d in rev.decls})
    structs = [
        _struct_view(d, imports) for d in rev.decls if isinstance(d, ir.StructDecl)
    ]
    aliases = _alias_views(rev, imports)
    names = sorted([d.name for d in rev.decls] + version_constants(rev))
    return _template(
        "types.py.jinja",
        h=h or header(rev),
        imports=imports,
        structs=structs,
        aliases=aliases,
        all_names=names,
        uses_closed=any(s["base"] == "ClosedStruct" for s in structs),
        uses_open=any(s["base"] == "OpenStruct" for s in structs),
        uses_unset=any(f["optional"] for s in structs for f in s["fields"]),
    )


def _struct_view(decl: ir.StructDecl, imports: Imports) -> dict[str, Any]:
    fields: list[dict[str, Any]] = []
    for f in _sorted_fields(decl):
        annotation = render(f.type, imports)
        optional = not f.required and f.default is None
        default = None
        if optional:
            annotation = join_union([annotation, "UnsetType"])
            default = "UNSET"
        elif f.default is not None:
            default = repr(f.default)
        if f.wire_name != f.py_name:
            imports.msgspec = True
            args = ([f"default={default}"] if default else []) + [
                f"name={f.wire_name!r}"
            ]
            default = "msgspec.field(" + ", ".join(args) + ")"
        fields.append(
            {
                "name": f.py_name,
                "annotation": annotation,
                "default": default,
                "optional": optional,
                "doc": f.description,
            }
        )
    config = ", kw_only=True"
    if decl.tag_field is not None:
        config += f", tag_field={decl.tag_field!r}, tag={decl.tag_value!r}"
    return {
        "name": decl.name,
        "base": "OpenStruct" if decl.open else "ClosedStruct",
        "config": config,
        "doc": decl.description or f"The `{decl.name}` object of the schema.",
        "fields": fields,
    }


def _alias_views(rev: ir.Revision, imports: Imports) -> list[dict[str, Any]]:
    """Every non-struct declaration, each after the ones it mentions.

    `kind` is "plain" (a type alias msgspec decodes), "union" (a union without
    discriminator) or "recursive" (JSONValue and friends); the last two are
    exact aliases for type checkers and decoders at run time.
    """
    views: dict[str, dict[str, Any]] = {}
    deps: dict[str, set[str]] = {}
    for decl in rev.decls:
        if isinstance(decl, ir.StructDecl):
            continue
        if isinstance(decl, ir.UnionDecl):
            members = [render(m, imports) for m in decl.members]
            kind = "union" if decl.strategy == "structural" else "plain"
            annotation = join_union(members)
            mentioned = set[str]().union(*(references(m) for m in decl.members))
        else:
            annotation = render(decl.target, imports)
            members = [annotation]
            kind = "recursive" if decl.recursive else "plain"
            mentioned = set[str]() if decl.recursive else references(decl.target)
        views[decl.name] = {
            "name": decl.name,
            "kind": kind,
            "annotation": annotation,
            "members": members,
            "doc": decl.description,
        }
        deps[decl.name] = mentioned
    ordered: list[dict[str, Any]] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        if name in done or name not in views:
            return
        done.add(name)
        for dep in sorted(deps[name]):
            visit(dep)
        ordered.append(views[name])

    for name in sorted(views):
        visit(name)
    return ordered


def render_methods(rev: ir.Revision) -> str:
    """`methods.py`: method-name constants and the method table."""

    methods: list[dict[str, Any]] = [
        {
            "m": m,
            "constant": constant_of(m),
        }
        for m in rev.methods
    ]
    types_used = sorted(
        {m.message_type for m in rev.methods}
        | {m.params_type for m in rev.methods if m.params_type}
        | {m.result_type for m in rev.methods if m.result_type}
    )
    constants = sorted(x["constant"] for x in methods)
    return _template(
        "methods.py.jinja",
        h=header(rev),
        methods=methods,
        types_used=types_used,
        constants=constants,
        meta_keys=rev.meta_keys,
        error_codes=rev.error_codes,
    )


def exports(rev: ir.Revision) -> dict[str, list[str]]:
    """The public names of each module of a revision's subpackage."""

    methods = [constant_of(m) for m in rev.methods]
    methods += [c.name for c in rev.meta_keys + rev.error_codes] + ["METHODS"]
    found = {
        "types": sorted([d.name for d in rev.decls] + version_constants(rev)),
        "methods": sorted(methods),
        "dispatch": ["Client", "ClientHandlers", "ServerHandlers"],
    }
    if rev.extension:
        del found["dispatch"]
    return found


def render_init(rev: ir.Revision) -> str:
    """The revision package's `__init__.py`: re-exports of its modules."""
    modules = exports(rev)
    return _template(
        "revision_init.py.jinja",
        h=header(rev),
        modules=modules,
        all_names=sorted(name for names in modules.values() for name in names),
    )


def render_latest(rev: ir.Revision) -> str:
    """`latest/__init__.py`: the newest dated revision's names."""
    names = sorted(name for names in exports(rev).values() for name in names)
    return _template(
        "latest_init.py.jinja", h=header(rev), module=rev.module, names=names
    )


def render_root(
    revisions: tuple[ir.Revision, ...], latest: str, package: str = PACKAGE
) -> str:
    """The package's `__init__.py`: its revisions, the latest, their modules."""
    return _template(
        "package_init.py.jinja",
        version=__version__,
        package=package,
        example=next(r.module for r in revisions if r.name == latest),
        revisions=[
            {"name": r.name, "module": r.module, "era": r.era} for r in revisions
        ],
        latest=latest,
    )


CLIENT_ONLY_PARAMS = frozenset({"self", "params", "fields"})
"""Field names that cannot be keyword arguments of a client method."""


def render_dispatch(rev: ir.Revision) -> str:
    """`dispatch.py`: handler base classes and the typed client of one revision."""

    imports = Imports(reserved={d.name for d in rev.decls})
    annotation_names: set[str] = set()
    runtime_names: set[str] = set()

    def handler_view(method: ir.Method) -> dict[str, Any]:
        if method.params_type:
            annotation_names.add(method.params_type)
        if method.result_type:
            annotation_names.add(method.result_type)
        message = rev.decl(method.message_type)
        return {
            "py_name": method.py_name,
            "params": method.params_type,
            "result": method.result_type or "None",
            "constant": constant_of(method),
            "doc": f"`{method.name}`: {message.description}".strip(),
        }

    def client_view(method: ir.Method) -> dict[str, Any]:
        stem = method.message_type.removesuffix(method.message.capitalize())
        name = snake_case(stem)
        view = handler_view(method)
        view.update(
            name=name if method.message == "request" else f"notify_{name}",
            kind=method.message,
            kwargs=None,
            params_class=method.params_type,
            result_runtime=method.result_type,
        )
        if method.result_type:
            runtime_names.add(method.result_type)
        params = rev.decl(method.params_type) if method.params_type else None
        if isinstance(params, ir.StructDecl) and not (
            {f.py_name for f in params.fields} & CLIENT_ONLY_PARAMS
        ):
            runtime_names.add(params.name)
            fields = _sorted_fields(params)
            kwargs = [_keyword_view(f, imports) for f in fields]
            for field, keyword in zip(fields, kwargs, strict=True):
                envelope = field.wire_name == "_meta" and field.required
                if envelope and rev.era == "modern":
                    # The request envelope: optional here, filled by request_meta().
                    keyword.update(
                        annotation=join_union([keyword["annotation"], "None"]),
                        default="None",
                    )
                    view["fill_meta"] = keyword["name"]
            view["kwargs"] = sorted(kwargs, key=lambda k: k["default"] is not None)
        return view

    def handlers_of(directions: tuple[str, ...]) -> list[dict[str, Any]]:
        return [handler_view(m) for m in rev.methods if m.direction in directions]

    server = {
        "name": "ServerHandlers",
        "doc": f"Handlers of the client→server methods of {rev.name}; "
        "override what the server serves.",
        "directions": "{'both', 'client_to_server'}",
        "methods": handlers_of(("client_to_server", "both")),
    }
    client_handlers = {
        "name": "ClientHandlers",
        "doc": f"Handlers of the server→client methods of {rev.name}; "
        "override what the client serves.",
        "directions": "{'both', 'server_to_client'}",
        "methods": handlers_of(("server_to_client", "both")),
    }
    client_calls = [
        client_view(m)
        for m in rev.methods
        if m.direction in ("client_to_server", "both")
    ]
    for kwargs in (c["kwargs"] for c in client_calls if c["kwargs"]):
        for k in kwargs:
            annotation_names.update(
                _names_in(k["annotation"]) & {d.name for d in rev.decls}
            )
    constants = sorted({constant_of(m) for m in rev.methods})
    request_meta = None
    if any(c.get("fill_meta") for c in client_calls):
        request_meta = _request_meta_view(rev)
        runtime_names.update(request_meta["names"])
    return _template(
        "dispatch.py.jinja",
        request_meta=request_meta,
        h=header(rev),
        imports=imports,
        server=server,
        client_handlers=client_handlers,
        client_calls=client_calls,
        constants=constants,
        runtime_type_names=sorted(runtime_names),
        type_names=sorted(annotation_names - runtime_names),
        uses_overload=any(c["kwargs"] is not None for c in client_calls),
        uses_unset=any(
            k["default"] and "UNSET" in k["default"]
            for c in client_calls
            for k in c["kwargs"] or ()
        ),
    )


REQUEST_META = "RequestMetaObject"
"""The modern request envelope type (`params._meta` of every 2026 request)."""


def _request_meta_view(rev: ir.Revision) -> dict[str, Any]:
    """How `request_meta()` builds the smallest valid envelope of a revision:
    its protocol version and empty structs for the other required fields."""
    decl = rev.decl(REQUEST_META)
    if not isinstance(decl, ir.StructDecl):
        raise UnsupportedSchemaError(
            f"{REQUEST_META} is not an object", revision=rev.name
        )
    arguments: list[tuple[str, str]] = []
    names = {REQUEST_META}
    for field in (f for f in decl.fields if f.required):
        if field.wire_name.endswith("/protocolVersion"):
            arguments.append((field.py_name, "PROTOCOL_VERSION"))
            names.add("PROTOCOL_VERSION")
            continue
        target = rev.decl(field.type.name) if isinstance(field.type, ir.Ref) else None
        if not isinstance(target, ir.StructDecl) or any(
            f.required for f in target.fields
        ):
            raise UnsupportedSchemaError(
                f"cannot build a default for required envelope field {field.wire_name}",
                revision=rev.name,
                pointer=decl.pointer,
            )
        arguments.append((field.py_name, f"{target.name}()"))
        names.add(target.name)
    return {"type": REQUEST_META, "arguments": arguments, "names": names}


def _sorted_fields(decl: ir.StructDecl) -> list[ir.Field]:
    """Required fields first, then by name (the order of generated signatures)."""
    return sorted(
        decl.fields, key=lambda f: (not f.required and f.default is None, f.py_name)
    )


def _keyword_view(field: ir.Field, imports: Imports) -> dict[str, Any]:
    """A struct field as a keyword argument of a client method."""
    annotation = render(field.type, imports)
    default = None
    if field.default is not None:
        default = repr(field.default)
    elif not field.required:
        annotation = join_union([annotation, "UnsetType"])
        default = "UNSET"
    return {"name": field.py_name, "annotation": annotation, "default": default}


def _names_in(annotation: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation))


def render_conversions(revisions: tuple[ir.Revision, ...]) -> str:
    """`conversions.py`: per adjacent step, the properties each type loses."""
    from .revdiff import diff_revisions

    steps: list[dict[str, Any]] = []
    for older, newer in itertools.pairwise(revisions):
        diff = diff_revisions(older, newer)
        for source, target, lost in (
            (older, newer, diff.fields_only_in_a),
            (newer, older, diff.fields_only_in_b),
        ):
            types: list[dict[str, Any]] = []
            for change in diff.type_changes:
                if change.kind_changed:
                    continue
                fields = sorted(f.wire_name for f in lost(change.name))
                if fields:
                    types.append({"name": change.name, "fields": fields})
            steps.append({"source": source.name, "target": target.name, "types": types})
    return format_python(
        environment()
        .get_template("conversions.py.jinja")
        .render(version=__version__, runtime=RUNTIME, steps=steps)
    )

"""Render a typed client package: `types.py` through the protocol types'
template, `client.py` and `__init__.py` through `templates/client/`, and
the lock file. Returns {path relative to the output folder: text}."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from mcp_specgen import __version__, ir
from mcp_specgen.emit import (
    RUNTIME,
    environment,
    format_python,
    render_types,
)
from mcp_specgen.generate import check_package_name
from mcp_specgen.jsondata import is_object
from mcp_specgen.pytypes import Imports, join_union, render

from .lock import LOCK_NAME, lock_of
from .names import Namer, class_name, identifier, parameter, unique_parameters
from .schema_ir import build_client_ir

if TYPE_CHECKING:
    from .inspect import Listing
    from .lock import Lock
    from .schema_ir import ToolTypes

UNSET_ANNOTATION = "_wire.UnsetType"
_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^}]*)\}")
_VARIABLE = re.compile(r"^[A-Za-z0-9_]+$")


def render_client(listing: Listing, package: str) -> dict[str, str]:
    """Every file of the typed client package `package` for `listing`.

    Raises:
        ClientGenError: the server offers something that cannot be generated.
        CodegenError: `package` is not an import name or shadows a module.
    """
    from .inspect import ClientGenError

    check_package_name(package)
    client_ir = build_client_ir(listing)
    lock = lock_of(listing)
    rev = client_ir.revision
    decl_names = {d.name for d in rev.decls}
    cls = class_name(listing.server_name)
    for name in (cls, "ToolError"):
        if name in decl_names:
            raise ClientGenError(f"a tool schema's type is named {name!r}")
    h = _header(listing, lock)
    imports = Imports(reserved=decl_names | {cls, "ToolError"})
    namer = Namer()
    tools = [
        _tool_view(
            tool, client_ir.tools[str(tool.get("name", ""))], rev, imports, namer
        )
        for tool in sorted(listing.tools, key=lambda t: str(t.get("name", "")))
    ]
    prompts = [
        _prompt_view(p, namer)
        for p in sorted(listing.prompts, key=lambda p: str(p.get("name", "")))
    ]
    templates = [
        _template_view(t, namer)
        for t in sorted(listing.templates, key=lambda t: str(t.get("name", "")))
    ]
    used: set[str] = set()
    for view in tools:
        used |= {view["params"], view["result"]} - {None}
        for k in view["kwargs"]:
            used |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", k["annotation"]))
    client_py = format_python(
        environment()
        .get_template("client/client.py.jinja")
        .render(
            h=h,
            imports=imports,
            class_name=cls,
            tools=tools,
            prompts=prompts,
            templates=templates,
            type_names=sorted(used & decl_names),
            uses_expand=bool(templates),
            uses_present=any(p["kwargs"] for p in prompts),
        )
    )
    exported = [cls, "ToolError", "LOCK_SHA256", "PROTOCOL_VERSION"]
    type_exports = sorted(d.name for d in rev.decls)
    init_py = format_python(
        environment()
        .get_template("client/init.py.jinja")
        .render(h=h, exported=exported, type_exports=type_exports)
    )
    types_header = {
        "revision": listing.revision,
        "sha256": lock.hash,
        "version": __version__,
        "runtime": RUNTIME,
        "source": f"tools/list of {h['server']}",
        "title": f"the tools of {h['server']}",
        "extension": "",
        "extension_version": "",
    }
    return {
        f"{package}/__init__.py": init_py,
        f"{package}/client.py": client_py,
        f"{package}/types.py": render_types(rev, types_header),
        f"{package}/py.typed": "",
        f"{package}/{LOCK_NAME}": lock.to_json(),
    }


def _header(listing: Listing, lock: Lock) -> dict[str, str]:
    server = listing.server_name or "the server"
    if listing.server_version:
        server += f" {listing.server_version}"
    return {
        "version": __version__,
        "server": server,
        "server_name": listing.server_name,
        "server_version": listing.server_version,
        "revision": listing.revision,
        "lock": lock.hash,
    }


def _tool_view(
    tool: dict[str, Any],
    types: ToolTypes,
    rev: ir.Revision,
    imports: Imports,
    namer: Namer,
) -> dict[str, Any]:
    wire = str(tool.get("name", ""))
    kwargs: list[dict[str, Any]] = []
    notes: list[str] = []
    params = None
    if types.params is not None:
        decl = _struct(rev, types.params, f"tool {wire!r} inputSchema")
        params = decl.name
        properties = tool.get("inputSchema", {}).get("properties", {})
        for f in sorted(decl.fields, key=lambda f: (not f.required, f.py_name)):
            kwargs.append(_field_kwarg(f, imports))
            notes.append(_note(kwargs[-1]["name"], properties.get(f.wire_name)))
    description = str(tool.get("description") or f"Call the tool `{wire}`.")
    doc = description + ("\n\nParameters:\n\n" + "\n".join(notes) if notes else "")
    return {
        "method": namer.claim(identifier(wire), f"tool {wire!r}"),
        "wire": wire,
        "doc": doc,
        "kwargs": kwargs,
        "params": params,
        "result": types.result,
    }


def _struct(rev: ir.Revision, name: str, what: str) -> ir.StructDecl:
    """The struct `name` stands for (through aliases of a `$ref` root).

    Raises:
        ClientGenError: it is not an object with properties.
    """
    from .inspect import ClientGenError

    decl = rev.decl(name)
    while isinstance(decl, ir.AliasDecl) and isinstance(decl.target, ir.Ref):
        decl = rev.decl(decl.target.name)
    if not isinstance(decl, ir.StructDecl):
        raise ClientGenError(f"{what}: the root is not an object with properties")
    return decl


def _field_kwarg(f: ir.Field, imports: Imports) -> dict[str, Any]:
    annotation = render(f.type, imports)
    default = None
    if not f.required:
        annotation = join_union([annotation, UNSET_ANNOTATION])
        default = "_wire.UNSET"
    name = f.py_name + "_" if f.py_name in ("self", "timeout") else f.py_name
    return {
        "name": name,
        "call": f"{f.py_name}={name}",
        "annotation": annotation,
        "default": default,
    }


def _note(name: str, schema: Any) -> str:
    """One parameter's line in a docstring: its description and default."""
    text = f"- {name}"
    if is_object(schema):
        description = str(schema.get("description", "")).strip()
        if description:
            text += f": {description}"
        if "default" in schema:
            text += f" (server default: {json.dumps(schema['default'])})"
    return text


def _prompt_view(prompt: dict[str, Any], namer: Namer) -> dict[str, Any]:
    wire = str(prompt.get("name", ""))
    kwargs: list[dict[str, Any]] = []
    notes: list[str] = []
    arguments = sorted(
        prompt.get("arguments") or [],
        key=lambda a: (not a.get("required", False), parameter(str(a.get("name", "")))),
    )
    for argument in arguments:
        name = str(argument.get("name", ""))
        required = argument.get("required", False) is True
        kwargs.append(
            {
                "name": parameter(name),
                "wire": name,
                "annotation": "str" if required else "str | None",
                "default": None if required else "None",
            }
        )
        note = f"- {parameter(name)}"
        if argument.get("description"):
            note += f": {argument['description']}"
        notes.append(note)
    unique_parameters([(k["wire"], k["name"]) for k in kwargs], f"prompt {wire!r}")
    description = str(prompt.get("description") or f"Get the prompt `{wire}`.")
    doc = description + ("\n\nArguments:\n\n" + "\n".join(notes) if notes else "")
    return {
        "method": namer.claim("prompt_" + identifier(wire), f"prompt {wire!r}"),
        "wire": wire,
        "doc": doc,
        "kwargs": kwargs,
    }


def _template_view(template: dict[str, Any], namer: Namer) -> dict[str, Any]:
    from .inspect import ClientGenError

    wire = str(template.get("name", ""))
    uri = str(template.get("uriTemplate", ""))
    what = f"resource template {wire!r} ({uri})"
    kwargs: list[dict[str, Any]] = []
    for operator, names in _EXPRESSION.findall(uri):
        for variable in names.split(","):
            if not _VARIABLE.match(variable):
                raise ClientGenError(
                    f"{what}: the expression {{{operator}{names}}} uses a "
                    "modifier or a name this generator does not support"
                )
            optional = operator in "?&;" and operator != ""
            if any(k["wire"] == variable for k in kwargs):
                continue
            kwargs.append(
                {
                    "name": parameter(variable),
                    "wire": variable,
                    "annotation": "str | None" if optional else "str",
                    "default": "None" if optional else None,
                }
            )
    kwargs.sort(key=lambda k: (k["default"] is not None, k["name"]))
    unique_parameters([(k["wire"], k["name"]) for k in kwargs], what)
    description = str(template.get("description") or "")
    doc = f"{description}\n\nReads `{uri}`." if description else f"Read `{uri}`."
    return {
        "method": namer.claim("read_" + identifier(wire), what),
        "wire": wire,
        "template": uri,
        "doc": doc,
        "kwargs": kwargs,
    }

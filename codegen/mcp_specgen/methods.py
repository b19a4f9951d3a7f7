"""The method table of a revision, read from its request and notification types.

A message type is a definition named `...Request` or `...Notification` whose
`method` property is a const. Its direction comes from the role unions that
hold it (`ClientRequest`, `ServerNotification`, `InputRequest`, ...); its
result from the paired `...ResultResponse` (2026 and later) or `...Result`
definition, else `EmptyResult`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import ir
from .errors import UnsupportedSchemaError
from .jsondata import is_object
from .naming import method_name

if TYPE_CHECKING:
    from .load import LoadedSchema

CLIENT_ROLES = ("ClientRequest", "ClientNotification")
SERVER_ROLES = ("ServerRequest", "ServerNotification", "InputRequest")


def extract_methods(
    decls: dict[str, ir.Decl], definitions: dict[str, Any], schema: LoadedSchema
) -> tuple[ir.Method, ...]:
    """Every method of the revision, sorted by method name.

    Raises:
        UnsupportedSchemaError: a message type belongs to no role, or two
            types claim one method.
    """
    client = _role_methods(CLIENT_ROLES, definitions, schema)
    server = _role_methods(SERVER_ROLES, definitions, schema)
    methods: dict[str, ir.Method] = {}
    for name in sorted(definitions):
        if name in CLIENT_ROLES + SERVER_ROLES:
            continue
        is_request = name.endswith("Request")
        if not (is_request or name.endswith("Notification")):
            continue
        method = _method_const(definitions[name])
        if method is None:
            continue  # a base type such as JSONRPCRequest or PaginatedRequest
        pointer = schema.pointer(name)
        if method in methods:
            raise UnsupportedSchemaError(
                f"method {method!r} is defined by two types",
                revision=schema.revision,
                pointer=pointer,
            )
        in_client, in_server = method in client, method in server
        if not (in_client or in_server):
            raise UnsupportedSchemaError(
                f"{name} ({method}) belongs to no client or server role union",
                revision=schema.revision,
                pointer=pointer,
            )
        direction: ir.Direction = (
            "both"
            if in_client and in_server
            else "client_to_server" if in_client else "server_to_client"
        )
        struct = decls[name]
        assert isinstance(struct, ir.StructDecl)
        params = next((f for f in struct.fields if f.wire_name == "params"), None)
        methods[method] = ir.Method(
            name=method,
            py_name=method_name(method),
            direction=direction,
            message="request" if is_request else "notification",
            message_type=name,
            params_type=_type_name(params.type) if params else None,
            params_required=bool(params and params.required),
            result_type=_result_type(name, decls, definitions) if is_request else None,
        )
    return tuple(methods[m] for m in sorted(methods))


def _method_const(node: object) -> str | None:
    if not is_object(node):
        return None
    method = node.get("properties", {}).get("method", {})
    value = method.get("const") if is_object(method) else None
    return value if isinstance(value, str) else None


def _role_methods(
    roles: tuple[str, ...], definitions: dict[str, Any], schema: LoadedSchema
) -> set[str]:
    """Methods reachable from the role definitions through anyOf and $ref."""
    prefix = f"#/{schema.definitions_key}/"
    found: set[str] = set()
    stack = [definitions[role] for role in roles if role in definitions]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if not is_object(node) or id(node) in seen:
            continue
        seen.add(id(node))
        const = _method_const(node)
        if const is not None:
            found.add(const)
        if "$ref" in node:
            stack.append(definitions[node["$ref"].removeprefix(prefix)])
        stack.extend(node.get("anyOf", []))
        stack.extend(node.get("oneOf", []))
    return found


def _result_type(
    request: str, decls: dict[str, ir.Decl], definitions: dict[str, Any]
) -> str:
    stem = request.removesuffix("Request")
    response = decls.get(f"{stem}ResultResponse")
    if isinstance(response, ir.StructDecl):
        result = next(f for f in response.fields if f.wire_name == "result")
        return _type_name(result.type)
    for candidate in (f"{stem}Result", "EmptyResult", "Result"):
        if candidate in definitions:
            return candidate
    raise KeyError(f"no result type for {request}")


def _type_name(expr: ir.TypeExpr) -> str:
    if isinstance(expr, ir.Ref):
        return expr.name
    raise TypeError(f"expected a named type, got {expr!r}")

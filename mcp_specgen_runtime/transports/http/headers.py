"""HTTP header fields of the Streamable HTTP transport and the MCP rules about them.

Reading headers: `HttpHeaders` looks fields up case-insensitively (ASGI gives
lowercase byte names, clients any case) and keeps repeated field lines, so a
singleton field sent twice is caught instead of silently taking one copy.

Every check here (and in `security`) returns an `HttpError` (status, JSON-RPC
code, message, data) or None; `HttpError.body` is the JSON-RPC error reply.

The protocol version (`protocol_version`), for every revision:

- A supported value is the request's version; any other is 400 with -32022
  (`UnsupportedProtocolVersion`, data `{"supported", "requested"}`). The legacy
  revisions only say "400 Bad Request"; -32022 also tells a probing 2026
  client which versions to retry with.
- Absent: the session's negotiated version when the caller knows one, else
  2025-03-26 (2025-06-18 to 2025-11-25 say SHOULD assume it; 2026-07-28 says
  MAY, for servers that still serve pre-2025-06-18 clients). A server not
  serving 2025-03-26 gets 400 with -32020 (2026-07-28: a missing standard
  header is a `HeaderMismatch`).

The 2026-07-28 request headers (`check_request_headers`, `request_headers`):
`MCP-Protocol-Version` must equal `params._meta["io.modelcontextprotocol/
protocolVersion"]`, `Mcp-Method` the body's `method`, and `Mcp-Name` the
body's `params.name` (`tools/call`, `prompts/get`) or `params.uri`
(`resources/read`). A failure is 400 with -32020 (`HeaderMismatch`). When the
body has no string name/uri, `Mcp-Name` is not checked: params validation
rejects that request (-32602) before anything runs.

Tool parameters mirrored into `Mcp-Param-<Name>` (`x-mcp-header` in a tool's
`inputSchema`):

- An annotation is valid on a property reached from the schema root through
  `properties` keys only, whose `type` is `string`, `integer` or `boolean`
  (a list of those plus `"null"` is accepted: the spec has null values omit
  the header), with a non-empty RFC 9110 token unique regardless of case.
  Any other annotation makes the whole schema invalid (`param_header_problem`).
- Values render as: strings as-is, integers in decimal, booleans `true` /
  `false` (integral floats as integers); null, absent, and non-scalar values
  mirror nothing.
- `encode_header_value` sends visible ASCII and inner spaces as they are and
  anything else as ``=?base64?<base64 of UTF-8>?=``: non-ASCII, control
  characters (tab included), edge spaces, values shaped like the sentinel,
  and the empty string (intermediaries may drop empty fields, and a dropped
  header would then fail the server's check).
- `decode_header_value` accepts only canonical padded base64 of valid UTF-8
  inside the sentinel and plain values of visible ASCII, space and tab;
  anything else is None (malformed).
- The server (`check_param_headers`) requires each declared header exactly
  when its argument has a value, once, and equal to it after decoding;
  integer parameters compare numerically for plain decimal header values
  (``42.0`` equals ``42``). A schema with an invalid annotation checks
  nothing: conforming clients never call such a tool.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final, TypeAlias

from mcp_specgen_runtime.jsonrpc.envelope import error_reply
from mcp_specgen_runtime.protocol.meta import META_PROTOCOL_VERSION

from ...errors import ErrorCode, RpcError

__all__ = [
    "DEFAULT_PROTOCOL_VERSION",
    "HEADER_MISMATCH",
    "METHOD_HEADER",
    "NAME_FIELDS",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "X_MCP_HEADER",
    "HeadersLike",
    "HttpError",
    "HttpHeaders",
    "ParamHeader",
    "as_headers",
    "check_param_headers",
    "check_request_headers",
    "client_param_headers",
    "decode_header_value",
    "encode_header_value",
    "media_type",
    "param_header_problem",
    "param_headers",
    "protocol_version",
    "render_param_value",
    "request_headers",
]

PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
METHOD_HEADER: Final = "Mcp-Method"
NAME_HEADER: Final = "Mcp-Name"
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
X_MCP_HEADER: Final = "x-mcp-header"
"""The `inputSchema` property annotation naming an `Mcp-Param-` header."""

DEFAULT_PROTOCOL_VERSION: Final = "2025-03-26"
"""The version assumed for a request without `MCP-Protocol-Version`."""
HEADER_MISMATCH: Final = -32020
"""2026-07-28 `HeaderMismatch`: headers disagree with the body, or are
missing or malformed (always with HTTP 400)."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""2026-07-28 `UnsupportedProtocolVersion` (with HTTP 400)."""

NAME_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "tools/call": "name",
        "prompts/get": "name",
        "resources/read": "uri",
        # SEP-2663: the tasks extension routes its requests by task id.
        "tasks/get": "taskId",
        "tasks/update": "taskId",
        "tasks/cancel": "taskId",
    }
)
"""The methods whose requests carry `Mcp-Name`, and the params member it mirrors."""

_SENTINEL_PREFIX = "=?base64?"
_SENTINEL_SUFFIX = "?="
_PLAIN = re.compile(r"[\x20-\x7e]*")
_RECEIVABLE = re.compile(r"[\t\x20-\x7e]*")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema keywords whose value is a subschema, a list of them, or a map of
# them; crossing any of them leaves the `properties` chain.
_ONE_SCHEMA = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset(
    {"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties"}
)


# --- reading headers ------------------------------------------------------------


class HttpHeaders:
    """Header fields looked up by case-insensitive name, repeated lines kept."""

    __slots__ = ("_fields",)

    def __init__(
        self, fields: Mapping[str, str] | Iterable[tuple[str, str]] = ()
    ) -> None:
        pairs: Iterable[tuple[str, str]] = (
            typing.cast("Mapping[str, str]", fields).items()
            if isinstance(fields, Mapping)
            else fields
        )
        self._fields: dict[str, list[str]] = {}
        for name, value in pairs:
            # A field value excludes surrounding whitespace (RFC 9110 §5.5);
            # not every server strips it before the app sees it.
            self._fields.setdefault(name.lower(), []).append(value.strip(" \t"))

    @classmethod
    def from_asgi(cls, raw: Iterable[tuple[bytes, bytes]]) -> HttpHeaders:
        """The headers of an ASGI scope (`scope["headers"]`, latin-1 bytes)."""
        # `__init__`'s work in one plain loop: this runs for every request.
        headers = cls.__new__(cls)
        fields: dict[str, list[str]] = {}
        for name, value in raw:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1").strip(" \t")
            found = fields.get(key)
            if found is None:
                fields[key] = [text]
            else:
                found.append(text)
        headers._fields = fields
        return headers

    def get_all(self, name: str) -> list[str]:
        """Every line of the field, in order (empty when absent)."""
        return list(self._fields.get(name.lower(), ()))

    def get(self, name: str) -> str | None:
        """The field's value; repeated lines are joined with ``", "``."""
        values = self._fields.get(name.lower())
        return None if values is None else ", ".join(values)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._fields

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """(lowercase name, value) for every field line."""
        for name, values in self._fields.items():
            for value in values:
                yield name, value

    def __repr__(self) -> str:
        return f"HttpHeaders({list(self)!r})"


HeadersLike: TypeAlias = HttpHeaders | Mapping[str, str] | Iterable[tuple[str, str]]
"""What the checks accept: `HttpHeaders`, a mapping, or (name, value) pairs."""


def as_headers(headers: HeadersLike) -> HttpHeaders:
    """`headers` as `HttpHeaders` (itself when it already is)."""
    return headers if isinstance(headers, HttpHeaders) else HttpHeaders(headers)


def media_type(content_type: str | None) -> str | None:
    """The lowercase ``type/subtype`` of a Content-Type value, without
    parameters; None when absent or empty."""
    if content_type is None:
        return None
    essence = content_type.split(";", 1)[0].strip().lower()
    return essence or None


# --- errors ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HttpError:
    """A request refused before it reaches the JSON-RPC engine.

    Attributes:
        status: the HTTP status to answer with.
        message: what went wrong (the JSON-RPC error message).
        code: the JSON-RPC error code of the body.
        data: the JSON-RPC error data (None: no data member).
    """

    status: int
    message: str
    code: int = int(ErrorCode.INVALID_REQUEST)
    data: Any = None

    def rpc_error(self) -> RpcError:
        """The error as an `RpcError`."""
        return RpcError(self.code, self.message, self.data)

    def body(self, request_id: int | str | None = None) -> bytes:
        """The JSON-RPC error reply (id null unless given)."""
        return error_reply(request_id, self.rpc_error())


def _show(value: object, limit: int = 64) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _mismatch(reason: str) -> HttpError:
    return HttpError(400, f"Header mismatch: {reason}", HEADER_MISMATCH)


def _single(headers: HttpHeaders, name: str) -> str | HttpError | None:
    """The only line of a field, None when absent, an error when repeated."""
    values = headers.get_all(name)
    if len(values) > 1:
        return _mismatch(f"{name} header appears more than once")
    return values[0] if values else None


# --- protocol version -----------------------------------------------------------


def protocol_version(
    headers: HeadersLike,
    supported: Iterable[str],
    *,
    negotiated: str | None = None,
) -> str | HttpError:
    """The protocol version of a request, from `MCP-Protocol-Version`.

    Not for `initialize`, whose version is in its body.

    Args:
        headers: the request's headers.
        supported: the versions the server serves.
        negotiated: the version the request's session negotiated, if any:
            assumed when the header is absent.
    """
    served = list(supported)
    value = _single(as_headers(headers), PROTOCOL_VERSION_HEADER)
    if isinstance(value, HttpError):
        return value
    if value is None:
        if negotiated is not None:
            return negotiated
        if DEFAULT_PROTOCOL_VERSION in served:
            return DEFAULT_PROTOCOL_VERSION
        return _mismatch(f"the {PROTOCOL_VERSION_HEADER} header is missing")
    if value in served:
        return value
    return HttpError(
        400,
        f"Unsupported protocol version: {_show(value)}",
        UNSUPPORTED_PROTOCOL_VERSION,
        {"supported": served, "requested": value},
    )


# --- 2026-07-28 standard request headers ----------------------------------------


def _members(value: object) -> Mapping[str, Any]:
    return typing.cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def _envelope_version(request: Mapping[str, Any]) -> Any:
    return _members(_members(request.get("params")).get("_meta")).get(
        META_PROTOCOL_VERSION
    )


def request_headers(request: Mapping[str, Any]) -> dict[str, str]:
    """The standard headers a client sends with a 2026-07-28 request:
    `MCP-Protocol-Version`, `Mcp-Method` and, where it applies, `Mcp-Name`.

    Raises:
        ValueError: the request has no string method or no protocol version
            in `params._meta`.
    """
    method = request.get("method")
    version = _envelope_version(request)
    if not isinstance(method, str) or not isinstance(version, str):
        raise ValueError("a 2026 request needs a method and a _meta protocol version")
    headers = {PROTOCOL_VERSION_HEADER: version, METHOD_HEADER: method}
    field = NAME_FIELDS.get(method)
    name = _members(request.get("params")).get(field) if field else None
    if isinstance(name, str):
        headers[NAME_HEADER] = encode_header_value(name)
    return headers


def check_request_headers(
    headers: HeadersLike, request: Mapping[str, Any]
) -> HttpError | None:
    """Whether a 2026-07-28 request's standard headers match its body.

    Args:
        headers: the request's headers.
        request: the decoded JSON-RPC request.

    Returns:
        None, or a 400 `HeaderMismatch` error.
    """
    fields = as_headers(headers)
    expected: list[tuple[str, Any]] = [
        (PROTOCOL_VERSION_HEADER, _envelope_version(request)),
        (METHOD_HEADER, request.get("method")),
    ]
    for name, body_value in expected:
        value = _single(fields, name)
        if isinstance(value, HttpError):
            return value
        if value is None:
            return _mismatch(f"the {name} header is missing")
        if value != body_value:
            return _mismatch(
                f"{name} header value {_show(value)} does not match "
                f"body value {_show(body_value)}"
            )
    method = request.get("method")
    field = NAME_FIELDS.get(method) if isinstance(method, str) else None
    body_name = _members(request.get("params")).get(field) if field else None
    if not isinstance(body_name, str):
        return None
    return _check_encoded(fields, NAME_HEADER, body_name, None)


def _check_encoded(
    fields: HttpHeaders, name: str, rendered: str, number: int | float | None
) -> HttpError | None:
    """Check a header that may use the base64 sentinel against its body value."""
    raw = _single(fields, name)
    if isinstance(raw, HttpError):
        return raw
    if raw is None:
        return _mismatch(f"the {name} header is missing")
    decoded = decode_header_value(raw)
    if decoded is None:
        return _mismatch(f"{name} header value {_show(raw)} is malformed")
    if decoded == rendered or (number is not None and _same_number(decoded, number)):
        return None
    return _mismatch(
        f"{name} header value {_show(decoded)} does not match "
        f"body value {_show(rendered)}"
    )


def _same_number(text: str, number: int | float) -> bool:
    return _DECIMAL.fullmatch(text) is not None and Decimal(text) == Decimal(number)


# --- value encoding -------------------------------------------------------------


def _looks_encoded(value: str) -> bool:
    return value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX)


def encode_header_value(value: str) -> str:
    """`value` as a header value: itself when it is safe as plain ASCII, else
    in the ``=?base64?…?=`` sentinel."""
    if (
        value
        and _PLAIN.fullmatch(value)
        and value.strip(" ") == value
        and not _looks_encoded(value)
    ):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{_SENTINEL_PREFIX}{encoded}{_SENTINEL_SUFFIX}"


def decode_header_value(value: str) -> str | None:
    """The value a header carries (sentinel decoded); None when malformed:
    bad base64 or UTF-8 in the sentinel, or characters a plain value cannot
    hold."""
    size = len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
    if len(value) < size or not _looks_encoded(value):
        return value if _RECEIVABLE.fullmatch(value) else None
    payload = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    # Only the canonical encoding: two header strings never mean one value.
    if base64.b64encode(raw).decode("ascii") != payload:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def render_param_value(value: object) -> str | None:
    """A tool argument as the text its header mirrors; None when it mirrors
    nothing (null, non-scalar, non-finite)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if not value.is_integer():
            return repr(value)
        value = int(value)
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # past the interpreter's int-to-text digit limit
            return None
    return None


# --- x-mcp-header parameters ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParamHeader:
    """One tool parameter mirrored into a header.

    Attributes:
        path: the `properties` keys from the schema root to the parameter.
        name: the `x-mcp-header` value.
        types: the parameter's JSON types, without "null".
    """

    path: tuple[str, ...]
    name: str
    types: frozenset[str]

    @property
    def header(self) -> str:
        """The header's name: ``Mcp-Param-<name>``."""
        return PARAM_HEADER_PREFIX + self.name


def _subschemas(
    path: tuple[str, ...] | None, schema: Mapping[str, Any]
) -> Iterator[tuple[tuple[str, ...] | None, object]]:
    for keyword, value in schema.items():
        if keyword == "properties":
            for name, sub in _members(value).items():
                yield (None if path is None else (*path, name)), sub
        elif keyword in _ONE_SCHEMA:
            if isinstance(value, list):  # draft-07 tuple `items`
                yield from (
                    (None, sub) for sub in typing.cast("Iterable[object]", value)
                )
            else:
                yield None, value
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            yield from ((None, sub) for sub in typing.cast("Iterable[object]", value))
        elif keyword in _SCHEMA_MAPS:
            yield from ((None, sub) for sub in _members(value).values())


def _declared_types(schema: Mapping[str, Any]) -> frozenset[str] | None:
    """The JSON types of a header parameter without "null"; None unless they
    are some of string, integer and boolean."""
    declared: Any = schema.get("type")
    listed = typing.cast("list[object]", declared) if isinstance(declared, list) else []
    names = [declared] if isinstance(declared, str) else listed
    if not all(isinstance(name, str) for name in names):
        return None
    types = frozenset(name for name in names if isinstance(name, str)) - {"null"}
    return types if types and types <= _HEADER_TYPES else None


def _scan(input_schema: Mapping[str, Any]) -> tuple[list[ParamHeader], str | None]:
    """Every annotated parameter, and the first problem found (or None)."""
    found: list[ParamHeader] = []
    seen: dict[str, tuple[str, ...]] = {}
    stack: list[tuple[tuple[str, ...] | None, object]] = [((), input_schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        schema = typing.cast("Mapping[str, Any]", node)
        stack.extend(reversed([*_subschemas(path, schema)]))  # in document order
        if X_MCP_HEADER not in schema:
            continue
        if not path:
            where = "the schema root" if path == () else "a non-`properties` position"
            return found, f"{X_MCP_HEADER} at {where}"
        dotted = ".".join(path)
        name = schema[X_MCP_HEADER]
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            return found, f"property {dotted!r}: {X_MCP_HEADER} is not a header token"
        types = _declared_types(schema)
        if types is None:
            return found, (
                f"property {dotted!r}: {X_MCP_HEADER} needs type string, "
                "integer or boolean"
            )
        other = seen.setdefault(name.lower(), path)
        if other != path:
            return found, (
                f"property {dotted!r}: {X_MCP_HEADER} {name!r} is also used "
                f"by {'.'.join(other)!r}"
            )
        found.append(ParamHeader(path, name, types))
    return found, None


def param_header_problem(input_schema: Mapping[str, Any]) -> str | None:
    """Why a tool's `inputSchema` has an invalid `x-mcp-header` annotation, or
    None when every one is valid (clients drop tools with a problem)."""
    return _scan(input_schema)[1]


def param_headers(input_schema: Mapping[str, Any]) -> tuple[ParamHeader, ...]:
    """The parameters a tool mirrors into headers.

    Raises:
        ValueError: an annotation is invalid (see `param_header_problem`).
    """
    found, problem = _scan(input_schema)
    if problem is not None:
        raise ValueError(problem)
    return tuple(found)


def _value_at(arguments: Mapping[str, Any] | None, path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = typing.cast("Mapping[str, Any]", node).get(key)
    return node


def client_param_headers(
    input_schema: Mapping[str, Any] | None, arguments: Mapping[str, Any] | None
) -> dict[str, str]:
    """The `Mcp-Param-` headers of a `tools/call` with these arguments.

    Raises:
        ValueError: the schema has an invalid `x-mcp-header` annotation.
    """
    if input_schema is None:
        return {}
    headers: dict[str, str] = {}
    for param in param_headers(input_schema):
        text = render_param_value(_value_at(arguments, param.path))
        if text is not None:
            headers[param.header] = encode_header_value(text)
    return headers


_SCANNED: dict[int, tuple[Mapping[str, Any], tuple[list[ParamHeader], str | None]]] = {}
_SCANNED_MAX = 1024


def _scanned(input_schema: Mapping[str, Any]) -> tuple[list[ParamHeader], str | None]:
    """`_scan` of a schema object, remembered: a server checks the same
    tools' schemas at every call."""
    key = id(input_schema)
    found = _SCANNED.get(key)
    if found is not None and found[0] is input_schema:  # the same object
        return found[1]
    result = _scan(input_schema)
    if len(_SCANNED) >= _SCANNED_MAX:
        _SCANNED.clear()
    _SCANNED[key] = (input_schema, result)  # held, so its id is not reused
    return result


def check_param_headers(
    input_schema: Mapping[str, Any] | None,
    arguments: Mapping[str, Any] | None,
    headers: HeadersLike,
) -> HttpError | None:
    """Whether a `tools/call` request's `Mcp-Param-` headers match its
    arguments; None, or a 400 `HeaderMismatch` error. A schema object is
    read once (its annotations remembered): give a new object to change a
    tool's schema, rather than changing it in place."""
    if input_schema is None:
        return None
    found, problem = _scanned(input_schema)
    if problem is not None or not found:
        return None
    fields = as_headers(headers)
    for param in found:
        value = _value_at(arguments, param.path)
        text = render_param_value(value)
        if text is None:
            if param.header in fields:
                return _mismatch(
                    f"{param.header} header is present but argument "
                    f"{'.'.join(param.path)!r} has no value"
                )
            continue
        number = (
            value
            if "integer" in param.types
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            else None
        )
        error = _check_encoded(fields, param.header, text, number)
        if error is not None:
            return error
    return None


SESSION_HEADER = "mcp-session-id"
"""The header naming a legacy session (`Mcp-Session-Id`)."""
LAST_EVENT_ID_HEADER = "last-event-id"
"""The header of a GET resuming an SSE stream after an event."""

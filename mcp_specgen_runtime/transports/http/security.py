"""Guards an MCP HTTP endpoint runs before reading a request's body.

Each guard is a pure function of the request's method and headers returning
an `HttpError` (status and reason) or None; `check_request` runs them in
order: Host, Origin, then the method's own (Content-Type, Accept,
Content-Length for POST; Accept for GET).

Decisions (status codes from the spec where it names one, else from the
official SDKs and the HTTP RFCs):

- Origin (every revision's "Security Warning"): a present Origin that is not
  allowed is 403, as the spec requires. Absent Origin passes (non-browser
  clients send none). Allowed origins are exact ``scheme://host[:port]``
  strings, compared case-insensitively; ``scheme://host:*`` allows any port,
  or none. Origin ``null`` passes only when listed.
- Host (DNS-rebinding protection): a Host not allowed is 421 Misdirected
  Request, as the Python SDK answers (the TypeScript SDK says 403); RFC 9110
  defines 421 for a request the server will not answer for that authority.
  A missing, repeated or malformed Host is 400 (RFC 9112 section 3.2).
- POST Content-Type must be `application/json` (any case, parameters allowed,
  a charset only if UTF-8: RFC 8259 JSON is UTF-8), else 415 as the
  TypeScript SDK answers (the Python SDK says 400).
- Accept must accept both `application/json` and `text/event-stream` on POST
  and `text/event-stream` on GET, else 406 (both SDKs). Wildcards count
  (``*/*``, ``application/*``, ``text/*``); a range with ``q=0`` does not; a
  missing Accept header is 406, since clients MUST send one.
- Body size: a Content-Length over `max_body_size` is 413, an unreadable one
  400; `check_body_size` checks the bytes actually read. The default, 4 MiB,
  is both SDKs' (Python's `DEFAULT_MAX_REQUEST_BODY_SIZE`, TypeScript's
  ``4mb``).
- Body time: a body must arrive in full within `body_timeout_s` (30 s by
  default) of the app starting to read it, else 408 Request Timeout and the
  connection is closed, so slow or stalled bodies (slowloris) do not hold
  connections forever. The headers' own pace is the HTTP server's to bound
  (uvicorn has no header timeout: see the README), as is the number of
  connections.

Defaults (`SecurityPolicy.for_bind`): on a loopback address, Host must be
``localhost``, ``127.0.0.1``, ``[::1]`` (or the bound address) with the bound
port (any port when bound to port 0; without a port too on port 80), and
Origin a loopback one (http or https, any port: a local web client has its
own port). On any other address the Host check is off (the names clients use
are unknown: set `allowed_hosts`) and no Origin is allowed, so browsers are
refused until `allowed_origins` lists theirs.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from typing import Final

from .headers import HeadersLike, HttpError, HttpHeaders, as_headers, media_type

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_MAX_BODY_SIZE",
    "LOOPBACK_ORIGINS",
    "SecurityPolicy",
    "accepts",
    "check_accept",
    "check_body_size",
    "check_content_length",
    "check_content_type",
    "check_host",
    "check_origin",
    "check_request",
    "is_loopback",
    "origin_allowed",
]

DEFAULT_MAX_BODY_SIZE: Final = 4 * 1024 * 1024
"""Bytes a request body may hold."""
DEFAULT_BODY_TIMEOUT_S: Final = 30.0
"""Seconds a request body may take to arrive."""
JSON: Final = "application/json"
SSE: Final = "text/event-stream"
LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "[::1]")
LOOPBACK_ORIGINS: Final = frozenset(
    f"{scheme}://{name}:*" for scheme in ("http", "https") for name in LOOPBACK_NAMES
)
"""The origins allowed by default on a loopback address: any port."""


@dataclass(frozen=True, slots=True)
class SecurityPolicy:
    """What a server accepts; the defaults refuse every browser origin.

    Attributes:
        allowed_hosts: Host values accepted (``host:port``, ``host:*`` for any
            port, bare ``host`` for none); None turns the Host check off.
        allowed_origins: Origin values accepted (``scheme://host:port``,
            ``scheme://host:*``); None accepts any (unsafe: no DNS-rebinding
            protection from Origin).
        max_body_size: bytes a request body may hold.
        body_timeout_s: seconds a request body may take to arrive in full;
            None for no limit.
    """

    allowed_hosts: frozenset[str] | None = None
    allowed_origins: frozenset[str] | None = frozenset()
    max_body_size: int = DEFAULT_MAX_BODY_SIZE
    body_timeout_s: float | None = DEFAULT_BODY_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.max_body_size < 1:
            raise ValueError(f"max_body_size must be positive: {self.max_body_size}")
        if self.body_timeout_s is not None and not self.body_timeout_s > 0:
            raise ValueError(f"body_timeout_s must be positive: {self.body_timeout_s}")

    @classmethod
    def for_bind(cls, host: str, port: int) -> SecurityPolicy:
        """The safe defaults for a server listening on `host`:`port`."""
        if not is_loopback(host):
            return cls()
        bound = host.strip("[]").lower()
        names = {*LOOPBACK_NAMES, f"[{bound}]" if ":" in bound else bound}
        hosts = {f"{name}:{port or '*'}" for name in names}
        if port == 80:
            hosts |= names
        return cls(allowed_hosts=frozenset(hosts), allowed_origins=LOOPBACK_ORIGINS)


def is_loopback(host: str) -> bool:
    """Whether a bind address (or name) is the local host only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _split_authority(value: str) -> tuple[str, str | None] | None:
    """(host, port or None) of ``host[:port]``; None when malformed."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        host, colon, port_text = value.partition(":")
        port = port_text if colon else None
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        return None
    if port is not None and not (port == "*" or (port.isdigit() and port.isascii())):
        return None
    return host.lower(), port


@functools.lru_cache(maxsize=256)
def _authority_allowed(value: str, allowed: frozenset[str]) -> bool | None:
    """Whether ``host[:port]`` is in `allowed`; None when malformed."""
    parts = _split_authority(value)
    if parts is None or parts[1] == "*":
        return None
    host, port = parts
    for entry in allowed:
        wanted = _split_authority(entry)
        if wanted is None or wanted[0] != host:
            continue
        if wanted[1] == "*" or wanted[1] == port:
            return True
    return False


def check_host(headers: HeadersLike, policy: SecurityPolicy) -> HttpError | None:
    """The Host guard (DNS-rebinding protection): 400 or 421."""
    if policy.allowed_hosts is None:
        return None
    values = as_headers(headers).get_all("host")
    if len(values) != 1:
        reason = "missing" if not values else "repeated"
        return HttpError(400, f"Bad Request: {reason} Host header")
    allowed = _authority_allowed(values[0], policy.allowed_hosts)
    if allowed is None:
        return HttpError(400, "Bad Request: malformed Host header")
    if not allowed:
        return HttpError(421, "Misdirected Request: Host not allowed")
    return None


def check_origin(headers: HeadersLike, policy: SecurityPolicy) -> HttpError | None:
    """The Origin guard: 403 when a present Origin is not allowed."""
    if policy.allowed_origins is None:
        return None
    values = as_headers(headers).get_all("origin")
    if not values:
        return None
    if len(values) == 1 and _origin_allowed(values[0], policy.allowed_origins):
        return None
    return HttpError(403, "Forbidden: Origin not allowed")


def origin_allowed(origin: str, allowed: frozenset[str]) -> bool:
    """Whether `origin` is one of `allowed` (exact, any case; or an entry
    ``scheme://host:*`` matching it with any port or none)."""
    return _origin_allowed(origin, allowed)


def _origin_allowed(origin: str, allowed: frozenset[str]) -> bool:
    origin = origin.strip().lower()
    if origin in {entry.lower() for entry in allowed}:
        return True
    scheme, sep, authority = origin.partition("://")
    if not sep:
        return False
    for entry in allowed:
        wanted_scheme, wanted_sep, wanted = entry.lower().partition("://")
        if wanted_sep and wanted_scheme == scheme and wanted.endswith(":*"):
            if _authority_allowed(authority, frozenset({wanted})):
                return True
    return False


def check_content_type(headers: HeadersLike) -> HttpError | None:
    """A POST body must be JSON: 415 otherwise."""
    values = as_headers(headers).get_all("content-type")
    if len(values) == 1 and "," not in values[0] and media_type(values[0]) == JSON:
        charset = _parameters(values[0]).get("charset")
        if charset is None or charset.lower() in ("utf-8", "utf8"):
            return None
    return HttpError(
        415, "Unsupported Media Type: Content-Type must be application/json"
    )


def _parameters(value: str) -> dict[str, str]:
    """The parameters of a media type or range, names lowercased."""
    found: dict[str, str] = {}
    for part in value.split(";")[1:]:
        name, _, text = part.partition("=")
        found[name.strip().lower()] = text.strip().strip('"')
    return found


def _accepted(media_range: str) -> str | None:
    """The range of one Accept element, None when it has ``q=0``."""
    q = _parameters(media_range).get("q", "1")
    try:
        if float(q) <= 0:
            return None
    except ValueError:
        return None
    return media_type(media_range)


def accepts(accept: str | None, wanted: str) -> bool:
    """Whether an Accept value accepts the media type `wanted`."""
    if accept is None:
        return False
    kind = wanted.split("/", 1)[0]
    ranges = {_accepted(element) for element in accept.split(",")}
    return bool({wanted, f"{kind}/*", "*/*"} & ranges)


def check_accept(headers: HeadersLike, method: str) -> HttpError | None:
    """POST must accept JSON and SSE, GET must accept SSE: 406 otherwise."""
    accept = as_headers(headers).get("accept")
    if method.upper() == "POST":
        if accepts(accept, JSON) and accepts(accept, SSE):
            return None
        return HttpError(
            406,
            "Not Acceptable: the client must accept both application/json "
            "and text/event-stream",
        )
    if method.upper() == "GET" and not accepts(accept, SSE):
        return HttpError(
            406, "Not Acceptable: the client must accept text/event-stream"
        )
    return None


def check_content_length(
    headers: HeadersLike, policy: SecurityPolicy
) -> HttpError | None:
    """A declared body over the limit is 413; an unreadable length 400."""
    values = {v.strip() for v in as_headers(headers).get_all("content-length")}
    if not values:
        return None
    text = values.pop()
    if values or not (text.isdigit() and text.isascii()):
        return HttpError(400, "Bad Request: invalid Content-Length")
    return check_body_size(int(text), policy)


def check_body_size(size: int, policy: SecurityPolicy) -> HttpError | None:
    """413 once a body's `size` (bytes read so far) passes the limit."""
    if size > policy.max_body_size:
        return HttpError(
            413, f"Content Too Large: the limit is {policy.max_body_size} bytes"
        )
    return None


def check_request(
    method: str, headers: HeadersLike, policy: SecurityPolicy
) -> HttpError | None:
    """Every guard for a request to the MCP endpoint, the first failure won."""
    fields = as_headers(headers)
    verb = method.upper()
    # A client sends the same Host, Origin, Content-Type and Accept with
    # every request: their verdict is computed once per distinct set.
    error = _guards(
        verb,
        tuple(fields.get_all("host")),
        tuple(fields.get_all("origin")),
        tuple(fields.get_all("content-type")) if verb == "POST" else (),
        tuple(fields.get_all("accept")),
        policy,
    )
    if error is not None or verb != "POST":
        return error
    return check_content_length(fields, policy)


@functools.lru_cache(maxsize=256)
def _guards(
    verb: str,
    host: tuple[str, ...],
    origin: tuple[str, ...],
    content_type: tuple[str, ...],
    accept: tuple[str, ...],
    policy: SecurityPolicy,
) -> HttpError | None:
    """`check_request` but the body size, from the header lines it reads."""
    fields = HttpHeaders(
        [
            *(("host", value) for value in host),
            *(("origin", value) for value in origin),
            *(("content-type", value) for value in content_type),
            *(("accept", value) for value in accept),
        ]
    )
    error = check_host(fields, policy) or check_origin(fields, policy)
    if error is not None:
        return error
    if verb == "POST":
        return check_content_type(fields) or check_accept(fields, verb)
    if verb == "GET":
        return check_accept(fields, verb)
    return None

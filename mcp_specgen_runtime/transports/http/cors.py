"""CORS for browser clients of the HTTP apps: `Cors` settings, `CorsApp`.

Off unless asked for (`http_app(..., cors=Cors(...))`, `serve_http`,
`McpHttpApp`, `App.run("http", cors=...)`). What it does:

- A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
  is answered here, on any path: 204 with the allowed origin, methods,
  headers and `max_age_s`; 403 naming what is not allowed (the origin, the
  method or a header); the Host guard first (421/400), as for any request.
- Any other request goes on to the app; when its `Origin` is allowed, the
  answer carries `Access-Control-Allow-Origin` (and `-Credentials`) and
  `Access-Control-Expose-Headers`. An origin not allowed gets no CORS
  headers, so a browser hides the answer from its script.

The headers MCP clients send are always allowed: `Content-Type`, `Accept`,
`Authorization`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`
(up to 2025-11-25), `Mcp-Method`, `Mcp-Name` and every `Mcp-Param-*`
(2026-07-28). The response headers a script needs are exposed:
`Mcp-Session-Id` (the legacy session), `WWW-Authenticate` (where to sign
in) and `Retry-After`. 2026-07-28 defines no response header of its own.

CORS and the Origin guard (`security.py`) agree by construction: every
origin CORS allows passes the guard. Without an explicit `policy`, the
default one is widened to CORS's origins (`*`: any origin; the Host guard
stays); with one, an origin CORS allows and the policy refuses is a
`ValueError` at construction. A request from an origin the guard allows
but CORS does not is served (a non-browser or same-origin client) without
CORS headers.

No framework middleware: the http extra has no Starlette, and MCP's
`Mcp-Param-*` family needs prefix matching that a fixed header list lacks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from .asgi import respond
from .headers import HttpError, HttpHeaders
from .security import SecurityPolicy, check_host, origin_allowed

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from .asgi import Message, Receive, Scope, Send

__all__ = [
    "MCP_EXPOSED_HEADERS",
    "MCP_REQUEST_HEADERS",
    "Cors",
    "CorsApp",
    "cors_policy",
]

MCP_REQUEST_HEADERS: Final = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
    }
)
"""Request headers MCP clients send, always allowed (and `Mcp-Param-*`)."""
PARAM_PREFIX: Final = "mcp-param-"
MCP_EXPOSED_HEADERS: Final = ("Mcp-Session-Id", "WWW-Authenticate", "Retry-After")
"""Response headers a browser script may read."""
DEFAULT_METHODS: Final = ("GET", "POST", "DELETE")
ANY: Final = "*"


@dataclass(frozen=True, slots=True)
class Cors:
    """What browser pages may call the server, and what they may read.

    Attributes:
        allow_origins: the origins (``scheme://host[:port]``, or
            ``scheme://host:*`` for any port) whose pages may call; ``"*"``
            for any.
        allow_methods: the methods allowed besides the simple ones.
        allow_headers: request headers allowed besides MCP's; ``"*"`` for
            any.
        expose_headers: response headers exposed besides MCP's.
        allow_credentials: let pages send cookies or TLS client
            certificates (not with ``"*"`` origins).
        max_age_s: seconds a browser may keep a preflight's answer.
    """

    allow_origins: Collection[str] | Literal["*"]
    allow_methods: Collection[str] = DEFAULT_METHODS
    allow_headers: Collection[str] | Literal["*"] = ()
    expose_headers: Collection[str] = ()
    allow_credentials: bool = False
    max_age_s: int = 600

    def __post_init__(self) -> None:
        origins = _normalized(self.allow_origins)
        if origins != ANY:
            for origin in origins:
                if not _looks_like_origin(origin):
                    raise ValueError(
                        f"not an origin: {origin!r} (scheme://host[:port], "
                        "without a path)"
                    )
        if origins == ANY and self.allow_credentials:
            raise ValueError(
                "allow_credentials needs the origins listed: a page from any "
                "origin may not send credentials"
            )
        if self.max_age_s < 0:
            raise ValueError(f"max_age_s must be 0 or more: {self.max_age_s}")
        object.__setattr__(self, "allow_origins", origins)
        methods = tuple(dict.fromkeys(m.upper() for m in self.allow_methods))
        object.__setattr__(self, "allow_methods", methods)
        object.__setattr__(self, "allow_headers", _normalized(self.allow_headers))
        exposed = dict.fromkeys([*MCP_EXPOSED_HEADERS, *self.expose_headers])
        object.__setattr__(self, "expose_headers", tuple(exposed))

    @property
    def any_origin(self) -> bool:
        """Whether every origin is allowed."""
        return self.allow_origins == ANY

    def allows_origin(self, origin: str) -> bool:
        """Whether a page from `origin` may call."""
        if self.any_origin:
            return True
        return origin_allowed(origin, frozenset(self.allow_origins))

    def refused_header(self, names: Iterable[str]) -> str | None:
        """The first of `names` (lowercase) not allowed, else None."""
        if self.allow_headers == ANY:
            return None
        extra = frozenset(self.allow_headers)
        for name in names:
            allowed = (
                name in MCP_REQUEST_HEADERS
                or name.startswith(PARAM_PREFIX)
                or name in extra
            )
            if not allowed:
                return name
        return None


def _normalized(values: Collection[str] | str) -> frozenset[str] | Literal["*"]:
    if isinstance(values, str):
        values = [values]
    names = frozenset(value.strip().lower() for value in values)
    return ANY if ANY in names else names


def _looks_like_origin(origin: str) -> bool:
    if origin == "null":
        return True
    scheme, sep, authority = origin.partition("://")
    return bool(sep and scheme and authority) and not any(
        c in authority for c in "/?#@ "
    )


def cors_policy(
    cors: Cors, policy: SecurityPolicy | None, default: SecurityPolicy
) -> SecurityPolicy:
    """The guards' policy with `cors` on: `policy`, checked to let every
    origin CORS allows through the Origin guard, or else `default` widened
    to CORS's origins (see the module docstring).

    Raises:
        ValueError: `policy` refuses an origin `cors` allows.
    """
    if policy is None:
        if cors.any_origin or default.allowed_origins is None:
            return dataclasses.replace(default, allowed_origins=None)
        widened = default.allowed_origins | frozenset(cors.allow_origins)
        return dataclasses.replace(default, allowed_origins=widened)
    allowed = policy.allowed_origins
    if allowed is None:
        return policy
    if cors.any_origin:
        raise ValueError(
            "Cors(allow_origins='*') allows every origin, but the policy's "
            "Origin check refuses those not in its allowed_origins: give "
            "SecurityPolicy(allowed_origins=None), or list the origins"
        )
    listed = {entry.lower() for entry in allowed}
    refused = sorted(
        origin
        for origin in cors.allow_origins
        if origin not in listed and not origin_allowed(origin, allowed)
    )
    if refused:
        raise ValueError(
            f"CORS allows {', '.join(refused)}, which the policy's Origin "
            "check refuses (403): add them to SecurityPolicy.allowed_origins"
        )
    return policy


class CorsApp:
    """ASGI middleware answering preflights and adding CORS headers to
    `app`'s answers (see the module docstring); `policy` is the guards' (its
    Host check runs on preflights, its Origin check must pass as well)."""

    def __init__(self, app: Any, cors: Cors, policy: SecurityPolicy) -> None:
        self.app = app
        self.cors = cors
        self.policy = policy

    def __getattr__(self, name: str) -> Any:
        # The wrapped app's own API (`aclose`, `session`...) stays reachable.
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = HttpHeaders.from_asgi(scope["headers"])
        origins = headers.get_all("origin")
        if len(origins) != 1:
            await self.app(scope, receive, send)
            return
        origin = origins[0]
        requested = headers.get("access-control-request-method")
        if scope["method"] == "OPTIONS" and requested is not None:
            await self._preflight(headers, origin, requested, send)
            return
        if not self._allowed(origin):
            await self.app(scope, receive, send)
            return
        extra = self._origin_headers(origin)
        extra.append((b"access-control-expose-headers", self._exposed()))

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], *extra]}
            await send(message)

        await self.app(scope, receive, send_with_cors)

    def _allowed(self, origin: str) -> bool:
        allowed = self.policy.allowed_origins
        guard_passes = allowed is None or origin_allowed(origin, allowed)
        return guard_passes and self.cors.allows_origin(origin)

    def _origin_headers(self, origin: str) -> list[tuple[bytes, bytes]]:
        if self.cors.any_origin:
            return [(b"access-control-allow-origin", b"*")]
        fields = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"vary", b"Origin"),
        ]
        if self.cors.allow_credentials:
            fields.append((b"access-control-allow-credentials", b"true"))
        return fields

    def _exposed(self) -> bytes:
        return ", ".join(self.cors.expose_headers).encode("latin-1")

    async def _preflight(
        self, headers: HttpHeaders, origin: str, method: str, send: Send
    ) -> None:
        refused = check_host(headers, self.policy)
        if refused is None and not self._allowed(origin):
            refused = HttpError(403, f"Forbidden: Origin {origin!r} not allowed")
        if refused is None and method.upper() not in self.cors.allow_methods:
            refused = HttpError(403, f"Forbidden: method {method!r} not allowed")
        asked = [
            name.strip().lower()
            for name in (headers.get("access-control-request-headers") or "").split(",")
            if name.strip()
        ]
        if refused is None:
            header = self.cors.refused_header(asked)
            if header is not None:
                refused = HttpError(403, f"Forbidden: header {header!r} not allowed")
        if refused is not None:
            await respond(send, refused.status, refused.body(), "application/json")
            return
        fields = self._origin_headers(origin)
        fields += [
            (
                b"access-control-allow-methods",
                ", ".join(self.cors.allow_methods).encode(),
            ),
            (b"access-control-max-age", str(self.cors.max_age_s).encode()),
        ]
        if asked:
            fields.append(
                (b"access-control-allow-headers", ", ".join(asked).encode("latin-1"))
            )
        if not self.cors.any_origin:
            fields.append(
                (
                    b"vary",
                    b"Access-Control-Request-Method, Access-Control-Request-Headers",
                )
            )
        await send({"type": "http.response.start", "status": 204, "headers": fields})
        await send({"type": "http.response.body", "body": b""})

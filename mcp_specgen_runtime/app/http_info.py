"""`HttpInfo`: the HTTP request that carried a call, as a handler reads it.

`ctx.http` (or a parameter annotated `HttpInfo | None`) gives it for every
request that came over HTTP: a Streamable HTTP session's POST, a 2026
stateless POST, a POST of the 2024-11-05 HTTP+SSE transport (the one that
carried that very message). Over stdio or in memory there is none (None).

It is read-only and holds no server library's types: the method, scheme,
path, raw query, client address, and the headers as a case-insensitive
`Mapping` (a repeated field's lines joined with ", ", as RFC 9110 allows;
`headers.get_all` gives them apart).
"""

from __future__ import annotations

import typing
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from mcp_specgen_runtime.jsonrpc.serving import request_in_progress

if TYPE_CHECKING:
    from mcp_specgen_runtime.transports.http.auth import HttpRequest
    from mcp_specgen_runtime.transports.http.headers import HttpHeaders

__all__ = ["Headers", "HttpInfo", "current_http"]


class Headers(Mapping[str, str]):
    """An HTTP request's header fields by case-insensitive name (iterated
    as lowercase names, once each)."""

    __slots__ = ("_fields", "_names")

    def __init__(self, fields: HttpHeaders) -> None:
        self._fields = fields
        self._names: list[str] | None = None

    def __getitem__(self, name: str) -> str:
        key = typing.cast("object", name)  # a Mapping may be asked any key
        value = self._fields.get(name) if isinstance(key, str) else None
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._lowercase_names())

    def __len__(self) -> int:
        return len(self._lowercase_names())

    def get_all(self, name: str) -> list[str]:
        """Every line of the field, in order (empty when absent)."""
        return self._fields.get_all(name)

    def _lowercase_names(self) -> list[str]:
        if self._names is None:
            self._names = list(dict.fromkeys(name for name, _ in self._fields))
        return self._names

    def __repr__(self) -> str:
        return f"Headers({dict(self)!r})"


class HttpInfo:
    """The HTTP request that carried the call being served (read-only)."""

    __slots__ = ("_headers", "_request")

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._headers = Headers(request.headers)

    @property
    def headers(self) -> Headers:
        """The header fields, by case-insensitive name."""
        return self._headers

    @property
    def method(self) -> str:
        """The HTTP method ("POST" for every call)."""
        return self._request.method

    @property
    def scheme(self) -> str:
        """ "http" or "https", as the ASGI server tells (behind a proxy that
        ends TLS, see its forwarded headers)."""
        return self._request.scheme

    @property
    def path(self) -> str:
        """The path the request was sent to (e.g. "/mcp")."""
        return self._request.path

    @property
    def query(self) -> str:
        """The raw query string, without "?" ("" when there was none)."""
        return self._request.query.decode("latin-1")

    @property
    def query_params(self) -> dict[str, list[str]]:
        """The query's parameters, decoded, each with its values in order."""
        return urllib.parse.parse_qs(self.query, keep_blank_values=True)

    @property
    def client(self) -> tuple[str, int] | None:
        """The client's (host, port), as the ASGI server tells; None when
        it does not (a Unix socket)."""
        return self._request.client

    @property
    def client_host(self) -> str | None:
        """The client's host (an IP address), or None."""
        client = self._request.client
        return None if client is None else client[0]

    def __repr__(self) -> str:
        query = f"?{self.query}" if self.query else ""
        return f"HttpInfo({self.method} {self.path}{query} {self.scheme})"


def current_http() -> HttpInfo | None:
    """The HTTP request of the call being served, or None (no HTTP, or
    outside any request)."""
    context = request_in_progress()
    if context is None or context.http_request is None:
        return None
    return HttpInfo(typing.cast("HttpRequest", context.http_request))

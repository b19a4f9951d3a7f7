"""Reading a `WWW-Authenticate` challenge: Bearer (RFC 6750 §3, RFC 9728 §5.1)
or DPoP (RFC 9449 §7.1), which carry the same parameters."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["BearerChallenge", "parse_bearer_challenge", "parse_challenge"]

_PARAM = re.compile(
    r"""\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?"""
)
_SCHEME = re.compile(r"\s*,?\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)(?=\s|,|$)")


class BearerChallenge(msgspec.Struct, kw_only=True, frozen=True):
    """The parameters of a Bearer challenge the client acts on."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None


def _params(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        match = _PARAM.match(text, pos)
        if match is None:
            break
        name, value = match.group(1).lower(), match.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.setdefault(name, value)
        pos = match.end()
    return found


def _section(header: str, wanted: str) -> str | None:
    """The auth-params of the `wanted` scheme's challenge in one header value,
    which may carry several (`Basic realm="x", Bearer scope="y"`)."""
    pos = 0
    while pos < len(header):
        scheme = _SCHEME.match(header, pos)
        if scheme is None:
            return None
        start = scheme.end()
        end = start
        while end < len(header):
            param = _PARAM.match(header, end)
            if param is None or not param.group(0).strip():
                break
            end = param.end()
        if scheme.group(1).lower() == wanted:
            return header[start:end]
        pos = end if end > start else start
    return None


def parse_challenge(
    headers: Iterable[str], scheme: str = "bearer"
) -> BearerChallenge | None:
    """The first challenge of `scheme` among `WWW-Authenticate` header
    values, or None when there is none."""
    for header in headers:
        section = _section(header, scheme.lower())
        if section is None:
            continue
        params = _params(section)
        return BearerChallenge(
            resource_metadata=params.get("resource_metadata"),
            scope=params.get("scope"),
            error=params.get("error"),
            error_description=params.get("error_description"),
        )
    return None


def parse_bearer_challenge(headers: Iterable[str]) -> BearerChallenge | None:
    """The first Bearer challenge among `WWW-Authenticate` header values."""
    return parse_challenge(headers, "bearer")

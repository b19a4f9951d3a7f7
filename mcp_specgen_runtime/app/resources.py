"""Resources and resource templates from Python functions.

A static resource has a URI and a function (called on each read) returning
text (`str`), bytes (sent base64 as a blob) or contents dicts. A template has
an RFC 6570 URI template; reading a URI that matches it calls the function
with the template's variables as keyword arguments. Either function may also
take injected parameters (the request's `Context`, dependencies...; see
`injection.py`).

Templates are matched by reversing the expressions the MCP world uses (RFC
6570 levels 1 and 2, plus the `/`, `?` and `&` operators of level 3):
`{var}` takes one path segment (no `/`, `?`, `#`), `{+var}` and `{#var}` take
anything, `{/var}` one `/`-prefixed segment, `{?a,b}`/`{&a}` query
parameters; values are percent-decoded.

A decoded value is refused when it holds more than its expression promises:
a `{var}` or `{/var}` value holding `/` or `\\` (RFC 6570 encodes them in a
simple expansion, so `%2F` cannot smuggle a path in) or being the dot-segment
`.` or `..`, and any value holding a control character (NUL included). Only
`{+var}` and `{#var}` may span segments. A refused URI is not found.
"""

from __future__ import annotations

import base64
import re
import typing
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .calls import runs_in_thread
from .injection import Injection, plan
from .tools import describe

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["RESOURCE_NOT_FOUND", "ResourceSpec", "TemplateSpec", "UriTemplate"]

RESOURCE_NOT_FOUND = -32002
"""The error of a read of a resource the server does not have, up to
2025-11-25; from 2026-07-28 it is -32602, Invalid params (SEP-2164)."""

_EXPRESSION = re.compile(r"\{([+#/?&]?)([A-Za-z0-9_.,%]+)\}")
_SEGMENT_OPERATORS = frozenset({"", "/"})
"""The expressions whose value is one path segment."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SEPARATOR = re.compile(r"[/\\]")


class UriTemplate:
    """An RFC 6570 URI template that can tell which URIs it produces."""

    def __init__(self, template: str) -> None:
        self.template = template
        self.variables: list[str] = []
        self._query: list[str] = []
        self._segments: set[str] = set()
        pattern = ""
        position = 0
        for match in _EXPRESSION.finditer(template):
            pattern += re.escape(template[position : match.start()])
            operator, names = match.group(1), match.group(2).split(",")
            self.variables.extend(names)
            if operator in _SEGMENT_OPERATORS:
                self._segments.update(names)
            if operator in ("?", "&"):
                self._query.extend(names)
                pattern += r"(?:[?&][^#]*)?"
            else:
                part = {"": r"[^/?#]*", "+": r".*", "#": r"#.*", "/": r"/[^/?#]*"}
                for index, name in enumerate(names):
                    separator = "," if index and operator in ("", "+") else ""
                    group = f"(?P<{_group(name)}>{part[operator]})"
                    pattern += re.escape(separator) + group
            position = match.end()
        pattern += re.escape(template[position:])
        self._regex = re.compile(pattern + r"\Z")

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of `uri` if the template produces it, else None
        (also when `bind` refuses a value)."""
        bound = self.bind(uri)
        return bound if isinstance(bound, dict) else None

    def bind(self, uri: str) -> dict[str, str] | str | None:
        """The variables of `uri`; the reason a value is refused (see the
        module docstring) when the URI has the template's shape; None when
        it has not."""
        found = self._regex.match(uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for name in self.variables:
            if name in self._query:
                continue
            raw = found.group(_group(name)).lstrip("/#")
            values[name] = urllib.parse.unquote(raw)
        if self._query:
            query = urllib.parse.urlsplit(uri).query
            values.update(
                (key, value)
                for key, value in urllib.parse.parse_qsl(query)
                if key in self._query
            )
        for name, value in values.items():
            problem = self._problem(name, value)
            if problem is not None:
                return f"{{{name}}} of {self.template} may not hold {problem}"
        return values

    def _problem(self, name: str, value: str) -> str | None:
        if _CONTROL.search(value):
            return "a control character"
        if name in self._segments:
            if _SEPARATOR.search(value):
                return "a path separator (only {+var} may span segments)"
            if value in (".", ".."):
                return "a dot-segment"
        return None


def _group(name: str) -> str:
    return "v_" + re.sub(r"\W", "_", name)


def contents_of(uri: str, mime_type: str | None, value: Any) -> list[dict[str, Any]]:
    """The `contents` of a read, from what a resource function returned."""
    items: list[Any] = (
        [*typing.cast("Iterable[Any]", value)] if isinstance(value, list) else [value]
    )
    contents: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict):
            contents.append({"uri": uri, **typing.cast("dict[str, Any]", item)})
            continue
        entry: dict[str, Any] = {"uri": uri}
        if mime_type is not None:
            entry["mimeType"] = mime_type
        if isinstance(item, bytes | bytearray):
            entry["blob"] = base64.b64encode(bytes(item)).decode("ascii")
        else:
            entry["text"] = str(item)
        contents.append(entry)
    return contents


@dataclass
class ResourceSpec:
    """One static resource."""

    uri: str
    func: Callable[..., Any]
    listing: dict[str, Any]
    mime_type: str | None
    threaded: bool = False
    """Whether reads run in a worker thread (see `calls.py`)."""
    injection: Injection | None = None
    """The parameters injected into each read (None: none)."""

    @classmethod
    def from_function(
        cls,
        uri: str,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        run_in_thread: bool = True,
    ) -> ResourceSpec:
        """The spec of a resource at `uri` read by calling `func()`
        (`run_in_thread=False`: a plain function is called on the loop)."""
        listing: dict[str, Any] = {"uri": uri, "name": name or func.__name__}
        _describe(listing, func, title, description, mime_type)
        threaded = runs_in_thread(func, run_in_thread)
        hints = typing.get_type_hints(func, include_extras=True)
        injection, _ = plan(func, hints, f"resource {uri}")
        return cls(uri, func, listing, mime_type, threaded, injection)


@dataclass
class TemplateSpec:
    """One resource template."""

    template: UriTemplate
    func: Callable[..., Any]
    listing: dict[str, Any]
    mime_type: str | None
    threaded: bool = False
    """Whether reads run in a worker thread (see `calls.py`)."""
    injection: Injection | None = None
    """The parameters injected into each read (None: none)."""

    @classmethod
    def from_function(
        cls,
        uri_template: str,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        run_in_thread: bool = True,
    ) -> TemplateSpec:
        """The spec of a template read by calling `func(**variables)`
        (`run_in_thread=False`: a plain function is called on the loop).

        Raises:
            ValueError: the function lacks a parameter for a variable (an
                injected one cannot take it).
        """
        template = UriTemplate(uri_template)
        hints = typing.get_type_hints(func, include_extras=True)
        injection, others = plan(func, hints, f"resource template {uri_template}")
        params = {param.name for param in others}
        missing = [v for v in template.variables if v not in params]
        if missing:
            raise ValueError(
                f"resource template {uri_template!r}: {func.__name__} has no "
                f"parameter for {missing}"
            )
        listing: dict[str, Any] = {
            "uriTemplate": uri_template,
            "name": name or func.__name__,
        }
        _describe(listing, func, title, description, mime_type)
        threaded = runs_in_thread(func, run_in_thread)
        return cls(template, func, listing, mime_type, threaded, injection)


def _describe(
    listing: dict[str, Any],
    func: Callable[..., Any],
    title: str | None,
    description: str | None,
    mime_type: str | None,
) -> None:
    describe(listing, func, title, description)
    if mime_type is not None:
        listing["mimeType"] = mime_type

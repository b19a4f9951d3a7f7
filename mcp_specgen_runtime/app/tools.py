"""Tools from typed Python functions.

`ToolSpec.from_function` reads a function's signature once: each parameter
(but the injected ones: `Context`, dependencies...; see `injection.py`)
becomes a field of an arguments Struct built with
`msgspec.defstruct`, so defaults, `Annotated[..., msgspec.Meta(...)]`
constraints and msgspec types all carry into the `inputSchema` (msgspec's JSON
Schema) and into validation (`msgspec.convert`, before the call). The
docstring's first paragraph is the description.

Results, as MCP `CallToolResult` builtins:

- `str` → one text block; a content block dict or a list of them → as is;
- any other typed return (a Struct, dataclass, TypedDict, dict, list,
  number...) → `structuredContent` and a text block holding its JSON; its
  `outputSchema` comes from the return annotation (non-object values are
  wrapped as `{"result": value}`, as the specification asks for objects), and
  the value is checked against the annotation before it is sent. NaN and
  ±Infinity anywhere in it are refused (a tool error): JSON has no such
  numbers, and msgspec would send them as `null`.

Bad arguments are a tool execution error (`isError: true`) whose text says
which argument and why, so a model can correct itself; an unknown tool is a
protocol error (-32602), raised by the registry.
"""

from __future__ import annotations

import inspect
import math
import re
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from .calls import runs_in_thread
from .injection import Injection, plan

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["ToolSpec", "check_tool_name"]

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
"""The tool names the specification allows (2025-11-25 and later)."""

_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


def check_tool_name(name: str) -> str:
    """`name` if the specification allows it.

    Raises:
        ValueError: 1-128 characters of ASCII letters, digits, `_`, `-`, `.`.
    """
    if not TOOL_NAME.match(name):
        raise ValueError(
            f"invalid tool name {name!r}: use 1-128 ASCII letters, digits, "
            "'_', '-' or '.'"
        )
    return name


def description_of(func: Callable[..., Any]) -> str | None:
    """The first paragraph of a docstring, lines joined."""
    doc = inspect.getdoc(func)
    if not doc:
        return None
    return " ".join(doc.split("\n\n", 1)[0].split())


def describe(
    listing: dict[str, Any],
    func: Callable[..., Any],
    title: str | None,
    description: str | None,
) -> None:
    """Add `title` and the description (given, else the docstring's) to a
    tool, prompt or resource listing."""
    text = description or description_of(func)
    if title is not None:
        listing["title"] = title
    if text:
        listing["description"] = text


TASK_SUPPORT = frozenset({"forbidden", "optional", "required"})
"""The values of a tool's `execution.taskSupport`."""
TASK_STARTS = frozenset({"immediate", "explicit"})
"""When a 2026 task call becomes a task: at once, or at `ctx.start_task()`."""


@dataclass
class ToolSpec:
    """One registered tool: its listing and how to call it."""

    name: str
    func: Callable[..., Any]
    arguments: type[msgspec.Struct]
    injection: Injection | None
    """The parameters injected into each call (None: none)."""
    input_schema: dict[str, Any]
    output_type: Any
    output_schema: dict[str, Any] | None
    wraps_result: bool
    listing: dict[str, Any] = field(default_factory=dict[str, Any])
    threaded: bool = False
    """Whether calls run in a worker thread (see `calls.py`)."""
    task_start: str = "immediate"
    """When a 2026 task call becomes a task (`TASK_STARTS`)."""

    @property
    def task_support(self) -> str | None:
        """Its `execution.taskSupport`, None when unset."""
        execution: Any = self.listing.get("execution")
        if not isinstance(execution, dict):
            return None
        value: Any = typing.cast("dict[str, Any]", execution).get("taskSupport")
        return value if isinstance(value, str) else None

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        task_support: str | None = None,
        headers: Mapping[str, str] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        run_in_thread: bool = True,
    ) -> ToolSpec:
        """Build the spec of `func` (see the module docstring).

        `headers` maps parameter names to `x-mcp-header` names (2026).
        `input_schema` replaces the derived `inputSchema` in the listing, as
        is (arguments are still validated against the signature).
        `run_in_thread=False` calls a plain function on the event loop.

        Raises:
            ValueError: a bad tool name, or `*args`/`**kwargs` parameters.
            TypeError: a parameter type msgspec cannot describe, or a
                dependency that cannot be injected (`injection.plan`).
        """
        tool_name = check_tool_name(name or func.__name__)
        hints = typing.get_type_hints(func, include_extras=True)
        fields: list[Any] = []
        injection, params = plan(func, hints, f"tool {tool_name}")
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ValueError(
                    f"tool {tool_name}: *args and **kwargs are not allowed"
                )
            annotation = hints.get(param.name, Any)
            if param.default is inspect.Parameter.empty:
                fields.append((param.name, annotation))
            else:
                fields.append((param.name, annotation, param.default))
        arguments = msgspec.defstruct(
            f"{tool_name.title().replace('-', '').replace('.', '')}Arguments",
            fields,
            kw_only=True,
            forbid_unknown_fields=True,
        )
        derived = _object_schema(arguments)
        schema = dict(input_schema) if input_schema is not None else derived
        for param_name, header in (headers or {}).items():
            prop = schema.get("properties", {}).get(param_name)
            if prop is None:
                raise ValueError(f"tool {tool_name}: no parameter {param_name!r}")
            prop["x-mcp-header"] = header
        output_type = hints.get("return", Any)
        output_schema, wraps = _output_schema(output_type)
        listing: dict[str, Any] = {
            "name": tool_name,
            "inputSchema": schema,
        }
        describe(listing, func, title, description)
        if annotations:
            listing["annotations"] = dict(annotations)
        if icons:
            listing["icons"] = icons
        if task_support is not None:
            listing["execution"] = {"taskSupport": task_support}
        if output_schema is not None:
            listing["outputSchema"] = output_schema
        return cls(
            tool_name,
            func,
            arguments,
            injection,
            schema,
            output_type,
            output_schema,
            wraps,
            listing,
            runs_in_thread(func, run_in_thread),
        )

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any] | str:
        """The keyword arguments of a call, or the reason they do not fit."""
        try:
            parsed = msgspec.convert(arguments or {}, self.arguments)
        except msgspec.ValidationError as exc:
            return f"Invalid arguments for tool {self.name}: {exc}"
        return msgspec.structs.asdict(parsed)

    def result(self, value: Any) -> dict[str, Any]:
        """The `CallToolResult` builtins of what the function returned.

        Raises:
            ValueError: a typed return that does not fit its annotation.
        """
        if isinstance(value, str):
            return {"content": [{"type": "text", "text": value}]}
        if _is_content(value):
            return {"content": [value]}
        if isinstance(value, list):
            items: list[Any] = [*typing.cast("Iterable[Any]", value)]
            if items and all(map(_is_content, items)):
                return {"content": items}
        if self.output_schema is not None:
            try:
                checked = msgspec.convert(
                    msgspec.to_builtins(value), self.output_type, strict=False
                )
            except msgspec.ValidationError as exc:
                raise ValueError(
                    f"tool {self.name} returned a value that does not fit its "
                    f"declared return type: {exc}"
                ) from None
            value = checked
        structured = msgspec.to_builtins(value)
        if self.wraps_result or not isinstance(structured, dict):
            structured = {"result": structured}
        text = msgspec.json.encode(structured).decode()
        # msgspec writes NaN and ±Infinity as null, which breaks the output
        # schema: look for them only when the JSON holds a null at all (a str
        # search: `in` on bytes costs five times as much).
        if "null" in text:
            where = _non_finite(structured, "$")
            if where is not None:
                raise ValueError(
                    f"tool {self.name} returned a value that is not a finite "
                    f"number (NaN or Infinity) at {where}, which JSON cannot carry"
                )
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
        }


def _non_finite(value: Any, path: str) -> str | None:
    """The JSONPath of the first NaN or infinite float in builtins, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in typing.cast("dict[str, Any]", value).items():
            found = _non_finite(item, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(typing.cast("Iterable[Any]", value)):
            found = _non_finite(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _is_content(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    return typing.cast("dict[str, Any]", value).get("type") in _CONTENT_TYPES


def _object_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """msgspec's schema of `struct`, with the struct's own definition at the
    top (MCP wants an object schema there, not a `$ref`)."""
    schema = msgspec.json.schema(struct)
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    own: dict[str, Any] = dict(defs.pop(struct.__name__))
    own.pop("title", None)
    if defs:
        own["$defs"] = defs
    return own


def _output_schema(output_type: Any) -> tuple[dict[str, Any] | None, bool]:
    """The `outputSchema` of a return annotation, and whether values are
    wrapped as `{"result": value}`; (None, False) for text results."""
    if output_type in (Any, str, None, type(None), inspect.Signature.empty):
        return None, False
    if typing.get_origin(output_type) is list or output_type is list:
        args: tuple[Any, ...] = typing.get_args(output_type)
        if args and args[0] is dict:
            return None, False
    try:
        schema = msgspec.json.schema(output_type)
    except TypeError:
        return None, False
    defs: dict[str, Any] = dict(schema.pop("$defs", {}))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        own = dict(defs.pop(ref.removeprefix("#/$defs/")))
        own.pop("title", None)
        schema = own
    if schema.get("type") == "object":
        if defs:
            schema["$defs"] = defs
        return schema, False
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True

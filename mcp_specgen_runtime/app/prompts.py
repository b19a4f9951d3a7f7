"""Prompts from Python functions.

Each parameter is a prompt argument (required unless it has a default; the
specification passes arguments as strings), but the injected ones (the
request's `Context`, dependencies...; see `injection.py`). The function returns a `str`
(one user message), a list of messages (`{"role", "content"}` dicts, or
strings taken as user text), or a dict with `messages` and `description`.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .calls import runs_in_thread
from .injection import Injection, plan
from .tools import describe

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["PromptSpec"]


@dataclass
class PromptSpec:
    """One registered prompt."""

    name: str
    func: Callable[..., Any]
    listing: dict[str, Any]
    required: frozenset[str]
    accepted: frozenset[str]
    injection: Injection | None = None
    """The parameters injected into each call (None: none)."""
    threaded: bool = False
    """Whether calls run in a worker thread (see `calls.py`)."""

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        argument_descriptions: Mapping[str, str] | None = None,
        run_in_thread: bool = True,
    ) -> PromptSpec:
        """The spec of `func` as a prompt (`run_in_thread=False`: a plain
        function is called on the event loop)."""
        prompt_name = name or func.__name__
        arguments: list[dict[str, Any]] = []
        required: set[str] = set()
        hints = typing.get_type_hints(func, include_extras=True)
        injection, params = plan(func, hints, f"prompt {prompt_name}")
        for param in params:
            entry: dict[str, Any] = {"name": param.name}
            if argument_descriptions and param.name in argument_descriptions:
                entry["description"] = argument_descriptions[param.name]
            needed = param.default is inspect.Parameter.empty
            entry["required"] = needed
            if needed:
                required.add(param.name)
            arguments.append(entry)
        listing: dict[str, Any] = {"name": prompt_name}
        describe(listing, func, title, description)
        if arguments:
            listing["arguments"] = arguments
        accepted = frozenset(a["name"] for a in arguments)
        return cls(
            prompt_name,
            func,
            listing,
            frozenset(required),
            accepted,
            injection,
            runs_in_thread(func, run_in_thread),
        )

    def problem(self, arguments: Mapping[str, Any]) -> str | None:
        """Why `arguments` do not fit the prompt, or None."""
        missing = sorted(self.required - arguments.keys())
        if missing:
            return f"prompt {self.name}: missing required arguments {missing}"
        unknown = sorted(arguments.keys() - self.accepted)
        if unknown:
            return f"prompt {self.name}: unknown arguments {unknown}"
        return None

    def result(self, value: Any) -> dict[str, Any]:
        """The `GetPromptResult` builtins of what the function returned."""
        description = self.listing.get("description")
        result: dict[str, Any]
        if isinstance(value, dict) and "messages" in value:
            result = dict(typing.cast("dict[str, Any]", value))
        else:
            items: list[Any] = (
                [*typing.cast("Iterable[Any]", value)]
                if isinstance(value, list)
                else [value]
            )
            result = {"messages": [_message(item) for item in items]}
        if description and "description" not in result:
            result["description"] = description
        return result


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    return dict(item)

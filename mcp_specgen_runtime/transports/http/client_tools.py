"""The HTTP client's memory of tool input schemas, for the 2026 `Mcp-Param-*`
headers.

A 2026 `tools/call` carries the `Mcp-Param-*` headers of its tool's
`x-mcp-header` parameters (`headers.client_param_headers`). `ToolHeaders`
remembers the input schemas of the tools in the 2026 `tools/list` results the
transport passes on, and drops from those results (with a warning) any tool
whose annotations are invalid, as the specification requires. After a
`tools/call` refused with -32020 (`HeaderMismatch`), `refresh` lists the tools
again (requests with string ids of their own, never passed on), so the
transport can send the call again once when its headers changed.
"""

from __future__ import annotations

import itertools
import logging
import typing
from typing import TYPE_CHECKING, Any, Final

import msgspec

from .client_messages import TOOLS_LIST, envelope_of
from .headers import client_param_headers, param_header_problem

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping

    from .client_messages import Post, ReplyProbe

__all__ = ["MAX_LIST_PAGES", "ToolHeaders"]

logger = logging.getLogger(__name__)

MAX_LIST_PAGES: Final = 32
"""Pages of `tools/list` the transport reads after a `HeaderMismatch`."""


class ToolHeaders:
    """The input schemas of the listed 2026 tools, by tool name."""

    def __init__(self) -> None:
        self._schemas: dict[str, Mapping[str, Any]] = {}
        self._ids = itertools.count(1)

    def headers_for(self, post: Post) -> dict[str, str]:
        """The `Mcp-Param-*` headers of a `tools/call` (none for a tool not
        listed yet, or arguments that cannot be rendered)."""
        schema = self._schemas.get(post.tool or "")
        if schema is None:
            return {}
        arguments: Any = None
        if len(post.arguments):
            try:
                arguments = msgspec.json.decode(post.arguments)
            except msgspec.DecodeError:
                arguments = None
        try:
            return client_param_headers(
                schema,
                (
                    typing.cast("dict[str, Any]", arguments)
                    if isinstance(arguments, dict)
                    else None
                ),
            )
        except ValueError:
            return {}

    def note_listing(self, message: bytes, found: list[ReplyProbe]) -> bytes:
        """Remember the input schemas of the tools a 2026 `tools/list` answer
        lists; the answer, less the tools whose `x-mcp-header` annotations are
        invalid."""
        if len(found) != 1 or not len(found[0].result):
            return message
        try:
            decoded: Any = msgspec.json.decode(message)
        except msgspec.DecodeError:
            return message
        result: Any = typing.cast("dict[str, Any]", decoded).get("result")
        if not isinstance(result, dict):
            return message
        members = typing.cast("dict[str, Any]", result)
        tools = _listed(members.get("tools"))
        if tools is None:
            return message
        kept = self._remember(tools)
        if len(kept) == len(tools):
            return message
        members["tools"] = kept
        return msgspec.json.encode(decoded)

    async def refresh(
        self,
        post: Post,
        fetch: Callable[[bytes], Awaitable[dict[str, Any] | None]],
    ) -> bool:
        """List the tools again for the 2026 `tools/call` in `post`, each page
        with `fetch` (which POSTs a request and returns its response); whether
        the call's headers changed.

        Raises:
            TransportError: as `fetch`.
        """
        if post.tool is None or post.version is None:
            return False
        before = self.headers_for(post)
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            params: dict[str, Any] = {"_meta": envelope_of(post.params)}
            if cursor is not None:
                params["cursor"] = cursor
            request_id = f"mcp-codegen-http-{next(self._ids)}"
            reply = await fetch(
                msgspec.json.encode(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": TOOLS_LIST,
                        "params": params,
                    }
                )
            )
            result: Any = (reply or {}).get("result")
            if not isinstance(result, dict):
                break
            members = typing.cast("dict[str, Any]", result)
            tools = _listed(members.get("tools"))
            if tools is not None:
                self._remember(tools)
            cursor = members.get("nextCursor")
            if not isinstance(cursor, str):
                break
        return self.headers_for(post) != before

    def _remember(self, tools: list[Any]) -> list[Any]:
        kept: list[Any] = []
        for tool in tools:
            if not isinstance(tool, dict):
                kept.append(tool)
                continue
            members = typing.cast("dict[str, Any]", tool)
            name: Any = members.get("name")
            schema: Any = members.get("inputSchema")
            if isinstance(schema, dict):
                plain = typing.cast("dict[str, Any]", schema)
                problem = param_header_problem(plain)
                if problem is not None:
                    logger.warning("tool %r dropped: %s", name, problem)
                    continue
                if isinstance(name, str):
                    self._schemas[name] = plain
            kept.append(tool)
        return kept


def _listed(value: object) -> list[Any] | None:
    if not isinstance(value, list):
        return None
    return [*typing.cast("Iterable[Any]", value)]

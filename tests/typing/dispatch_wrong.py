"""Type-checked, never run: each marked line must be reported by the type checkers."""

from __future__ import annotations

from typing import Any

from mcp_specgen_runtime.client import ClientGroup
from mcp_specgen_runtime.codec.spec import RequestSender
from mcp_specgen_types import v2025_11_25 as v1
from mcp_specgen_types.v2025_11_25 import (
    CallToolResult as Call,
    PaginatedRequestParams as Page,
    ReadResourceRequestParams as Read,
)


class WrongParams(v1.ServerHandlers):
    async def tools_call(self, params: Read) -> Call:  # expect-error
        raise NotImplementedError


class WrongResult(v1.ServerHandlers):
    async def tools_list(self, params: Page) -> Call:  # expect-error
        raise NotImplementedError


async def wrong_call(sender: RequestSender) -> None:
    client = v1.Client(sender)
    await client.call_tool(nam="typo")  # expect-error


class LegacyTyped:
    """A member answering in 2025-11-25 types: the group wants the newest."""

    async def __aenter__(self) -> LegacyTyped:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def list_tools(self) -> v1.ListToolsResult:
        raise NotImplementedError

    async def list_all_tools(self) -> list[v1.Tool]:
        raise NotImplementedError

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - as GroupMember's
    ) -> v1.CallToolResult:
        raise NotImplementedError

    async def list_all_prompts(self) -> list[v1.Prompt]:
        raise NotImplementedError

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> v1.GetPromptResult:
        raise NotImplementedError

    async def list_all_resources(self) -> list[v1.Resource]:
        raise NotImplementedError

    async def read_resource(self, uri: str) -> v1.ReadResourceResult:
        raise NotImplementedError


def wrong_member() -> None:
    ClientGroup({"a": LegacyTyped()})  # expect-error

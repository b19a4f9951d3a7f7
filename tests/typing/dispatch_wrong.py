"""Type-checked, never run: each marked line must be reported by the type checkers."""

from __future__ import annotations

from mcp_codegen_runtime.codec.spec import RequestSender
from mcp_codegen_types import v2025_11_25 as v1
from mcp_codegen_types.v2025_11_25 import (
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

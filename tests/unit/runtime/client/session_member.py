"""A `GroupMember` over a `ClientSession`, typed in the newest revision.

What the one-server `Client` does, in a few lines, so `ClientGroup` is tested
on real sessions (in memory, stdio) before `Client` is merged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, nullcontext
from typing import Any

import anyio

from mcp_codegen_runtime.codec.wire import UNSET
from mcp_codegen_runtime.protocol.client import ClientSession
from mcp_codegen_types import latest


class SessionMember:
    """Opens a session on entry; answers in `mcp_codegen_types.latest` types."""

    def __init__(
        self, open_session: Callable[[], AbstractAsyncContextManager[ClientSession]]
    ) -> None:
        self.open_session = open_session
        self.stack = AsyncExitStack()
        self.session: ClientSession | None = None

    @property
    def typed(self) -> latest.Client:
        assert self.session is not None, "not entered"
        return latest.Client(self.session)

    async def __aenter__(self) -> SessionMember:
        self.session = await self.stack.enter_async_context(self.open_session())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stack.aclose()

    async def list_tools(self) -> latest.ListToolsResult:
        return await self.typed.list_tools()

    async def list_all_tools(self) -> list[latest.Tool]:
        return [t async for page in self._pages("tools") for t in page]

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the protocol's
    ) -> latest.CallToolResult:
        with anyio.fail_after(timeout) if timeout is not None else nullcontext():
            result = await self.typed.call_tool(
                name=name, arguments=UNSET if arguments is None else arguments
            )
        assert isinstance(result, latest.CallToolResult)
        return result

    async def list_all_prompts(self) -> list[latest.Prompt]:
        return [p async for page in self._pages("prompts") for p in page]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> latest.GetPromptResult:
        return await self.typed.get_prompt(
            name=name, arguments=UNSET if arguments is None else arguments
        )

    async def list_all_resources(self) -> list[latest.Resource]:
        return [r async for page in self._pages("resources") for r in page]

    async def read_resource(self, uri: str) -> latest.ReadResourceResult:
        return await self.typed.read_resource(uri=uri)

    async def _pages(self, kind: str) -> AsyncIterator[list[Any]]:
        assert self.session is not None
        capabilities: Any = self.session.server_capabilities
        if kind not in capabilities:
            return  # listing an undeclared capability is empty, not an error
        method = getattr(self.typed, f"list_{kind}")
        cursor: Any = UNSET
        while True:
            page = await method(cursor=cursor)
            yield getattr(page, kind)
            if not page.next_cursor:
                return
            cursor = page.next_cursor

"""`Context`: what a tool, resource or prompt function may ask of its request.

Declare a parameter annotated `Context` and the app passes one in (it is not
part of the tool's input schema). Every call works with clients of either
protocol era: logging follows the client's level, and elicitation, sampling
and roots are one call each (a request over the connection for a legacy
client, an `InputRequiredResult` round for a 2026 one; see
`client_requests`).
"""

from __future__ import annotations

import typing
from typing import Any

from ..client_requests import log_to_client, request_client
from ..jsonrpc import current_request
from ..wire import to_builtins

__all__ = ["Context"]


class Context:
    """The request being served, as a handler function sees it."""

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of the request."""
        return current_request().request_id

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` (when the client asked for it)."""
        await current_request().report_progress(progress, total, message)

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send a log message at the client's level; whether it was sent."""
        return await log_to_client(level, data, logger)

    async def info(self, data: Any) -> bool:
        """`log("info", data)`."""
        return await self.log("info", data)

    async def elicit(
        self, message: str, requested_schema: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the user, through the client, for data of `requested_schema`;
        the `ElicitResult` (`action`, and `content` when accepted)."""
        params = {"message": message, "requestedSchema": requested_schema}
        return await _ask("elicitation/create", params)

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion; the `CreateMessageResult`."""
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        params.update(options)
        return await _ask("sampling/createMessage", params)

    async def list_roots(self) -> list[dict[str, Any]]:
        """The client's roots (`uri`, `name`)."""
        result = await _ask("roots/list", {})
        roots: list[dict[str, Any]] = result.get("roots", [])
        return roots


async def _ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A server→client request with builtins params; the result as builtins."""
    answer: object = await request_client(method, params, object)
    return typing.cast("dict[str, Any]", to_builtins(answer))

"""The generated handler stubs an `App` is served through.

One subclass of the generated `ServerHandlers` per era: 2025-11-25 (the
handshake revisions) and 2026-07-28. Each method asks the app's registry for
builtins and types them with the revision's own result type. 2026 list and
read results say how long a client may cache them: `cacheScope: "private"`,
`ttlMs: 0` (promise nothing; registries can change).

`handlers_for(app)` keeps only the methods the app has something for, so the
session derives the capabilities from what is registered. The handlers see the
app through `Registry`, what they call of it, so this module does not import
`application` (which imports it).
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, Protocol

from mcp_specgen_runtime.codec.wire import UNSET, convert, to_builtins
from mcp_specgen_runtime.jsonrpc.connection import current_request
from mcp_specgen_types import v2025_11_25 as legacy, v2026_07_28 as modern

from ..errors import ErrorCode, RpcError
from .changes import ACKNOWLEDGED, FILTER_FIELDS, Listener, honoured, tell_task
from .resources import RESOURCE_NOT_FOUND

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from mcp_specgen_runtime.codec.spec import Handlers

    from .changes import ChangeFeed
    from .prompts import PromptSpec
    from .resources import ResourceSpec, TemplateSpec
    from .tools import ToolSpec

__all__ = ["LegacyHandlers", "ModernHandlers", "Registry", "handlers_for"]


class Registry(Protocol):
    """What the handlers use of an `App`: its registrations and its serving
    methods (builtins in, builtins out)."""

    @property
    def tools(self) -> Mapping[str, ToolSpec]: ...
    @property
    def resources(self) -> Mapping[str, ResourceSpec]: ...
    @property
    def templates(self) -> Sequence[TemplateSpec]: ...
    @property
    def prompts(self) -> Mapping[str, PromptSpec]: ...
    @property
    def completer(self) -> Callable[..., Any] | None: ...
    @property
    def subscriptions(self) -> bool: ...
    @property
    def changes(self) -> ChangeFeed: ...

    def list_tools(self, cursor: str | None) -> dict[str, Any]: ...
    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> dict[str, Any] | str: ...
    def list_resources(self, cursor: str | None) -> dict[str, Any]: ...
    def list_templates(self, cursor: str | None) -> dict[str, Any]: ...
    async def read_resource(self, uri: str) -> dict[str, Any]: ...
    def list_prompts(self, cursor: str | None) -> dict[str, Any]: ...
    async def get_prompt(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> dict[str, Any]: ...
    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None,
    ) -> dict[str, Any]: ...
    def subscribe(self, uri: str) -> dict[str, Any]: ...
    def unsubscribe(self, uri: str) -> dict[str, Any]: ...
    def offered_changes(self) -> set[str]: ...
    def has_resource(self, uri: str) -> bool: ...
    async def watched_tasks(self, asked: Any) -> dict[str, dict[str, Any]]: ...


NO_CACHE = {"cacheScope": "private", "ttlMs": 0}
"""What 2026 results say about caching: nothing may be cached."""


def _arguments(value: Any) -> dict[str, Any] | None:
    if value is UNSET:
        return None
    if type(value) is dict:  # decoded arguments are builtins already
        return typing.cast("dict[str, Any]", value)
    built: dict[str, Any] = to_builtins(value)
    return built


def _cursor(params: Any) -> str | None:
    cursor = getattr(params, "cursor", UNSET)
    return None if cursor is UNSET else cursor


class LegacyHandlers(legacy.ServerHandlers):
    """The app at 2025-11-25 (and, adapted, the older revisions)."""

    def __init__(self, app: Registry) -> None:
        self.app = app

    async def tools_list(
        self, params: legacy.PaginatedRequestParams
    ) -> legacy.ListToolsResult:
        return convert(self.app.list_tools(_cursor(params)), legacy.ListToolsResult)

    async def tools_call(
        self, params: legacy.CallToolRequestParams
    ) -> legacy.CallToolResult:
        result = await self.app.call_tool(params.name, _arguments(params.arguments))
        if isinstance(result, str):
            return legacy.CallToolResult(content=[legacy.TextContent(text=result)])
        return convert(result, legacy.CallToolResult)

    async def resources_list(
        self, params: legacy.PaginatedRequestParams
    ) -> legacy.ListResourcesResult:
        page = self.app.list_resources(_cursor(params))
        return convert(page, legacy.ListResourcesResult)

    async def resources_templates_list(
        self, params: legacy.PaginatedRequestParams
    ) -> legacy.ListResourceTemplatesResult:
        page = self.app.list_templates(_cursor(params))
        return convert(page, legacy.ListResourceTemplatesResult)

    async def resources_read(
        self, params: legacy.ReadResourceRequestParams
    ) -> legacy.ReadResourceResult:
        result = await self.app.read_resource(params.uri)
        return convert(result, legacy.ReadResourceResult)

    async def prompts_list(
        self, params: legacy.PaginatedRequestParams
    ) -> legacy.ListPromptsResult:
        return convert(self.app.list_prompts(_cursor(params)), legacy.ListPromptsResult)

    async def prompts_get(
        self, params: legacy.GetPromptRequestParams
    ) -> legacy.GetPromptResult:
        result = await self.app.get_prompt(params.name, _arguments(params.arguments))
        return convert(result, legacy.GetPromptResult)

    async def logging_set_level(
        self, params: legacy.SetLevelRequestParams
    ) -> legacy.EmptyResult:
        # The session remembers the level; log_to_client honours it.
        return legacy.EmptyResult()

    async def completion_complete(
        self, params: legacy.CompleteRequestParams
    ) -> legacy.CompleteResult:
        result = await self.app.complete(*_completion_request(params))
        return convert(result, legacy.CompleteResult)

    async def resources_subscribe(
        self, params: legacy.SubscribeRequestParams
    ) -> legacy.EmptyResult:
        self.app.subscribe(params.uri)
        self.app.changes.subscribe(current_request().connection, params.uri)
        return legacy.EmptyResult()

    async def resources_unsubscribe(
        self, params: legacy.UnsubscribeRequestParams
    ) -> legacy.EmptyResult:
        self.app.unsubscribe(params.uri)
        self.app.changes.unsubscribe(current_request().connection, params.uri)
        return legacy.EmptyResult()


class ModernHandlers(modern.ServerHandlers):
    """The app at 2026-07-28 (and, adapted, the draft)."""

    def __init__(self, app: Registry) -> None:
        self.app = app

    async def tools_list(
        self, params: modern.PaginatedRequestParams
    ) -> modern.ListToolsResult:
        page = {**self.app.list_tools(_cursor(params)), **NO_CACHE}
        return convert(page, modern.ListToolsResult)

    async def tools_call(
        self, params: modern.CallToolRequestParams
    ) -> modern.CallToolResultResponseResult:
        result = await self.app.call_tool(params.name, _arguments(params.arguments))
        if isinstance(result, str):
            return modern.CallToolResult(content=[modern.TextContent(text=result)])
        return convert(result, modern.CallToolResult)

    async def resources_list(
        self, params: modern.PaginatedRequestParams
    ) -> modern.ListResourcesResult:
        page = {**self.app.list_resources(_cursor(params)), **NO_CACHE}
        return convert(page, modern.ListResourcesResult)

    async def resources_templates_list(
        self, params: modern.PaginatedRequestParams
    ) -> modern.ListResourceTemplatesResult:
        page = {**self.app.list_templates(_cursor(params)), **NO_CACHE}
        return convert(page, modern.ListResourceTemplatesResult)

    async def resources_read(
        self, params: modern.ReadResourceRequestParams
    ) -> modern.ReadResourceResultResponseResult:
        try:
            read = await self.app.read_resource(params.uri)
        except RpcError as exc:
            if exc.code != RESOURCE_NOT_FOUND:
                raise
            # SEP-2164: from 2026-07-28 an unknown resource is Invalid params.
            raise RpcError(ErrorCode.INVALID_PARAMS, exc.message, exc.data) from None
        return convert({**read, **NO_CACHE}, modern.ReadResourceResult)

    async def prompts_list(
        self, params: modern.PaginatedRequestParams
    ) -> modern.ListPromptsResult:
        page = {**self.app.list_prompts(_cursor(params)), **NO_CACHE}
        return convert(page, modern.ListPromptsResult)

    async def prompts_get(
        self, params: modern.GetPromptRequestParams
    ) -> modern.GetPromptResultResponseResult:
        result = await self.app.get_prompt(params.name, _arguments(params.arguments))
        return convert(result, modern.GetPromptResult)

    async def completion_complete(
        self, params: modern.CompleteRequestParams
    ) -> modern.CompleteResult:
        result = await self.app.complete(*_completion_request(params))
        return convert(result, modern.CompleteResult)

    async def subscriptions_listen(
        self, params: modern.SubscriptionsListenRequestParams
    ) -> modern.SubscriptionsListenResult:
        """Acknowledge the honoured part of the filter, then forward the
        matching list_changed notifications until cancelled or ended."""
        request = current_request()
        asked = to_builtins(params.notifications)
        accepted = honoured(asked, self.app.offered_changes(), self.app.has_resource)
        tasks = await self.app.watched_tasks(asked.get("taskIds"))
        if tasks:
            accepted["taskIds"] = list(tasks)
        listener = Listener(
            request.connection,
            request.request_id,
            {kind for kind, field in FILTER_FIELDS.items() if field in accepted},
            frozenset(accepted.get("resourceSubscriptions", ())),
            frozenset(tasks),
        )
        await request.notify(
            ACKNOWLEDGED, {"notifications": accepted, "_meta": listener.meta}
        )
        self.app.changes.add(listener)
        for task in tasks.values():  # where they are now: no change is missed
            await tell_task(listener, task)
        try:
            await listener.ended.wait()
        finally:
            self.app.changes.discard(listener)
        return modern.SubscriptionsListenResult(
            meta=modern.SubscriptionsListenResultMetaObject(
                subscription_id=request.request_id
            )
        )


def _completion_request(
    params: Any,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """The ref, argument and resolved arguments of a `completion/complete`."""
    context = getattr(params, "context", UNSET)
    arguments = None if context is UNSET else getattr(context, "arguments", UNSET)
    return (
        to_builtins(params.ref),
        to_builtins(params.argument),
        None if arguments is UNSET else to_builtins(arguments),
    )


_GROUPS = {
    "tools": ("tools_list", "tools_call"),
    "resources": ("resources_list", "resources_read", "resources_templates_list"),
    "prompts": ("prompts_list", "prompts_get"),
    "logging": ("logging_set_level",),
    "completions": ("completion_complete",),
    "subscriptions": ("resources_subscribe", "resources_unsubscribe"),
    "listen": ("subscriptions_listen",),
}


def handlers_for(app: Registry) -> list[Handlers]:
    """Both eras' handlers, with only the methods `app` has something for."""
    wanted = {"logging", "listen"}
    if app.tools:
        wanted.add("tools")
    if app.resources or app.templates:
        wanted.add("resources")
    if app.prompts:
        wanted.add("prompts")
    if app.completer is not None and (app.prompts or app.templates):
        wanted.add("completions")
    if app.subscriptions and (app.resources or app.templates):
        wanted.add("subscriptions")
    chosen: list[Handlers] = []
    for full in (LegacyHandlers, ModernHandlers):
        base = full.__mro__[1]
        methods = {
            name: vars(full)[name]
            for group in wanted
            for name in _GROUPS[group]
            if name in vars(full)
        }
        methods["__init__"] = full.__init__
        methods["__doc__"] = full.__doc__
        trimmed: Any = type(full.__name__, (base,), methods)
        chosen.append(trimmed(app))
    return chosen

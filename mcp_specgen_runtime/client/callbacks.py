"""Server→client requests answered by plain callables, and the notifications
a `Client` routes to its callbacks (progress per call, log messages)."""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from mcp_specgen_runtime.codec.conversion import fit
from mcp_specgen_runtime.errors import MethodNotFoundError
from mcp_specgen_types import latest

from .listen import ACKNOWLEDGED
from .listings import LIST_CHANGED

if TYPE_CHECKING:
    from mcp_specgen_runtime.jsonrpc.serving import Handler

    from .listen import Listen

__all__ = [
    "ElicitationCallback",
    "LogCallback",
    "Notifications",
    "ProgressCallback",
    "ResourceUpdatedCallback",
    "RootsOption",
    "SamplingCallback",
    "callback_handlers",
]

SamplingCallback = Callable[
    [latest.CreateMessageRequestParams], Awaitable[latest.CreateMessageResult]
]
"""Answers `sampling/createMessage`."""
ElicitationCallback = Callable[
    [latest.ElicitRequestParams], Awaitable[latest.ElicitResult]
]
"""Answers `elicitation/create` (fields left out get their `default`)."""
RootsOption = (
    Sequence[latest.Root | str] | Callable[[], Awaitable[Sequence[latest.Root]]]
)
"""The roots offered: a list (of `Root`s or URIs), or a function giving them."""
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
"""Called with (progress, total, message) for each progress notification."""
LogCallback = Callable[[latest.LoggingMessageNotificationParams], Awaitable[None]]
"""Called with each `notifications/message`."""
ResourceUpdatedCallback = Callable[[str], Awaitable[None]]
"""Called with the URI of each `notifications/resources/updated`."""

T = TypeVar("T")

PROGRESS = "notifications/progress"
MESSAGE = "notifications/message"
RESOURCE_UPDATED = "notifications/resources/updated"
TASK_STATUS = frozenset({"notifications/tasks/status", "notifications/tasks"})
"""A task's status: 2025-11-25's notification, and the 2026 extension's."""


def callback_handlers(
    *,
    sampling: SamplingCallback | None = None,
    elicitation: ElicitationCallback | None = None,
    roots: RootsOption | None = None,
) -> latest.ClientHandlers | None:
    """`ClientHandlers` of the newest revision serving exactly the callables
    given (so the client declares just those capabilities); None for none."""
    namespace: dict[str, Any] = {}
    if sampling is not None:
        answer_sampling = sampling

        async def sampling_create_message(
            self: Any, params: latest.CreateMessageRequestParams
        ) -> latest.CreateMessageResult:
            return await answer_sampling(params)

        namespace["sampling_create_message"] = sampling_create_message
    if elicitation is not None:
        answer_elicitation = elicitation

        async def elicitation_create(
            self: Any, params: latest.ElicitRequestParams
        ) -> latest.ElicitResult:
            return await answer_elicitation(params)

        namespace["elicitation_create"] = elicitation_create
    if roots is not None:
        offered = roots

        async def roots_list(
            self: Any, params: latest.ListRootsRequestParams
        ) -> latest.ListRootsResult:
            found = await offered() if callable(offered) else offered
            listed = [
                r if isinstance(r, latest.Root) else latest.Root(uri=r) for r in found
            ]
            return _fitted(
                {"roots": [msgspec.to_builtins(r) for r in listed]},
                latest.ListRootsResult,
            )

        namespace["roots_list"] = roots_list
    if not namespace:
        return None
    handlers_type = type("CallbackHandlers", (latest.ClientHandlers,), namespace)
    return typing.cast("latest.ClientHandlers", handlers_type())


def _fitted(value: Any, target: type[T]) -> T:
    from mcp_specgen_runtime.protocol.adapt import RESULT_FILL

    found: T = fit(value, target, label=target.__name__, fill=RESULT_FILL).value
    return found


class _Progress(msgspec.Struct):
    progress_token: str | int = msgspec.field(name="progressToken")
    progress: float
    total: float | UnsetType = UNSET
    message: str | UnsetType = UNSET


class _Updated(msgspec.Struct):
    uri: str


class Notifications:
    """The connection's handler wrapped: progress of a call in flight goes to
    its callback, log messages to `on_log`, list changes to `on_list_changed`
    (then to `inner`), resource updates to `on_resource_updated`, task
    statuses to `on_task_status` (then to `inner`), 2026 acknowledgments to
    `listen`, the rest to `inner`. A notification of a
    2026 subscription that is no longer current is dropped."""

    def __init__(
        self,
        inner: Handler | None,
        on_log: LogCallback | None,
        on_list_changed: Callable[[str], Awaitable[None]] | None = None,
        on_resource_updated: ResourceUpdatedCallback | None = None,
    ) -> None:
        self.inner = inner
        self.on_log = on_log
        self.on_list_changed = on_list_changed
        self.on_resource_updated = on_resource_updated
        self.listen: Listen | None = None
        self.on_task_status: Callable[[dict[str, Any]], Awaitable[None]] | None = None
        self.progress: dict[str | int, ProgressCallback] = {}

    async def __call__(self, method: str, params: bytes | None) -> bytes | None:
        """Serve one message from the server."""
        if method == PROGRESS and params is not None:
            try:
                found = msgspec.json.decode(params, type=_Progress)
            except msgspec.DecodeError:
                found = None
            callback = (
                None if found is None else self.progress.get(found.progress_token)
            )
            if found is not None and callback is not None:
                total = None if isinstance(found.total, UnsetType) else found.total
                message = (
                    None if isinstance(found.message, UnsetType) else found.message
                )
                await callback(found.progress, total, message)
                return None
        if method == MESSAGE and params is not None and self.on_log is not None:
            body: Any = msgspec.json.decode(params)
            await self.on_log(_fitted(body, latest.LoggingMessageNotificationParams))
            return None
        if method in TASK_STATUS and self.on_task_status is not None:
            try:
                status: Any = msgspec.json.decode(params or b"{}")
            except msgspec.DecodeError:
                status = None
            if isinstance(status, dict):
                await self.on_task_status(typing.cast("dict[str, Any]", status))
        if method == ACKNOWLEDGED and self.listen is not None:
            self.listen.acknowledged(params)
            return None
        kind = LIST_CHANGED.get(method)
        if kind is not None or method == RESOURCE_UPDATED:
            if self.listen is not None and not self.listen.delivers(params):
                return None  # a stream being replaced: its successor tells
        if kind is not None and self.on_list_changed is not None:
            await self.on_list_changed(kind)
        if method == RESOURCE_UPDATED and self.on_resource_updated is not None:
            try:
                updated = msgspec.json.decode(params or b"{}", type=_Updated)
            except msgspec.DecodeError:
                return None  # no URI to report
            await self.on_resource_updated(updated.uri)
            return None
        if self.inner is None:
            if method.startswith("notifications/"):
                return None  # nobody asked to hear of it
            raise MethodNotFoundError(method)
        return await self.inner(method, params)

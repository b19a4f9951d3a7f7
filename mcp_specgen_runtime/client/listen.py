"""A `Client`'s one 2026 `subscriptions/listen` stream.

The stream asks for everything the client wants to hear outside its
requests: the list changes (`toolsListChanged`...) and the resources it
subscribed to (`resourceSubscriptions`, which replaced `resources/subscribe`).
A listen request's filter is fixed, so a new subscription opens a new
stream; once the server acknowledges it, the older streams are cancelled.
Nothing is missed (the new stream is open before the old one closes) and
nothing is heard twice: only the notifications of the current subscription,
the newest one acknowledged, are delivered.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mcp_specgen_runtime.errors import (
    InvalidParamsError,
    McpError,
    RequestTimeoutError,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from anyio.abc import TaskGroup

    from mcp_specgen_runtime.protocol.client import ClientSession

__all__ = ["ACKNOWLEDGED", "CLOSED", "LISTEN", "SUBSCRIPTION_ID", "Listen"]

logger = logging.getLogger(__name__)

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
CLOSED = object()
"""`Listen.current` once every stream is closed."""


class _Meta(msgspec.Struct):
    subscription_id: str | int | None = msgspec.field(
        default=None, name=SUBSCRIPTION_ID
    )


class _Notification(msgspec.Struct):
    """What is read of a subscription's notification: its id, and in an
    acknowledgment the notification types honoured."""

    meta: _Meta | None = msgspec.field(default=None, name="_meta")
    notifications: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])


class _Opening:
    """A stream waiting for its acknowledgment (or its failure)."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.accepted: dict[str, Any] = {}
        self.failure: McpError | None = None


class Listen:
    """The stream of one session; `lists` are the list-change fields asked
    for (`{"toolsListChanged": True}`...)."""

    def __init__(
        self, session: ClientSession, tasks: TaskGroup, lists: Mapping[str, bool]
    ) -> None:
        self.session = session
        self.tasks = tasks
        self.lists = dict(lists)
        self.resources: frozenset[str] = frozenset()
        """The resource URIs the current stream carries updates of."""
        self.current: Any = None
        """The id of the subscription whose notifications are delivered
        (None: not known yet, all are; `CLOSED`: none is)."""
        self._newest: Any = None
        self._streams: list[anyio.CancelScope] = []
        self._opening: _Opening | None = None
        self._lock = anyio.Lock()

    def start(self, timeout: float | None) -> None:
        """Open the stream of the list changes in the background: a server
        that sends no acknowledgment within `timeout` still sends changes."""
        if self.lists:
            self.tasks.start_soon(self._first, timeout)

    async def _first(self, timeout: float | None) -> None:  # noqa: ASYNC109
        try:
            await self._reopen(self.resources, timeout, first=True)
        except McpError as exc:
            logger.info("%s refused: %s", LISTEN, exc)

    async def subscribe(
        self,
        uri: str,
        timeout: float | None,  # noqa: ASYNC109
    ) -> None:
        """Re-open the stream with `uri` among its resources.

        Raises:
            InvalidParamsError: the acknowledgment left `uri` out.
            RequestTimeoutError: no acknowledgment within `timeout`.
            RpcError: the server refused the stream.
        """
        accepted = await self._reopen(self.resources | {uri}, timeout)
        if uri not in accepted:
            raise InvalidParamsError(
                LISTEN, f"the server did not accept a subscription to {uri!r}"
            )

    async def unsubscribe(
        self,
        uri: str,
        timeout: float | None,  # noqa: ASYNC109
    ) -> None:
        """Re-open the stream without `uri` (or close it, when nothing is left)."""
        await self._reopen(self.resources - {uri}, timeout)

    def delivers(self, params: bytes | None) -> bool:
        """Whether a notification is the current subscription's (or of no
        subscription: a legacy server's)."""
        found = _subscription_of(params)
        return found is None or self.current is None or found == self.current

    def acknowledged(self, params: bytes | None) -> None:
        """A subscription is open: the newest one acknowledged is current."""
        body = _read(params)
        found = None if body is None else _id_of(body)
        if body is None or found is None or not _newer(found, self._newest):
            return
        self.current = self._newest = found
        opening = self._opening
        if opening is not None and not opening.done.is_set():
            opening.accepted = body.notifications
            opening.done.set()

    async def _reopen(
        self,
        resources: frozenset[str],
        timeout: float | None,  # noqa: ASYNC109
        *,
        first: bool = False,
    ) -> list[str]:
        """Open a stream asking for `resources`; the URIs it accepted. The
        `first` stream is kept without an acknowledgment, and not opened
        when a subscription already opened one."""
        async with self._lock:
            if first and self._streams:
                return []
            wanted: dict[str, Any] = dict(self.lists)
            if resources:
                wanted["resourceSubscriptions"] = sorted(resources)
            if not wanted:
                self._cancel_all_but(None)
                self.current, self.resources = CLOSED, resources
                return []
            opening = self._opening = _Opening()
            scope = self._open(wanted, opening)
            try:
                with anyio.fail_after(timeout):
                    await opening.done.wait()
            except TimeoutError:
                if first:
                    return []
                scope.cancel()
                assert timeout is not None
                raise RequestTimeoutError(LISTEN, None, timeout) from None
            finally:
                self._opening = None
            if opening.failure is not None:
                raise opening.failure
            self._cancel_all_but(scope)
            accepted: Any = opening.accepted.get("resourceSubscriptions", [])
            kept = [u for u in accepted if isinstance(u, str)]
            self.resources = frozenset(kept)
            return kept

    def _open(self, wanted: dict[str, Any], opening: _Opening) -> anyio.CancelScope:
        scope = anyio.CancelScope()
        self._streams.append(scope)
        self.tasks.start_soon(self._hold, wanted, scope, opening)
        return scope

    def _cancel_all_but(self, kept: anyio.CancelScope | None) -> None:
        for scope in self._streams:
            if scope is not kept:
                scope.cancel()
        self._streams = [] if kept is None else [kept]

    async def _hold(
        self, wanted: dict[str, Any], scope: anyio.CancelScope, opening: _Opening
    ) -> None:
        """Hold one stream open until cancelled, or ended by the server."""
        with scope:
            try:
                await self.session.request(
                    LISTEN, {"notifications": wanted}, dict, timeout=None
                )
                logger.info("the server ended a subscription")
            except McpError as exc:  # refused, or ended with the connection
                if not opening.done.is_set():
                    opening.failure = exc
                    opening.done.set()
                logger.info("%s ended: %s", LISTEN, exc)
        if scope in self._streams:
            self._streams.remove(scope)


def _read(params: bytes | None) -> _Notification | None:
    try:
        return msgspec.json.decode(params or b"{}", type=_Notification)
    except msgspec.DecodeError:
        return None


def _id_of(body: _Notification) -> str | int | None:
    return None if body.meta is None else body.meta.subscription_id


def _subscription_of(params: bytes | None) -> str | int | None:
    """The `_meta` subscription id of a notification, or None."""
    body = _read(params)
    return None if body is None else _id_of(body)


def _newer(found: Any, current: Any) -> bool:
    """Whether subscription `found` was opened after `current` (this
    client's ids grow; an id of another kind is taken as newer)."""
    if current is None:
        return True
    if isinstance(found, int) and isinstance(current, int):
        return found > current
    return bool(found != current)

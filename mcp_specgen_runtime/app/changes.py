"""Telling clients that an app's lists changed, in both protocol eras.

Legacy clients (the handshake revisions): every connection that initialized
is remembered (weakly) and gets `notifications/<kind>/list_changed` when the
app's tools, prompts or resources change; a closed connection is skipped.
Over Streamable HTTP these notifications, sent outside any request, go to
the session's GET stream.

Modern clients (2026-07-28): `subscriptions/listen` opens a subscription.
The server first sends `notifications/subscriptions/acknowledged` with the
notification types it honours, then only those notifications, each carrying
the subscription id (the listen request's id) in
`_meta["io.modelcontextprotocol/subscriptionId"]`, until the request is
cancelled (over HTTP: the client closes the stream) or the app ends its
subscriptions (`App.end_subscriptions()`).

Task status (the 2026 tasks extension, SEP-2663): a subscription whose
filter names `taskIds` (of tasks the caller may see; the request must have
negotiated the extension, else -32021) gets `notifications/tasks`, the
`DetailedTask` as `tasks/get` would answer it, at once and then after each
status change of those tasks.

Bursts are coalesced: the list changes an app makes within `debounce_s`
(50 ms by default; 0: within one turn of the event loop) of the first one
go out as one `list_changed` per list and per client, in both eras, once
that window has passed (`ChangeFeed.changed`). `debounce_s=None` sends each
change at once. `App.notify_list_changed` always sends at once.

Resource updates (`App.notify_resource_updated(uri)`) go as
`notifications/resources/updated` to the legacy connections that subscribed
to the URI (`resources/subscribe`) and to the 2026 subscriptions whose
`resourceSubscriptions` named it.
"""

from __future__ import annotations

import asyncio
import logging
import typing
import weakref
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.jsonrpc.connection import request_in_progress
from mcp_specgen_runtime.protocol.session import ServerConnection, ServerSession

from .middleware import MiddlewareChain

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable, Mapping

    from mcp_specgen_runtime.jsonrpc.connection import Peer, RequestId

__all__ = [
    "ACKNOWLEDGED",
    "DEFAULT_DEBOUNCE_S",
    "LIST_KINDS",
    "RESOURCE_UPDATED",
    "SUBSCRIPTION_ID",
    "AppSession",
    "ChangeFeed",
    "Listener",
]

logger = logging.getLogger(__name__)

LIST_KINDS = ("tools", "prompts", "resources")
"""The lists whose changes are announced."""

FILTER_FIELDS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}
"""The `SubscriptionFilter` field asking for each list's changes."""

DEFAULT_DEBOUNCE_S = 0.05
"""Seconds list changes are gathered before their list_changed goes out."""

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TASK_STATUS = "notifications/tasks"
RESOURCE_UPDATED = "notifications/resources/updated"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def list_changed_method(kind: str) -> str:
    """`notifications/<kind>/list_changed`; ValueError for another kind."""
    if kind not in LIST_KINDS:
        raise ValueError(f"unknown list {kind!r}: use one of {', '.join(LIST_KINDS)}")
    return f"notifications/{kind}/list_changed"


class Listener:
    """One open 2026 subscription: where it goes, and what it asked for."""

    def __init__(
        self,
        peer: Peer,
        subscription_id: RequestId,
        kinds: set[str],
        resources: frozenset[str] = frozenset(),
        task_ids: frozenset[str] = frozenset(),
    ):
        self.peer = peer
        self.subscription_id = subscription_id
        self.kinds = kinds
        self.resources = resources
        """The resource URIs whose updates this subscription receives."""
        self.task_ids = task_ids
        """The tasks whose status changes this subscription receives."""
        self.ended = anyio.Event()

    @property
    def meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_ID: self.subscription_id}


class ChangeFeed:
    """The legacy connections and 2026 subscriptions an app tells of changes.

    Args:
        debounce_s: how long `changed` gathers list changes before telling
            (0: the rest of this turn of the event loop; None: no gathering,
            each change is sent at once).
    """

    def __init__(self, debounce_s: float | None = DEFAULT_DEBOUNCE_S) -> None:
        if debounce_s is not None and not debounce_s >= 0:
            raise ValueError(f"debounce_s must be 0 or more: {debounce_s}")
        self.debounce_s = debounce_s
        # The lists changed since the last flush (in order), each with
        # whether legacy connections hear of it, and the flush to come.
        self._pending: dict[str, bool] = {}
        self._flush_due: tuple[asyncio.AbstractEventLoop, asyncio.Handle] | None = None
        self.peers: weakref.WeakSet[Any] = weakref.WeakSet()
        self.subscribed: weakref.WeakKeyDictionary[Any, set[str]] = (
            weakref.WeakKeyDictionary()
        )
        """The resource URIs each legacy connection subscribed to."""
        self.listeners: set[Listener] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def audience(self) -> bool:
        """Whether anyone would hear of a change."""
        return bool(self.listeners) or len(self.peers) > 0

    def remember(self, peer: Peer) -> None:
        """A legacy connection to tell of changes (kept while it lives)."""
        self.peers.add(peer)
        self._note_loop()

    def add(self, listener: Listener) -> None:
        self.listeners.add(listener)
        self._note_loop()

    def discard(self, listener: Listener) -> None:
        self.listeners.discard(listener)

    def end(self) -> None:
        """End every open subscription (each answers its listen request)."""
        for listener in list(self.listeners):
            listener.ended.set()

    def changed(self, kind: str, *, legacy: bool) -> None:
        """The `kind` list changed: send its list_changed (see `publish`)
        once `debounce_s` has passed, one for every change of any list made
        meanwhile. Callable from the serving loop or any other thread."""
        list_changed_method(kind)  # a bad kind fails here, not on the loop
        if self.debounce_s is None:
            self.schedule(self.publish(kind, legacy=legacy))
            return
        self._on_loop(lambda: self._gather(kind, legacy))

    def _gather(self, kind: str, legacy: bool) -> None:
        self._pending[kind] = self._pending.get(kind, False) or legacy
        loop = asyncio.get_running_loop()
        # A flush due on a loop that ended before it ran will never run.
        if self._flush_due is not None and self._flush_due[0] is loop:
            return
        if self.debounce_s:
            handle: asyncio.Handle = loop.call_later(self.debounce_s, self._flush)
        else:
            handle = loop.call_soon(self._flush)
        self._flush_due = (loop, handle)

    def _flush(self) -> None:
        self._flush_due = None
        pending, self._pending = self._pending, {}
        self._start(self._publish_all(pending))

    async def _publish_all(self, pending: Mapping[str, bool]) -> None:
        for kind, legacy in pending.items():
            await self.publish(kind, legacy=legacy)

    async def publish(self, kind: str, *, legacy: bool) -> None:
        """Send `kind`'s list_changed to the subscribers asking for it, and
        (when `legacy`) to every live legacy connection."""
        method = list_changed_method(kind)
        if legacy:
            for peer in list(self.peers):
                if getattr(peer, "closed", False):
                    self.peers.discard(peer)
                    continue
                try:
                    await peer.notify(method, None)
                except Exception:  # a connection going away: forget it
                    logger.debug("%s not sent to a closed connection", method)
                    self.peers.discard(peer)
        for listener in list(self.listeners):
            if kind not in listener.kinds:
                continue
            try:
                await listener.peer.notify(method, {"_meta": listener.meta})
            except Exception:  # the subscription's stream is gone
                logger.debug("%s not sent to subscription", method)

    async def publish_task(self, task_id: str, task: Mapping[str, Any]) -> None:
        """Send a task's `DetailedTask` (builtins) to the subscriptions that
        asked for it."""
        for listener in list(self.listeners):
            if task_id in listener.task_ids:
                await tell_task(listener, task)

    def subscribe(self, peer: Peer, uri: str) -> None:
        """A legacy connection's `resources/subscribe`."""
        self.subscribed.setdefault(peer, set()).add(uri)

    def unsubscribe(self, peer: Peer, uri: str) -> None:
        """A legacy connection's `resources/unsubscribe`."""
        self.subscribed.get(peer, set()).discard(uri)

    async def publish_resource_updated(self, uri: str) -> None:
        """Send `notifications/resources/updated` to whoever subscribed to
        `uri`, in either era."""
        for peer, uris in list(self.subscribed.items()):
            if uri not in uris or getattr(peer, "closed", False):
                continue
            try:
                await peer.notify(RESOURCE_UPDATED, {"uri": uri})
            except Exception:  # a connection going away
                logger.debug("resource update not sent to a closed connection")
        for listener in list(self.listeners):
            if uri not in listener.resources:
                continue
            try:
                await listener.peer.notify(
                    RESOURCE_UPDATED, {"uri": uri, "_meta": listener.meta}
                )
            except Exception:  # the subscription's stream is gone
                logger.debug("resource update not sent to subscription")

    def schedule(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` on the serving loop (this one, or the one that served)."""
        if not self._on_loop(lambda: self._start(work)):
            work.close()

    def _on_loop(self, callback: Callable[[], None]) -> bool:
        """Call `callback` on the serving loop: now when on a loop, else
        soon on the one that served; False when there is none."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            served = self._loop
            if served is None or served.is_closed() or not served.is_running():
                return False
            served.call_soon_threadsafe(callback)
            return True
        callback()
        return True

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _note_loop(self) -> None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None


class AppConnection(ServerConnection):
    """A session handler that runs the app's middleware and remembers the
    legacy connection it serves."""

    def __init__(self, session: AppSession) -> None:
        super().__init__(session)
        self.feed = session.feed
        self.middleware = session.middleware
        self._remembered = False

    async def __call__(self, method: str, params: bytes | None) -> bytes | None:
        if self.middleware:
            serve = super().__call__
            result = await self.middleware.serve(self, method, params, serve)
        else:
            result = await super().__call__(method, params)
        if not self._remembered and self.era == "legacy":
            request = request_in_progress()
            if request is not None:
                self.feed.remember(request.connection)
                self._remembered = True
        return result


class AppSession(ServerSession):
    """The `ServerSession` of an app: its handlers feed the app's changes,
    and its connections serve every message through the app's middleware."""

    def __init__(
        self,
        feed: ChangeFeed,
        *args: Any,
        middleware: MiddlewareChain | None = None,
        **options: Any,
    ) -> None:
        super().__init__(*args, **options)
        self.feed = feed
        self.middleware = MiddlewareChain() if middleware is None else middleware
        """The app's middleware, around every message of every connection."""

    def handler(self) -> ServerConnection:
        return AppConnection(self)

    __call__ = handler


async def tell_task(listener: Listener, task: Mapping[str, Any]) -> None:
    """Send one `notifications/tasks` on a subscription (dropped when its
    stream is gone)."""
    try:
        await listener.peer.notify(TASK_STATUS, {**task, "_meta": listener.meta})
    except Exception:  # the subscription's stream is gone
        logger.debug("task status not sent to subscription")


def honoured(
    asked: Mapping[str, Any],
    offered: set[str],
    known_resource: Callable[[str], bool] = lambda _uri: False,
) -> dict[str, Any]:
    """The accepted `SubscriptionFilter` (builtins): what was asked and offered,
    and the asked `resourceSubscriptions` the app has."""
    accepted: dict[str, Any] = {
        field: True
        for kind, field in FILTER_FIELDS.items()
        if kind in offered and asked.get(field) is True
    }
    uris: Any = asked.get("resourceSubscriptions")
    if isinstance(uris, list):
        kept = [u for u in typing.cast("Iterable[Any]", uris) if isinstance(u, str)]
        kept = [u for u in kept if known_resource(u)]
        if kept:
            accepted["resourceSubscriptions"] = kept
    return accepted

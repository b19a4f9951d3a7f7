"""`Client`: one object for any MCP server, transport and revision.

    async with Client(["python", "server.py"]) as client:
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"message": "hi"})

Results come in the types of the newest dated revision (`mcp_specgen_types.latest`)
whatever the server negotiated: `ClientSession` converts them.
`client.protocol_version` and `client.negotiated` tell what the wire spoke.

Negotiation, in order: a target known to speak a legacy revision (the
process-wide `VersionCache`, keyed by command line or URL) gets `initialize`
at once; a known modern one re-uses its cached `server/discover` result while
its `ttlMs` lasts; an unknown one is probed with `server/discover` for
`probe_timeout` seconds, then `initialize`. The probe's clock runs while the
server starts, so the default (5 s) is about three times the slowest start
measured (the Python SDK's server answers its first request 1.7 s after
spawning); legacy servers answer the unknown method at once, and one that stays
silent costs the 5 s once per target and process.
"""

from __future__ import annotations

import itertools
import logging
import math
import typing
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import anyio
from msgspec import UNSET, UnsetType

from mcp_specgen_runtime.codec.conversion import fit
from mcp_specgen_runtime.codec.spec import Handlers
from mcp_specgen_runtime.codec.wire import to_builtins
from mcp_specgen_runtime.errors import (
    CapabilityError,
    ProtocolError,
    RequestTimeoutError,
)
from mcp_specgen_runtime.protocol.adapt import RESULT_FILL
from mcp_specgen_runtime.protocol.client import ClientSession, VersionCache
from mcp_specgen_types import latest

from .callbacks import (
    ElicitationCallback,
    LogCallback,
    Notifications,
    ProgressCallback,
    ResourceUpdatedCallback,
    RootsOption,
    SamplingCallback,
    callback_handlers,
)
from .listen import Listen
from .listings import ListCache
from .targets import Target, cache_key_of, open_session
from .task_host import TaskHost, host_capabilities
from .task_wire import RawPage, created, declared, task_page, task_supports
from .tasks import (
    TASKS_EXTENSION,
    TaskHandle,
    TaskPage,
    TaskState,
    TaskStatusCallback,
    TaskSupportError,
    TaskWatch,
    extension_meta,
)

if TYPE_CHECKING:
    import os
    from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
    from types import TracebackType
    from typing import Self

    import httpx

    from mcp_specgen_runtime.stores.tasks import TaskStore

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "MAX_PAGES",
    "VERSION_CACHE",
    "Client",
    "Negotiated",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
S = TypeVar("S")


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | UnsetType: ...

    @property
    def ttl_ms(self) -> int: ...


P = TypeVar("P", bound=_Page)

DEFAULT_PROBE_TIMEOUT = 5.0
"""Seconds `server/discover` may take, server start included, before the server
is taken for a legacy one (see the module docstring)."""
MAX_PAGES = 10_000
"""Pages one listing may take (`iter_*`, `list_all_*`): far beyond any real
server, it ends a server whose cursors never do."""
VERSION_CACHE = VersionCache()
"""What each command line or URL spoke, shared by every `Client` of the process."""

_LIST_KEYS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


@dataclass(frozen=True)
class Negotiated:
    """What the wire spoke: the protocol version and its era."""

    version: str
    era: Literal["legacy", "modern"]


def _package_version() -> str:
    # The source's version, not an installed distribution's: the runtime-only
    # install, the full one and a checkout all report the same.
    from .._version import __version__

    return __version__


class Client:
    """A connection to one MCP server, in the newest revision's types.

    Args:
        target: a command (a list, or a string split like a shell) run over
            stdio; an `http(s)://` URL (Streamable HTTP, then HTTP+SSE); an
            `App` or `ServerSession` in this process; or a ready transport.
        name, version: the client's `Implementation` (default: mcp-codegen's).
        versions: the protocol versions allowed (default: every dated one).
        auth, headers: for HTTP targets (`auth`: an `httpx.Auth` such as
            `OAuthClientAuth`).
        timeout: seconds every request waits for its result (None: no
            limit); each call's `timeout=` overrides it.
        probe_timeout: seconds the `server/discover` probe waits.
        on_progress: called with (progress, total, message) for calls that
            name no `on_progress` of their own.
        reset_timeout_on_progress: progress restarts a call's timeout.
        on_log: called with each `notifications/message`.
        on_list_changed: called with "tools", "prompts" or "resources" when
            the server says that list changed (cached listings are dropped
            first); on a 2026 server it opens a `subscriptions/listen` stream
            for the lists the server declares `listChanged` for.
        on_resource_updated: called with the URI of each resource update
            (see `subscribe_resource`).
        log_level: the level of log messages asked for.
        sampling, elicitation, roots: answer the server's requests.
        handlers: `ClientHandlers` (any revision) answering them instead.
        accept_tasks: on a 2026 server offering the tasks extension, every
            `call_tool` declares it, so the server may answer with a task;
            `call_tool` then waits for the task's result (see `tasks`).
        host_tasks: on a 2025-11-25 server, declare `tasks.requests` for
            the `sampling` and `elicitation` callbacks given, so the server
            may send them as tasks (run in the background; see `TaskHost`).
        task_store: where hosted tasks are kept (default: in memory).
        host_task_options: limits of the hosted tasks, `TaskHost` keywords
            (`max_active`, `rate`, `burst`, `purge_interval_s`).
        cache: remembers what each target spoke (default: one per process).
        env, cwd, stderr: for command targets (see `stdio_client`).
        telemetry: True to trace each request with OpenTelemetry (a CLIENT
            span whose context goes to the server in `params._meta`; see
            `protocol.telemetry`; needs the `otel` extra), or the
            `TracerProvider` to trace with.
    """

    def __init__(
        self,
        target: Target,
        *,
        name: str | None = None,
        version: str | None = None,
        versions: Sequence[str] | None = None,
        auth: httpx.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = 60.0,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool = False,
        on_log: LogCallback | None = None,
        on_list_changed: Callable[[str], Awaitable[None]] | None = None,
        on_resource_updated: ResourceUpdatedCallback | None = None,
        log_level: latest.LoggingLevel | None = None,
        sampling: SamplingCallback | None = None,
        elicitation: ElicitationCallback | None = None,
        roots: RootsOption | None = None,
        handlers: Handlers | Sequence[Handlers] | None = None,
        accept_tasks: bool = False,
        host_tasks: bool = False,
        task_store: TaskStore | None = None,
        host_task_options: Mapping[str, Any] | None = None,
        cache: VersionCache | None = VERSION_CACHE,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Any = "inherit",
        telemetry: object = False,
    ) -> None:
        self.target = target
        self.telemetry = telemetry
        self.timeout = timeout
        self.on_progress = on_progress
        self.reset_timeout_on_progress = reset_timeout_on_progress
        own = callback_handlers(sampling=sampling, elicitation=elicitation, roots=roots)
        hosted = {
            method
            for method, given in (
                ("sampling/createMessage", sampling),
                ("elicitation/create", elicitation),
            )
            if given is not None
        }
        self.accept_tasks = accept_tasks
        self._hosted = hosted if host_tasks else set[str]()
        self._task_store = task_store
        self._host_options = dict(host_task_options or {})
        self._host: TaskHost | None = None
        self._watch = TaskWatch()
        given: list[Handlers] = []
        if isinstance(handlers, Handlers):
            given = [handlers]
        elif handlers is not None:
            given = list(handlers)
        self._options: dict[str, Any] = {
            "name": name or "mcp-specgen",
            "version": version or _package_version(),
            "handlers": given or ([own] if own is not None else []),
            "versions": versions,
            "probe_timeout": probe_timeout,
            "initialize_timeout": timeout,
            "request_timeout": timeout,
            "log_level": log_level,
            "capabilities": host_capabilities(hosted) if host_tasks else None,
            "cache": cache,
            "cache_key": cache_key_of(target) if cache is not None else None,
        }
        self._connect: dict[str, Any] = {
            "auth": auth,
            "headers": headers,
            "env": env,
            "cwd": cwd,
            "stderr": stderr,
        }
        self._on_log = on_log
        self._stack: AsyncExitStack | None = None
        self._session: ClientSession | None = None
        self._on_list_changed = on_list_changed
        self._lists = ListCache()
        self._notifications = Notifications(
            None, on_log, self._list_changed, on_resource_updated
        )
        self._listen: Listen | None = None
        self._tokens = itertools.count(1)
        self._capabilities = latest.ServerCapabilities()
        self._server_info: latest.Implementation | None = None

    # -- lifecycle --

    async def __aenter__(self) -> Self:
        async with AsyncExitStack() as stack:
            session = await stack.enter_async_context(
                open_session(self.target, self._options, **self._connect)
            )
            self._notifications.inner = session.connection.handler
            self._notifications.on_task_status = self._watch.notified
            session.connection.handler = self._notifications
            inner = self._notifications.inner
            if self._hosted and session.era == "legacy" and inner is not None:
                host = TaskHost(
                    inner, self._hosted, self._task_store, **self._host_options
                )
                group = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(group.cancel_scope.cancel)  # runs first on exit
                host.start(group, session.connection.notify)
                self._host = self._notifications.inner = host
            if self.telemetry is not False and self.telemetry is not None:
                from mcp_specgen_runtime.protocol.telemetry import ClientTracer

                provider = None if self.telemetry is True else self.telemetry
                session.around_send = ClientTracer(session, provider)
            self._session = session
            self._capabilities = _fitted(
                session.server_capabilities, latest.ServerCapabilities
            )
            info: Any = session.server_info
            self._server_info = (
                None
                if info is None
                else _fitted(to_builtins(info), latest.Implementation)
            )
            if self.negotiated.era == "modern":
                tasks = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(tasks.cancel_scope.cancel)  # runs first on exit
                listen = Listen(session, tasks, self._listen_for())
                self._listen = self._notifications.listen = listen
                listen.start(self.timeout)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        self._session = self._listen = self._notifications.listen = None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, traceback)

    # -- what was negotiated --

    @property
    def session(self) -> ClientSession:
        """The negotiated `ClientSession` (for a generated typed `Client` of
        another revision: `v2025_11_25.Client(client.session)`).

        Raises:
            RuntimeError: the client is not open.
        """
        if self._session is None:
            raise RuntimeError("the Client is not open: use `async with Client(...)`")
        return self._session

    def view(self, stub: Callable[[ClientSession], S]) -> S:
        """The session behind a generated typed client of any revision:
        `client.view(v2025_11_25.Client)` answers in 2025-11-25's types,
        converted from what the wire spoke (its calls take keywords).

        Raises:
            RuntimeError: the client is not open.
        """
        return stub(self.session)

    @property
    def protocol_version(self) -> str:
        """The protocol version the wire speaks."""
        return self.negotiated.version

    @property
    def negotiated(self) -> Negotiated:
        """The protocol version and era the wire speaks."""
        session = self.session
        assert session.protocol_version is not None and session.era is not None
        return Negotiated(session.protocol_version, session.era)

    @property
    def server_capabilities(self) -> latest.ServerCapabilities:
        """What the server declared, in the newest revision's type."""
        return self._capabilities

    @property
    def server_info(self) -> latest.Implementation | None:
        """The server's name and version (None when it gave none)."""
        return self._server_info

    @property
    def instructions(self) -> str | None:
        """The server's instructions to the model, if any."""
        return self.session.instructions

    # -- requests --

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        result_type: type[T],
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        raw: bool = False,
    ) -> T:
        session = self.session
        limit = self._limit(timeout)

        async def send(body: Any, limit: float | None) -> T:
            if raw:
                return typing.cast(
                    "T", await session.request_raw(method, body, timeout=limit)
                )
            found: T = await session.request(method, body, result_type, timeout=limit)
            return found

        reset = (
            self.reset_timeout_on_progress
            if reset_timeout_on_progress is None
            else reset_timeout_on_progress
        )
        if on_progress is None and not reset:
            return await send(params, limit)
        token = next(self._tokens)
        body = dict(params or {})
        meta: dict[str, Any] = {**body.get("_meta", {}), "progressToken": token}
        body["_meta"] = meta
        with anyio.CancelScope() as scope:
            if limit is not None:
                scope.deadline = anyio.current_time() + limit

            async def progressed(
                progress: float, total: float | None, message: str | None
            ) -> None:
                if reset and limit is not None:
                    scope.deadline = anyio.current_time() + limit
                if on_progress is not None:
                    await on_progress(progress, total, message)

            self._notifications.progress[token] = progressed
            try:
                return await send(body, None)
            finally:
                del self._notifications.progress[token]
        assert limit is not None
        # The engine picked the id (or several, over input rounds): unknown here.
        raise RequestTimeoutError(method, None, limit)

    def _limit(self, timeout: float | UnsetType | None) -> float | None:
        return self.timeout if isinstance(timeout, UnsetType) else timeout

    async def _list(
        self,
        method: str,
        result_type: type[T],
        cursor: str | None,
        timeout: float | UnsetType | None,  # noqa: ASYNC109
    ) -> T:
        params = {} if cursor is None else {"cursor": cursor}
        try:
            return await self._request(method, params, result_type, timeout=timeout)
        except CapabilityError:
            # Listing what the server does not offer finds nothing.
            return _fitted({_LIST_KEYS[method]: []}, result_type)

    async def list_tools(
        self,
        cursor: str | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.ListToolsResult:
        """One page of the server's tools (empty when it offers none)."""
        return await self._list("tools/list", latest.ListToolsResult, cursor, timeout)

    async def list_prompts(
        self,
        cursor: str | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.ListPromptsResult:
        """One page of the server's prompts (empty when it offers none)."""
        return await self._list(
            "prompts/list", latest.ListPromptsResult, cursor, timeout
        )

    async def list_resources(
        self,
        cursor: str | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.ListResourcesResult:
        """One page of the server's resources (empty when it offers none)."""
        return await self._list(
            "resources/list", latest.ListResourcesResult, cursor, timeout
        )

    async def list_resource_templates(
        self,
        cursor: str | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.ListResourceTemplatesResult:
        """One page of the server's resource templates (empty when none)."""
        return await self._list(
            "resources/templates/list",
            latest.ListResourceTemplatesResult,
            cursor,
            timeout,
        )

    async def _pages(
        self, fetch: Callable[[str | None], Awaitable[P]]
    ) -> AsyncGenerator[P]:
        """Page after page until one has no `nextCursor`.

        Raises:
            ProtocolError: a cursor given before (the pages would never end),
                or more than `MAX_PAGES` pages.
        """
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await fetch(cursor)
            yield page
            cursor = _next(page.next_cursor)
            if cursor is None:
                return
            if cursor in seen:
                raise ProtocolError(f"the server gave the cursor {cursor!r} again")
            seen.add(cursor)
        raise ProtocolError(f"the server gave more than {MAX_PAGES} pages")

    async def _all(
        self,
        kind: str,
        fetch: Callable[[str | None], Awaitable[P]],
        items: Callable[[P], Sequence[Any]],
    ) -> list[Any]:
        """Every item of every page, from the cache while it is fresh."""
        cached = self._lists.get(kind)
        if cached is not None:
            return cached
        found: list[Any] = []
        ttl_ms: int | None = None
        async for page in self._pages(fetch):
            found += items(page)
            ttl_ms = page.ttl_ms if ttl_ms is None else min(ttl_ms, page.ttl_ms)
        self._lists.put(kind, found, self._keep_for(kind, ttl_ms or 0))
        return found

    def _keep_for(self, kind: str, ttl_ms: int) -> float:
        """Seconds a listing stays fresh: its `ttlMs` on a modern server; on
        a legacy one, until list_changed when the server promised to send it."""
        if self.negotiated.era == "modern":
            return ttl_ms / 1000
        capability = getattr(
            self._capabilities, "resources" if kind == "templates" else kind
        )
        promised = getattr(capability, "list_changed", UNSET) is True
        return math.inf if promised else 0.0

    def _listen_for(self) -> dict[str, bool]:
        """What a 2026 `subscriptions/listen` stream asks for: the lists the
        server says change, when the user wants to hear of it."""
        if self._on_list_changed is None or self.negotiated.era != "modern":
            return {}
        wanted: dict[str, bool] = {}
        for kind in ("tools", "prompts", "resources"):
            capability = getattr(self._capabilities, kind)
            if getattr(capability, "list_changed", UNSET) is True:
                wanted[f"{kind}ListChanged"] = True
        return wanted

    async def _list_changed(self, kind: str) -> None:
        self._lists.invalidate(kind)
        if self._on_list_changed is not None:
            await self._on_list_changed(kind)

    async def iter_tools(self) -> AsyncGenerator[latest.Tool]:
        """Every tool, page after page."""
        async for page in self._pages(self.list_tools):
            for tool in page.tools:
                yield tool

    async def iter_prompts(self) -> AsyncGenerator[latest.Prompt]:
        """Every prompt, page after page."""
        async for page in self._pages(self.list_prompts):
            for prompt in page.prompts:
                yield prompt

    async def iter_resources(self) -> AsyncGenerator[latest.Resource]:
        """Every resource, page after page."""
        async for page in self._pages(self.list_resources):
            for resource in page.resources:
                yield resource

    async def iter_resource_templates(
        self,
    ) -> AsyncGenerator[latest.ResourceTemplate]:
        """Every resource template, page after page."""
        async for page in self._pages(self.list_resource_templates):
            for template in page.resource_templates:
                yield template

    async def list_all_tools(self) -> list[latest.Tool]:
        """Every tool, all pages (cached as the server allows, see
        `listings`)."""
        return await self._all("tools", self.list_tools, lambda p: p.tools)

    async def list_all_prompts(self) -> list[latest.Prompt]:
        """Every prompt, all pages (cached as the server allows)."""
        return await self._all("prompts", self.list_prompts, lambda p: p.prompts)

    async def list_all_resources(self) -> list[latest.Resource]:
        """Every resource, all pages (cached as the server allows)."""
        return await self._all("resources", self.list_resources, lambda p: p.resources)

    async def list_all_resource_templates(self) -> list[latest.ResourceTemplate]:
        """Every resource template, all pages (cached as the server allows)."""
        return await self._all(
            "templates",
            self.list_resource_templates,
            lambda p: p.resource_templates,
        )

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
    ) -> latest.CallToolResult:
        """Call a tool; a tool's own failure is a result with `is_error`.

        With `accept_tasks`, a 2026 server may answer with a task: the call
        then waits (within the same `timeout`) for the task's result.

        Raises:
            CapabilityError: the server offers no tools.
            RpcError: the server refused the call (e.g. an unknown tool), or
                the task it made of the call failed with this error.
            TaskCancelledError: the task was cancelled.
            RequestTimeoutError: no result within the timeout.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if self.accept_tasks and self._tasks_offered():
            params["_meta"] = extension_meta()
            handle = await self._start_task(params, timeout, on_progress, None)
            try:
                return await handle.result(timeout=timeout)
            finally:
                handle.detach()
        return await self._request(
            "tools/call",
            params,
            latest.CallToolResult,
            timeout=timeout,
            on_progress=on_progress or self.on_progress,
            reset_timeout_on_progress=reset_timeout_on_progress,
        )

    # -- tasks --

    def _tasks_offered(self) -> bool:
        """Whether the 2026 server offers the tasks extension."""
        session = self.session
        if session.era != "modern":
            return False
        extensions: Any = session.server_capabilities.get("extensions")
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions

    def _handle(
        self,
        state: TaskState,
        on_status: TaskStatusCallback | None,
        *,
        immediate: bool = False,
        on_end: Callable[[], None] | None = None,
    ) -> TaskHandle:
        return TaskHandle(
            self.session,
            state,
            timeout=self.timeout,
            on_status=on_status,
            watch=self._watch,
            immediate=immediate,
            on_end=on_end,
        )

    async def _start_task(
        self,
        params: dict[str, Any],
        timeout: float | UnsetType | None,  # noqa: ASYNC109
        on_progress: ProgressCallback | None,
        on_status: TaskStatusCallback | None,
    ) -> TaskHandle:
        """Send the task's `tools/call`; the handle of what the server made
        of it (a finished handle for a result given at once). The progress
        token stays valid for the task's lifetime (2025-11-25), so
        `on_progress` hears of the task until it ends."""
        if "tools" not in self.session.server_capabilities:
            raise CapabilityError("tools/call", "tools", "server")
        on_progress = on_progress or self.on_progress
        on_end: Callable[[], None] | None = None
        if on_progress is not None:
            on_end = self._task_progress(params, on_progress)
        try:
            body = await self._request(
                "tools/call",
                params,
                dict[str, Any],
                timeout=timeout,
                reset_timeout_on_progress=False,
                raw=True,
            )
            state, immediate = created(self.session.era, body)
            return self._handle(state, on_status, immediate=immediate, on_end=on_end)
        except BaseException:
            if on_end is not None:
                on_end()
            raise

    def _task_progress(
        self, params: dict[str, Any], on_progress: ProgressCallback
    ) -> Callable[[], None]:
        """Give the call a progress token routed to `on_progress`; what
        drops it."""
        token = next(self._tokens)
        params["_meta"] = {**params.get("_meta", {}), "progressToken": token}
        progress = self._notifications.progress
        progress[token] = on_progress

        def drop() -> None:
            progress.pop(token, None)

        return drop

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        on_status: TaskStatusCallback | None = None,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle:
        """Start a tool call as a task; its `TaskHandle` (poll, wait, fetch
        the result, cancel).

        2025-11-25: a task-augmented `tools/call` (`task: {ttl}`), sent only
        when the server declares `tasks.requests.tools.call` and the tool's
        `execution.taskSupport` is `optional` or `required`. 2026: the call
        declares the tasks extension and the server decides; a result given
        at once makes a finished handle (`handle.immediate`). `timeout`
        bounds the call that starts the task; the handle's waits take their
        own.

        Raises:
            CapabilityError: the server offers no tools, or no tasks
                (`TaskSupportError`: the tool does not run as a task).
            RpcError: the server refused the call.
            RequestTimeoutError: no answer within the timeout.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        session = self.session
        if session.era == "modern":
            if not self._tasks_offered():
                raise CapabilityError(
                    "tools/call", f"extensions.{TASKS_EXTENSION}", "server"
                )
            params["_meta"] = extension_meta()
        else:
            if not declared(
                session.server_capabilities, "tasks", "requests", "tools", "call"
            ):
                raise CapabilityError(
                    "tools/call", "tasks.requests.tools.call", "server"
                )
            support = (await self._task_support(timeout)).get(name)
            if support not in ("optional", "required"):
                raise TaskSupportError(name, support)
            params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
        return await self._start_task(params, timeout, on_progress, on_status)

    async def _task_support(
        self, timeout: float | UnsetType | None  # noqa: ASYNC109
    ) -> dict[str, str]:
        """Each tool's 2025-11-25 `execution.taskSupport` ("forbidden" when
        absent), read from `tools/list` as the wire has it (the newest
        revision's `Tool` has no `execution`), cached like the tool list."""
        cached = self._lists.get("task_support")
        if cached is not None:
            return dict(cached)
        found: dict[str, str] = {}

        async def page(cursor: str | None) -> Any:
            params = {} if cursor is None else {"cursor": cursor}
            body = await self.session.request_raw(
                "tools/list", params, timeout=self._limit(timeout)
            )
            return RawPage(body)

        async for listed in self._pages(page):
            found |= task_supports(listed.body)
        self._lists.put("task_support", list(found.items()), self._keep_for("tools", 0))
        return found

    def task(
        self, task_id: str, *, on_status: TaskStatusCallback | None = None
    ) -> TaskHandle:
        """A handle on a task started before (e.g. by another process, its
        id kept): nothing is sent until it is used."""
        return self._handle(TaskState(task_id=task_id, status="working"), on_status)

    async def list_tasks(
        self,
        cursor: str | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> TaskPage:
        """One page of the server's tasks (`tasks/list`, 2025-11-25).

        Raises:
            CapabilityError: the server does not declare `tasks.list`; on a
                2026 server always (the tasks extension has no `tasks/list`).
            RpcError: the server refused (a bad cursor: -32602).
        """
        session = self.session
        if session.era == "modern":
            raise CapabilityError(
                "tasks/list",
                "tasks.list (the 2026 tasks extension has no tasks/list)",
                "server",
            )
        if not declared(session.server_capabilities, "tasks", "list"):
            raise CapabilityError("tasks/list", "tasks.list", "server")
        params = {} if cursor is None else {"cursor": cursor}
        body = await session.request_raw(
            "tasks/list", params, timeout=self._limit(timeout)
        )
        return task_page(body)

    async def read_resource(
        self,
        uri: str,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.ReadResourceResult:
        """Read a resource."""
        return await self._request(
            "resources/read", {"uri": uri}, latest.ReadResourceResult, timeout=timeout
        )

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.GetPromptResult:
        """Get a prompt filled with `arguments`."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self._request(
            "prompts/get", params, latest.GetPromptResult, timeout=timeout
        )

    async def complete(
        self,
        ref: latest.PromptReference | latest.ResourceTemplateReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> latest.CompleteResult:
        """Completions for `argument` of a prompt or resource template, typed
        so far as `value` (`context`: the other arguments already given)."""
        params: dict[str, Any] = {
            "ref": to_builtins(ref),
            "argument": {"name": argument, "value": value},
        }
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return await self._request(
            "completion/complete", params, latest.CompleteResult, timeout=timeout
        )

    async def subscribe_resource(
        self,
        uri: str,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> None:
        """Ask for updates of `uri`, which reach `on_resource_updated`: by
        `resources/subscribe` on a legacy server, on the `subscriptions/listen`
        stream (re-opened with `uri` among its `resourceSubscriptions`) on a
        2026 one.

        Raises:
            RpcError: the server refused (on a 2026 server, whose
                acknowledgment leaves `uri` out: `InvalidParamsError`).
            RequestTimeoutError: no answer (or acknowledgment) in time.
        """
        if self._listen is not None:
            await self._listen.subscribe(uri, self._limit(timeout))
            return
        await self._request("resources/subscribe", {"uri": uri}, dict, timeout=timeout)

    async def unsubscribe_resource(
        self,
        uri: str,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> None:
        """Stop `subscribe_resource`."""
        if self._listen is not None:
            await self._listen.unsubscribe(uri, self._limit(timeout))
            return
        await self._request(
            "resources/unsubscribe", {"uri": uri}, dict, timeout=timeout
        )

    async def set_logging_level(
        self,
        level: latest.LoggingLevel,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> None:
        """The least severe log messages wanted: `logging/setLevel` on a
        legacy server, the `_meta` log level of every request on a modern one."""
        session = self.session
        if session.era == "modern":
            session.set_log_level(level)
            return
        await self._request("logging/setLevel", {"level": level}, dict, timeout=timeout)

    async def ping(
        self,
        *,
        timeout: float | UnsetType | None = UNSET,  # noqa: ASYNC109
    ) -> None:
        """Check that the server answers (`ping`; `server/discover` on a
        modern server, which has no ping)."""
        method = "server/discover" if self.session.era == "modern" else "ping"
        await self._request(method, {}, dict, timeout=timeout)


def _next(cursor: str | UnsetType | None) -> str | None:
    return cursor if isinstance(cursor, str) and cursor else None


def _fitted(value: Any, target: type[T]) -> T:
    found: T = fit(value, target, label=target.__name__, fill=RESULT_FILL).value
    return found

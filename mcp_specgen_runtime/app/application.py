"""`App`: an MCP server in a few lines, on top of the generated handler stubs.

    app = App("demo", version="1.0.0")

    @app.tool()
    def echo(message: str) -> str:
        \"\"\"Return the message unchanged.\"\"\"
        return message

    app.run()                     # stdio; app.run("http", port=8000) for HTTP

The app keeps a registry of tools, resources, templates and prompts, and
serves it through generated `ServerHandlers` of 2025-11-25 and 2026-07-28
(`handlers.py`); a `ServerSession` adapts them to every other revision, so one
app answers clients of all six. Capabilities follow what is registered. Lists
are paginated when `page_size` is set, with opaque cursors signed by the app
(a forged or foreign cursor is -32602). Lists are in registration order.

Plain `def` functions run in worker threads, at most `max_threads` (40) at
once, so a slow one does not stall the other clients; `run_in_thread=False`
keeps one on the event loop; a function's `SystemExit` or `KeyboardInterrupt`
is an error of its call (see `calls.py`).

Optional extras: `@app.completion()` answers `completion/complete` for prompt
arguments and template variables; `App(subscriptions=True)` accepts the
legacy `resources/subscribe` and `resources/unsubscribe` for known resources.

List changes: registering or removing (`remove_tool`, `remove_prompt`,
`remove_resource`) a tool, prompt or resource while the app serves tells the
clients (`notify_list_changed`; see `changes.py`): 2026 clients through
`subscriptions/listen`, legacy ones with `notifications/<kind>/list_changed`
(advertised as `listChanged: true`; `App(list_changed=False)` turns both off
for legacy clients). Changes made within `list_changed_debounce_s` (50 ms)
of each other go out as one notification per list and client.

Tasks (2025-11-25): `@app.tool(task_support="optional")` (or "required")
lets a client call the tool as a task: the call answers `CreateTaskResult`
at once, the tool runs in the background, and the client polls `tasks/get`,
fetches `tasks/result`, lists and cancels. "required" refuses a plain call,
"forbidden" (the default when unset) a task-augmented one, both -32601. The
`tasks` capability is advertised only when a tool supports tasks. Tasks live
in `task_store` (memory by default) and are run by `app.tasks`, a
`TaskManager` (`task_options` are its settings: TTLs, poll interval, limits).

Tasks (2026-07-28): the same tools are tasks for 2026 requests that
negotiated the `io.modelcontextprotocol/tasks` extension (SEP-2663,
advertised under `capabilities.extensions` when a tool supports tasks; see
`protocol.tasks.wire2026`): the server decides, so such a call answers
`resultType: "task"`; without the extension "optional" runs as a plain call
and "required" is -32021. `task_start="explicit"` lets the tool gather input
in ordinary `InputRequiredResult` rounds first and become a task when it
calls `await ctx.start_task()`.

Several instances on one Redis: `App(redis="redis://...")` (or
`app.use_redis(url)`; by default `$MCP_REDIS_URL`, and `redis=None` turns
it off whatever the environment says) keeps tasks in a `RedisTaskStore`
(unless `task_store=` names another), takes the list-cursor, task-cursor and
`requestState` keys from a secret every instance on that Redis shares (see
`stores.redis_keys`), and, served over HTTP (`run("http")`, `asgi()`), runs
the HTTP cluster on that Redis: its event store, legacy sessions served by
any instance. `redis_prefix` ("mcp:", or `$MCP_REDIS_PREFIX`) lets two deployments share
one Redis.

Lifespan and injection: `App(lifespan=...)` opens what the app needs while
it serves (`lifespan.py`); tools, prompts and resources get it, the request's
`Context`, the HTTP request and dependencies of their own by annotating
parameters (`injection.py`).

Scopes: `scopes=[...]` on a tool, resource, template or prompt names the
OAuth scopes a caller needs to see it listed and to use it (see `access.py`;
served over HTTP with `auth=`, a call without them is 403
`insufficient_scope`).
"""

from __future__ import annotations

import base64
import os
import typing
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec

from ..errors import ErrorCode, InvalidParamsError, RpcError
from ..protocol.extensions import missing_extension, negotiated
from ..protocol.redis_switch import (
    FROM_ENV,
    FromEnv,
    check_redis,
    resolve_redis_prefix,
    resolve_redis_url,
    share_redis,
)
from ..protocol.session import probed_name
from ..protocol.tasks.limits import RATE_LIMITED
from .access import ScopeTable, insufficient_scope
from .calls import DEFAULT_MAX_THREADS, call, runs_in_thread
from .changes import DEFAULT_DEBOUNCE_S, AppSession, ChangeFeed
from .lifespan import LifespanError, LifespanRunner
from .middleware import MiddlewareChain
from .prompts import PromptSpec
from .resources import RESOURCE_NOT_FOUND, ResourceSpec, TemplateSpec, contents_of
from .tools import TASK_STARTS, TASK_SUPPORT, ToolSpec

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from contextlib import AbstractAsyncContextManager

    from mcp_specgen_runtime.protocol.extensions import Extension
    from mcp_specgen_runtime.protocol.session import ServerSession
    from mcp_specgen_runtime.stores.redis_keys import RedisKeys
    from mcp_specgen_runtime.stores.tasks import TaskRecord, TaskStore

    from .middleware import Middleware

__all__ = ["App"]

F = TypeVar("F", bound="Callable[..., Any]")
C = TypeVar("C", bound="Callable[..., Any]")
M = TypeVar("M", bound="Middleware")

MAX_COMPLETIONS = 100
"""The most values a `completion/complete` result may hold (the spec's)."""


class App:
    """A high-level MCP server; see the module docstring.

    Args:
        name, version: the server's `Implementation`.
        instructions: how to use the server, sent at initialization.
        page_size: items per page of the list methods (None: one page).
        versions: the protocol versions served (default: every dated one).
        subscriptions: accept `resources/subscribe` and `unsubscribe`
            (legacy revisions; the capability says `subscribe: true`).
        list_changed: advertise `listChanged: true` for tools, prompts and
            resources, and send legacy clients their list_changed
            notifications (2026 subscriptions are told regardless).
        list_changed_debounce_s: registrations and removals within this
            many seconds of the first are told as one list_changed per list
            and client (0: within one turn of the event loop; None: each at
            once).
        max_threads: how many plain functions may run at once, each in a
            worker thread (`app.threads.total_tokens` changes it later).
        task_store: where tasks are kept (default: in memory).
        task_options: settings of the `TaskManager` (`default_ttl_ms`,
            `min_ttl_ms`, `max_ttl_ms`, `poll_interval_ms`,
            `max_active_per_owner`, `max_active_total`, `rate`, `burst`,
            `page_size`...).
        redis: the Redis every instance of this server shares (see the
            module docstring): a URL; None for none; left out,
            `$MCP_REDIS_URL` when set.
        redis_prefix: put before every key this app keeps in Redis; left
            out, `$MCP_REDIS_PREFIX` when set, else "mcp:".
        lifespan: a function of the app returning an async context manager,
            entered before serving and exited after; what it yields is
            `ctx.lifespan` (see `lifespan.py`).
        middleware: run around every request and notification, the first
            outermost (see `middleware.py`; `add_middleware`, `on`).
        telemetry: True to trace every message with OpenTelemetry (the
            outermost middleware; see `telemetry.py`; needs the `otel`
            extra), or the `TracerProvider` to trace with.
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.1.0",
        instructions: str | None = None,
        page_size: int | None = None,
        versions: Sequence[str] | None = None,
        subscriptions: bool = False,
        list_changed: bool = True,
        list_changed_debounce_s: float | None = DEFAULT_DEBOUNCE_S,
        max_threads: int = DEFAULT_MAX_THREADS,
        task_store: TaskStore | None = None,
        task_options: Mapping[str, Any] | None = None,
        redis: str | FromEnv | None = FROM_ENV,
        redis_prefix: str | FromEnv = FROM_ENV,
        lifespan: Callable[[App], AbstractAsyncContextManager[Any]] | None = None,
        middleware: Iterable[Middleware] = (),
        telemetry: object = False,
    ) -> None:
        from mcp_specgen_runtime.protocol.tasks.manager import TaskManager

        self.name = name
        self.version = version
        self.instructions = instructions
        self.page_size = page_size
        self.versions = versions
        self.tools: dict[str, ToolSpec] = {}
        self.resources: dict[str, ResourceSpec] = {}
        self.templates: list[TemplateSpec] = []
        self.prompts: dict[str, PromptSpec] = {}
        self.completer: Callable[..., Any] | None = None
        self._completer_threaded = False
        self.subscriptions = subscriptions
        self.list_changed = list_changed
        self.changes = ChangeFeed(list_changed_debounce_s)
        """The legacy connections and 2026 subscriptions told of changes."""
        self._cursor_key = os.urandom(32)
        self.threads = anyio.CapacityLimiter(max_threads)
        """The worker threads plain functions run in."""
        self.access = ScopeTable()
        """The scopes each item needs."""
        self.tasks = TaskManager(task_store, **(task_options or {}))
        """Runs the tools called as tasks (both eras)."""
        self.tasks.add_listener(self._task_changed)
        self.extensions: list[Extension] = []
        """Extensions offered besides tasks (see `add_extension`)."""
        self.redis_url: str | None = None
        """The Redis shared with the other instances (None: none)."""
        self.redis_prefix = resolve_redis_prefix(redis_prefix)
        url = resolve_redis_url(redis)
        if url is not None:
            self.use_redis(url)
        self._lifespan = LifespanRunner(lifespan, self, f"app {name!r}")
        self.middleware = MiddlewareChain(lifespan=self._lifespan)
        """Around every message served, outermost first (see `middleware.py`)."""
        if telemetry is not False and telemetry is not None:
            from .telemetry import TelemetryMiddleware

            provider = None if telemetry is True else telemetry
            self.middleware.add(TelemetryMiddleware(provider))
        for each in middleware:
            self.middleware.add(each)

    def add_middleware(
        self, middleware: Middleware, *, methods: Iterable[str] | None = None
    ) -> None:
        """Add `middleware` inside those already there (see `middleware.py`);
        with `methods`, only calls of those methods pass through it."""
        self.middleware.add(middleware, methods=methods)

    def on(self, *methods: str) -> Callable[[M], M]:
        """Register the decorated function as middleware of `methods` only
        (`@app.on("tools/call")`); with no method, of every message."""

        def register(middleware: M) -> M:
            self.middleware.add(middleware, methods=methods or None)
            return middleware

        return register

    def use_redis(self, url: str, *, prefix: str | None = None) -> None:
        """Share tasks, keys and (over HTTP) sessions with every instance on
        the Redis at `url` (see the module docstring); call it before
        serving. Tasks go to a `RedisTaskStore` under `<prefix>tasks:`
        unless the app was given a `task_store`."""
        self.redis_url = url
        if prefix is not None:
            self.redis_prefix = prefix
        if self.tasks.default_store:
            from mcp_specgen_runtime.stores.redis_tasks import RedisTaskStore

            store = RedisTaskStore(url, prefix=self.redis_prefix + "tasks:")
            self.tasks.use_store(store)

    # -- registration --

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        task_support: str | None = None,
        task_start: str = "immediate",
        headers: Mapping[str, str] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        run_in_thread: bool = True,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a function as a tool (see `tools.py` for the mapping);
        `input_schema` lists a hand-written schema instead of the derived one;
        `run_in_thread=False` calls a plain function on the event loop;
        `scopes` are the OAuth scopes a caller needs to see and call it;
        `task_support` and `task_start` make its calls tasks (`tasks.py`).

        Raises:
            ValueError: an unknown `task_support` or `task_start`.
        """
        if task_support is not None and task_support not in TASK_SUPPORT:
            raise ValueError(
                f"task_support must be one of {sorted(TASK_SUPPORT)}: {task_support!r}"
            )
        if task_start not in TASK_STARTS:
            raise ValueError(f"task_start must be one of {sorted(TASK_STARTS)}")

        def register(func: F) -> F:
            spec = ToolSpec.from_function(
                func,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                icons=icons,
                task_support=task_support,
                headers=headers,
                input_schema=input_schema,
                run_in_thread=run_in_thread,
            )
            spec.task_start = task_start
            if spec.name in self.tools:
                raise ValueError(f"tool {spec.name!r} is already registered")
            self.access.set("tool", spec.name, scopes)
            self.tools[spec.name] = spec
            self._changed("tools")
            return func

        return register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        run_in_thread: bool = True,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a resource (a URI) or a template (a URI with `{...}`);
        `run_in_thread=False` calls a plain function on the event loop;
        `scopes` are the OAuth scopes a caller needs to see and read it."""

        def register(func: F) -> F:
            options: dict[str, Any] = {
                "name": name,
                "title": title,
                "description": description,
                "mime_type": mime_type,
                "run_in_thread": run_in_thread,
            }
            if "{" in uri:
                self.templates.append(TemplateSpec.from_function(uri, func, **options))
                self.access.set("template", uri, scopes)
            else:
                if uri in self.resources:
                    raise ValueError(f"resource {uri!r} is already registered")
                self.resources[uri] = ResourceSpec.from_function(uri, func, **options)
                self.access.set("resource", uri, scopes)
            self._changed("resources")
            return func

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: Mapping[str, str] | None = None,
        run_in_thread: bool = True,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a prompt; `arguments` describes its arguments by name;
        `run_in_thread=False` calls a plain function on the event loop;
        `scopes` are the OAuth scopes a caller needs to see and get it."""

        def register(func: F) -> F:
            spec = PromptSpec.from_function(
                func,
                name=name,
                title=title,
                description=description,
                argument_descriptions=arguments,
                run_in_thread=run_in_thread,
            )
            if spec.name in self.prompts:
                raise ValueError(f"prompt {spec.name!r} is already registered")
            self.access.set("prompt", spec.name, scopes)
            self.prompts[spec.name] = spec
            self._changed("prompts")
            return func

        return register

    def add_extension(self, extension: Extension) -> None:
        """Offer an extension (SEP-2133): its settings are advertised under
        `capabilities.extensions` to 2026 clients, its methods served to the
        requests that negotiated it (see `protocol.extensions`)."""
        self.extensions.append(extension)

    def remove_tool(self, name: str) -> None:
        """Unregister a tool (KeyError when there is none of that name)."""
        del self.tools[name]
        self._changed("tools")

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt (KeyError when there is none of that name)."""
        del self.prompts[name]
        self._changed("prompts")

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource, or a template by its URI template (KeyError
        when there is neither)."""
        if uri in self.resources:
            del self.resources[uri]
        else:
            kept = [t for t in self.templates if t.listing["uriTemplate"] != uri]
            if len(kept) == len(self.templates):
                raise KeyError(uri)
            self.templates = kept
        self._changed("resources")

    # -- list changes --

    async def notify_list_changed(self, kind: str) -> None:
        """Tell the clients that the `kind` list ("tools", "prompts" or
        "resources") changed: 2026 subscriptions that asked for it, and every
        live legacy connection when `list_changed` is set. Connections that
        went away are skipped.

        Raises:
            ValueError: another kind.
        """
        await self.changes.publish(kind, legacy=self.list_changed)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to `uri` that it changed: legacy
        connections that sent `resources/subscribe`, 2026 subscriptions whose
        `resourceSubscriptions` named it."""
        self.middleware.changed("resource", uri)
        await self.changes.publish_resource_updated(uri)

    def has_resource(self, uri: str) -> bool:
        """Whether `uri` is a registered resource or matches a template."""
        return uri in self.resources or any(
            template.template.match(uri) is not None for template in self.templates
        )

    def end_subscriptions(self) -> None:
        """End every open 2026 subscription (each listen request is answered)."""
        self.changes.end()

    def offered_changes(self) -> set[str]:
        """The lists whose changes a 2026 subscription may ask for: the kinds
        the app has something of."""
        offered: set[str] = set()
        if self.tools:
            offered.add("tools")
        if self.prompts:
            offered.add("prompts")
        if self.resources or self.templates:
            offered.add("resources")
        return offered

    def _changed(self, kind: str) -> None:
        """A registry change: tell the clients, when the app is serving any."""
        self.middleware.changed(kind)
        if self.changes.audience:
            self.changes.changed(kind, legacy=self.list_changed)

    def completion(self, *, run_in_thread: bool = True) -> Callable[[C], C]:
        """Register the function answering `completion/complete`.

        It is called as `func(ref, argument, context)`: the request's `ref`
        (`{"type": "ref/prompt", "name": ...}` or `{"type": "ref/resource",
        "uri": ...}`), `argument` (`{"name", "value"}`) and the `arguments`
        already resolved (a dict, maybe empty); sync (in a worker thread
        unless `run_in_thread=False`) or async. It returns the candidate
        values (at most 100 are sent; `total` and `hasMore` say how many
        there were).
        """

        def register(func: C) -> C:
            self.completer = func
            self._completer_threaded = runs_in_thread(func, run_in_thread)
            return func

        return register

    # -- serving (builtins in, builtins out; handlers.py types them) --

    def list_tools(self, cursor: str | None) -> dict[str, Any]:
        """A page of `tools/list`."""
        allows = self.access.allows
        listings = [s.listing for n, s in self.tools.items() if allows("tool", n)]
        return self._page("tools", listings, cursor)

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> dict[str, Any] | str:
        """`tools/call`: an unknown tool is -32602, bad arguments and a
        failing tool are tool execution errors (`isError: true`).

        Returns the `CallToolResult` as builtins, or the text itself when the
        tool answered plain text (the handlers build that one result directly
        in their revision's types, a quarter of the cost of converting it).
        """
        spec = self.tools.get(name)
        if spec is None:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {name}")
        self.access.check("tool", name)
        bound = spec.bind(arguments)
        if isinstance(bound, str):
            return _tool_error(bound)
        try:
            if spec.injection is None:  # the hot path: no extra frame
                value = await call(partial(spec.func, **bound), self._limiter(spec))
            else:
                value = await self._invoke(spec, spec.func, bound)
            return value if isinstance(value, str) else spec.result(value)
        except RpcError:
            raise
        except Exception as exc:
            return _tool_error(f"Error in tool {name}: {exc}")

    def list_resources(self, cursor: str | None) -> dict[str, Any]:
        """A page of `resources/list`."""
        allows = self.access.allows
        listings = [
            s.listing for uri, s in self.resources.items() if allows("resource", uri)
        ]
        return self._page("resources", listings, cursor)

    def list_templates(self, cursor: str | None) -> dict[str, Any]:
        """A page of `resources/templates/list`."""
        listings = [
            t.listing
            for t in self.templates
            if self.access.allows("template", t.listing["uriTemplate"])
        ]
        return self._page("resourceTemplates", listings, cursor)

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """`resources/read`: -32002 for a URI no resource or template has, or
        whose variables a template refuses (the message says why; the 2026
        handlers send -32602)."""
        spec = self.resources.get(uri)
        if spec is not None:
            self.access.check("resource", uri)
            value = await self._invoke(spec, spec.func, {})
            return {"contents": contents_of(uri, spec.mime_type, value)}
        refused: str | None = None
        for template in self.templates:
            variables = template.template.bind(uri)
            if isinstance(variables, dict):
                self.access.check("template", template.listing["uriTemplate"])
                value = await self._invoke(template, template.func, dict(variables))
                return {"contents": contents_of(uri, template.mime_type, value)}
            refused = refused or variables
        message = "Resource not found"
        if refused is not None:
            message += f": {refused}"
        raise RpcError(RESOURCE_NOT_FOUND, message, {"uri": uri})

    def list_prompts(self, cursor: str | None) -> dict[str, Any]:
        """A page of `prompts/list`."""
        allows = self.access.allows
        listings = [s.listing for n, s in self.prompts.items() if allows("prompt", n)]
        return self._page("prompts", listings, cursor)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """`prompts/get`: unknown prompts and bad arguments are -32602."""
        spec = self.prompts.get(name)
        if spec is None:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown prompt: {name}")
        self.access.check("prompt", name)
        given = dict(arguments or {})
        problem = spec.problem(given)
        if problem is not None:
            raise RpcError(ErrorCode.INVALID_PARAMS, problem)
        value = await self._invoke(spec, spec.func, given)
        return spec.result(value)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        """`completion/complete`: the completer's values, at most 100.

        A prompt or template the app does not have is -32602.
        """
        self._check_ref(ref)
        needed = self._ref_scopes(ref)
        if needed and not self.access.holds(needed):
            kind = "prompt" if ref.get("type") == "ref/prompt" else "resource"
            name = str(ref.get("name") or ref.get("uri"))
            raise insufficient_scope(kind, name, needed)
        values: list[str] = []
        if self.completer is not None:
            complete = partial(
                self.completer, dict(ref), dict(argument), dict(context or {})
            )
            limiter = self.threads if self._completer_threaded else None
            values = [str(value) for value in await call(complete, limiter)]
        completion: dict[str, Any] = {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }
        return {"completion": completion}

    async def _invoke(
        self,
        spec: ToolSpec | ResourceSpec | TemplateSpec | PromptSpec,
        func: Callable[..., Any],
        arguments: dict[str, Any],
    ) -> Any:
        """`func(**arguments)` with `spec`'s injected parameters, in a thread
        or on the loop as `spec` says (see `calls.py`)."""
        limiter = self._limiter(spec)
        injection = spec.injection
        if injection is not None:
            if not injection.simple:
                return await injection.invoke(func, arguments, limiter, self._lifespan)
            injection.fill(arguments, self._lifespan)
        return await call(partial(func, **arguments), limiter)

    def running(self) -> AbstractAsyncContextManager[None]:
        """Hold the app's lifespan for an `async with` block: entered unless
        something holds it already, exited after its last holder (see
        `lifespan.py`; the servers and `Client(app)` hold it themselves).

        Raises:
            LifespanError: the lifespan failed to start.
        """
        return self._lifespan.held()

    def _limiter(
        self, spec: ToolSpec | ResourceSpec | TemplateSpec | PromptSpec
    ) -> anyio.CapacityLimiter | None:
        """The threads `spec`'s function runs in, or None for the loop."""
        return self.threads if spec.threaded else None

    def _check_ref(self, ref: Mapping[str, Any]) -> None:
        kind = ref.get("type")
        if kind == "ref/prompt":
            if ref.get("name") not in self.prompts:
                raise RpcError(
                    ErrorCode.INVALID_PARAMS, f"Unknown prompt: {ref.get('name')}"
                )
        elif kind == "ref/resource":
            uri = ref.get("uri")
            known = uri in self.resources or any(
                t.listing["uriTemplate"] == uri for t in self.templates
            )
            if not known:
                raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown resource: {uri}")
        else:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown reference type: {kind}")

    def subscribe(self, uri: str) -> dict[str, Any]:
        """`resources/subscribe`: {} for a resource the app has, else -32602
        (also when the caller lacks its scopes)."""
        self._check_known(uri)
        needed = self._resource_scopes(uri)
        if needed and not self.access.holds(needed):
            raise insufficient_scope("resource", uri, needed)
        return {}

    def unsubscribe(self, uri: str) -> dict[str, Any]:
        """`resources/unsubscribe`: {} for a resource the app has, else -32602."""
        self._check_known(uri)
        return {}

    def _check_known(self, uri: str) -> None:
        known = uri in self.resources or any(
            t.template.match(uri) is not None for t in self.templates
        )
        if not known:
            raise RpcError(
                ErrorCode.INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri}
            )

    # -- pagination --

    def _page(
        self, key: str, items: list[dict[str, Any]], cursor: str | None
    ) -> dict[str, Any]:
        start = 0 if cursor is None else self._open_cursor(key, cursor)
        if self.page_size is None:
            return {key: items[start:]}
        end = start + self.page_size
        page: dict[str, Any] = {key: items[start:end]}
        if end < len(items):
            page["nextCursor"] = self._seal_cursor(key, end)
        return page

    def _cursor_tag(self, body: bytes, tag: bytes | None = None) -> bytes:
        """The signature of a cursor's body; given `tag`, b"" unless it matches."""
        # Imported here: loading OpenSSL's hashes costs a few ms of start-up,
        # and only servers with more than a page of anything sign cursors.
        import hashlib
        import hmac

        expected = hmac.new(self._cursor_key, body, hashlib.sha256).digest()[:16]
        if tag is not None and not hmac.compare_digest(tag, expected):
            return b""
        return expected

    def _seal_cursor(self, key: str, offset: int) -> str:
        body = msgspec.json.encode([key, offset])
        return base64.urlsafe_b64encode(self._cursor_tag(body) + body).decode("ascii")

    def _open_cursor(self, key: str, cursor: str) -> int:
        try:
            raw = base64.b64decode(
                cursor.encode("ascii"), altchars=b"-_", validate=True
            )
            tag, body = raw[:16], raw[16:]
            if not self._cursor_tag(body, tag):
                raise ValueError("bad signature")
            kind, offset = msgspec.json.decode(body, type=tuple[str, int])
            if kind != key or offset < 0:
                raise ValueError("another list's cursor")
        except (ValueError, UnicodeEncodeError, msgspec.DecodeError):
            raise RpcError(
                ErrorCode.INVALID_PARAMS, "Invalid cursor: not one this server issued"
            ) from None
        return offset

    def task_support(self, method: str, params: bytes | None) -> str:
        """A `tools/call`'s `execution.taskSupport` ("forbidden" when unset).

        Raises:
            RpcError: -32602 for params that are not an object, a name that
                is not a string, an unknown tool.
        """
        name = _tool_name(method, params)
        spec = self.tools.get(name)
        if spec is None:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {name}")
        return spec.task_support or "forbidden"

    def task_start(self, method: str, params: bytes | None) -> str:
        """When a 2026 `tools/call` becomes a task: "immediate", or
        "explicit" (at `ctx.start_task()`)."""
        try:
            spec = self.tools.get(_tool_name(method, params))
        except RpcError:
            spec = None  # refused by `task_support`, which runs first
        return "immediate" if spec is None else spec.task_start

    def task_tools(self) -> list[str]:
        """The tools a client may call as a task."""
        return [
            name
            for name, spec in self.tools.items()
            if spec.task_support in ("optional", "required")
        ]

    async def watched_tasks(self, asked: Any) -> dict[str, dict[str, Any]]:
        """The tasks a 2026 `subscriptions/listen` may watch among the
        `taskIds` it asked for (those the caller may `tasks/get`), each with
        its `DetailedTask` now.

        Raises:
            RpcError: -32021 when it asks for any without having negotiated
                the tasks extension; `RATE_LIMITED` when looking the ids up
                (one task operation each) exceeds the caller's rate limit.
        """
        from mcp_specgen_runtime.protocol.tasks.wire2026 import (
            TASKS,
            caller,
            detailed,
        )

        names: object = asked
        if not isinstance(names, list) or not names:
            return {}
        if not negotiated(TASKS):
            raise missing_extension(TASKS)
        owner = caller()
        found: dict[str, dict[str, Any]] = {}
        for task_id in typing.cast("list[object]", names):
            if not isinstance(task_id, str) or task_id in found:
                continue
            try:
                record = await self.tasks.get(owner, task_id)
            except RpcError as exc:
                # Each id costs a lookup; past the limit the listen is refused
                # rather than have the caller's tasks dropped unsaid.
                if exc.code == RATE_LIMITED:
                    raise
                continue  # unknown or not the caller's: not acknowledged
            if record.era == "2026-07-28":
                found[task_id] = detailed(record)
        return found

    async def _task_changed(self, record: TaskRecord) -> None:
        """A task's status changed: tell the 2026 subscriptions watching it."""
        if record.era != "2026-07-28" or not self.changes.listeners:
            return
        from mcp_specgen_runtime.protocol.tasks.wire2026 import detailed

        await self.changes.publish_task(record.task_id, detailed(record))

    def tool_input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's `inputSchema` (for the HTTP server's `Mcp-Param-*` checks)."""
        spec = self.tools.get(name)
        return None if spec is None else spec.input_schema

    def scopes_for(self, method: str, params: Mapping[str, Any]) -> frozenset[str]:
        """The scopes a request needs (for the HTTP server's 403 check):
        those of the tool called, the resource or template read or
        subscribed to, the prompt got, the item completed; none for
        anything else or an unknown item."""
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str):
            return self.access.needed("tool", name)
        if method == "prompts/get" and isinstance(name, str):
            return self.access.needed("prompt", name)
        uri = params.get("uri")
        if method in ("resources/read", "resources/subscribe") and isinstance(uri, str):
            return self._resource_scopes(uri)
        ref: Any = params.get("ref")
        if method == "completion/complete" and isinstance(ref, dict):
            return self._ref_scopes(typing.cast("dict[str, Any]", ref))
        return frozenset()

    def _resource_scopes(self, uri: str) -> frozenset[str]:
        if uri in self.resources:
            return self.access.needed("resource", uri)
        for template in self.templates:
            if template.template.match(uri) is not None:
                return self.access.needed("template", template.listing["uriTemplate"])
        return frozenset()

    def _ref_scopes(self, ref: Mapping[str, Any]) -> frozenset[str]:
        """The scopes of a completion's reference (a prompt or a template)."""
        name, uri = ref.get("name"), ref.get("uri")
        if ref.get("type") == "ref/prompt" and isinstance(name, str):
            return self.access.needed("prompt", name)
        if ref.get("type") == "ref/resource" and isinstance(uri, str):
            return self.access.needed("template", uri) | self._resource_scopes(uri)
        return frozenset()

    # -- running --

    def session(self) -> ServerSession:
        """The `ServerSession` serving this app in every revision."""
        from .handlers import handlers_for

        # The sessions share the app's tasks: each holds the manager, so only
        # the last one to close stops it.
        self.tasks.hold()
        session = AppSession(
            self.changes,
            handlers_for(self),
            name=self.name,
            version=self.version,
            instructions=self.instructions,
            versions=self.versions or _dated_versions(),
            list_changed=self.list_changed,
            tasks=self.tasks,
            task_requests=("tools/call",) if self.task_tools() else (),
            task_support=self.task_support,
            task_start=self.task_start,
            extensions=self.extensions,
            middleware=self.middleware,
        )
        if self.redis_url is not None:
            share_redis(
                session,
                self.redis_url,
                prefix=self.redis_prefix,
                also=self._share_cursor_key,
            )
        return session

    async def _share_cursor_key(self, keys: RedisKeys) -> None:
        from mcp_specgen_runtime.stores.redis_keys import LIST_CURSOR

        self._cursor_key = await keys.key(LIST_CURSOR)

    def asgi(self, **options: Any) -> Any:
        """The app as an ASGI application (Streamable HTTP at `/mcp`);
        `auth=` (a `ResourceServer`) protects it. `options` go to `http_app`
        (the app's Redis, if any, among them)."""
        from ..transports.http.server import http_app

        self._http_options(options)
        return http_app(self._http_session(), **options)

    def _http_session(self) -> ServerSession:
        """The session an HTTP server serves: with a lifespan, held from the
        ASGI lifespan's start-up (a failure fails it) to its shutdown."""
        session = self.session()
        if self._lifespan.factory is not None:
            session.on_start(self._lifespan.enter)
            session.on_close(self._lifespan.exit)
        return session

    def _http_options(self, options: dict[str, Any]) -> None:
        options.setdefault("tool_input_schema", self.tool_input_schema)
        options.setdefault("required_scopes", self.scopes_for)
        if "redis_prefix" in options:
            self.redis_prefix = options["redis_prefix"]
        if "redis" in options:  # a Redis named here is the whole app's
            url = resolve_redis_url(options["redis"])
            if url is not None and url != self.redis_url:
                self.use_redis(url)
        # The app's own choice, None included: the environment was read once.
        options.setdefault("redis", self.redis_url)
        options.setdefault("redis_prefix", self.redis_prefix)

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        **options: Any,
    ) -> None:
        """Serve until the client leaves (stdio) or the process is stopped
        (`transport="http"`: Streamable HTTP at `/mcp`, via uvicorn; `auth=`,
        a `ResourceServer`, protects it).

        `options` go to `serve_stdio` (`max_in_flight`, `max_line_length`)
        or to `serve_http`. With Redis (`use_redis`), a Redis that cannot be
        reached stops the start with one line naming it (`SystemExit`); so
        does a lifespan failing to start (over HTTP, uvicorn's start-up
        fails with its message)."""
        if transport == "stdio":
            import functools

            import anyio

            if self.redis_url is not None:
                check_redis(self.redis_url, prefix=self.redis_prefix)
            try:
                anyio.run(functools.partial(self.serve_stdio, **options))
            except LifespanError as exc:
                raise SystemExit(f"error: {exc}") from exc
        elif transport == "http":
            from ..transports.http.server import serve_http

            self._http_options(options)
            serve_http(self._http_session(), host=host, port=port, **options)
        else:
            raise ValueError(f"unknown transport {transport!r}: use stdio or http")

    async def serve_stdio(
        self, *, max_in_flight: int | None = None, max_line_length: int | None = None
    ) -> None:
        """Serve one client on this process's stdin and stdout, holding the
        app's lifespan from before the first line is read.

        Args:
            max_in_flight: the client's requests served at once; more are
                answered -32603 (default `jsonrpc.DEFAULT_MAX_IN_FLIGHT`).
            max_line_length: bytes one incoming message may hold (default
                `transports.stdio.DEFAULT_MAX_LINE_LENGTH`).

        Raises:
            LifespanError: the lifespan failed to start (nothing was read).
        """
        from mcp_specgen_runtime.jsonrpc.connection import (
            DEFAULT_MAX_IN_FLIGHT,
            Connection,
        )

        from ..transports.stdio import DEFAULT_MAX_LINE_LENGTH, stdio_server

        if max_in_flight is None:
            max_in_flight = DEFAULT_MAX_IN_FLIGHT
        if max_line_length is None:
            max_line_length = DEFAULT_MAX_LINE_LENGTH
        session = self.session()
        async with (
            self._lifespan.held(),
            stdio_server(max_line_length=max_line_length) as transport,
            Connection(
                transport, session.handler(), max_in_flight=max_in_flight
            ) as connection,
        ):
            try:
                await connection.wait_closed()
            finally:
                await session.aclose()


class _ToolName(msgspec.Struct):
    name: Any = None


def _tool_name(method: str, params: bytes | None) -> str:
    """The `name` of a `tools/call`'s raw params.

    Raises:
        InvalidParamsError: params not an object, or a name not a string.
    """
    known, name = probed_name(params)  # the session read them already
    if not known:
        try:
            name = msgspec.json.decode(params or b"{}", type=_ToolName).name
        except msgspec.DecodeError as exc:
            raise InvalidParamsError(method, str(exc)) from None
    if not isinstance(name, str):
        raise InvalidParamsError(method, "name must be a string naming a tool")
    return name


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _dated_versions() -> list[str]:
    import mcp_specgen_types

    return [v for v in mcp_specgen_types.KNOWN_VERSIONS if v != "draft"]

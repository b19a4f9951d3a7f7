"""Protocol version negotiation of an MCP server, for every revision at once.

`ServerSession` takes one handler object per revision it serves (instances of
generated `ServerHandlers` subclasses) and hands out one handler callable per
connection for `Connection`::

    session = ServerSession([V1125Server(), V2026Server()], name="demo", version="1")
    async with Connection(transport, session.handler()) as connection:
        await connection.wait_closed()

Two eras of the protocol are told apart by their method tables:

- legacy (2024-11-05 … 2025-11-25, tables with `initialize`): the client sends
  `initialize`; the session answers it (the offered version when served, else
  the newest legacy one it serves), with capabilities derived from the methods
  the handler implements. Before that, every request but `ping` gets -32600;
  a second `initialize` gets -32600 too. Then requests go to the handler of the
  negotiated revision.
- modern (2026-07-28, draft: tables with `server/discover`): no handshake;
  every request names its version in
  `params._meta["io.modelcontextprotocol/protocolVersion"]`. The session
  answers `server/discover` itself and stamps every modern result with
  `resultType` (if missing) and `_meta["io.modelcontextprotocol/serverInfo"]`.
  A version it does not serve gets -32022 with data
  `{"supported": [...], "requested": ...}`.

Decisions worth knowing:

- The first request of a connection decides its era (like the official Python
  SDK): `initialize` makes it legacy, an enveloped request that is served makes
  it modern (`server/discover` only once its result was built: a failed
  discover leaves the era undecided, as over HTTP). A legacy connection then
  refuses enveloped requests (-32600); a modern one refuses `initialize`
  (-32022, listing the modern versions) and requests without the envelope,
  `ping` included (-32602, as the Python SDK does). 2026-07-28 has no `ping`:
  with the envelope it is -32601.
- A session without modern handlers ignores the envelope altogether (it behaves
  like a legacy-only server, so probing clients fall back to `initialize`).
- A session without legacy handlers answers `initialize` with -32022 listing
  its modern versions (the Python SDK client re-probes with one of them).
- `initialize` and `server/discover` are always answered by the session, never
  by the handlers; `ping` before the handshake is answered `{}` by the engine.
- Versions are listed oldest first (`"draft"` after every dated revision).
- The discover result says `cacheScope: "public"` (it holds no user data) and
  `ttlMs: discover_ttl_ms` (0 unless told: clients re-fetch whenever needed).
- JSON-RPC batches are accepted on connections that negotiated 2025-03-26,
  the one revision that defines them, and refused (-32600) on every other.
- `versions=` serves revisions the handlers were not written for: each is
  served by the handler of the nearest revision (same era first), with params
  and results converted (see `adapt`). A legacy request served by a modern
  handler gets a `_meta` envelope built from the handshake.
- `extensions=` adds extensions (SEP-2133, see `extensions`): advertised
  under `capabilities.extensions` where the revision has the field, their
  methods served to modern requests that negotiated them (else -32021).
- A handler asks the client for input with `client_requests.request_client`,
  one call for both eras: a request over the connection (legacy), or an
  `InputRequiredResult` round with a sealed `requestState` (modern).
- Tasks (`tasks=`, a `TaskManager`): at 2025-11-25, a request for a method in
  `task_requests` carrying `params.task` runs its handler in a task and is
  answered `CreateTaskResult`; the session answers `tasks/get`,
  `tasks/result`, `tasks/list` and `tasks/cancel` itself (`tasks/wire2025.py`)
  for the task's owner (the principal, else this connection).
- Start-up work (`on_start`, e.g. loading keys shared through Redis) runs
  once, before the first message is served (`start`; a transport may call it
  earlier to fail fast); when it fails the message is answered with its
  error and the next message tries again.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import importlib
import logging
import secrets
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio
import msgspec

from mcp_specgen_runtime.codec.wire import (
    UNSET,
    convert,
    encode,
    marker_members,
    to_builtins,
)
from mcp_specgen_runtime.errors import (
    ErrorCode,
    InvalidParamsError,
    MethodNotFoundError,
    RpcError,
)
from mcp_specgen_runtime.jsonrpc.connection import (
    Connection,
    current_request,
    request_in_progress,
)
from mcp_specgen_runtime.jsonrpc.dispatch import (
    Dispatcher,
    generated_base,
    implemented_methods,
    is_legacy,
    package_in,
    revision_of,
)
from mcp_specgen_runtime.jsonrpc.envelope import UNREADABLE, RequestId
from mcp_specgen_runtime.jsonrpc.members import pick_members
from mcp_specgen_runtime.jsonrpc.serving import enter_request, leave_request

from .adapt import adapt, conversion_fill, nearest, notification_fit
from .client_requests import (
    ClientExchange,
    InputRequired,
    input_required_result,
    open_answers,
    reset_exchange,
    seal_answers,
    set_exchange,
)
from .extensions import EXTENSIONS, ExtensionResult, missing_extension, negotiated
from .meta import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)
from .request_state import RequestStateSealer, request_binding
from .tasks import wire2025
from .tasks.owner import owner_of
from .tasks.wire2026 import TASKS, TasksExtension

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
    from types import ModuleType

    from mcp_specgen_runtime.codec.spec import Handlers
    from mcp_specgen_runtime.jsonrpc.serving import NotificationFit
    from mcp_specgen_runtime.stores.redis_keys import RedisKeys
    from mcp_specgen_runtime.stores.tasks import TaskRecord

    from .extensions import Extension
    from .tasks.manager import TaskManager
    from .tasks.running import RunningTask

logger = logging.getLogger(__name__)

__all__ = [
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "PICK_ABOVE",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Revision",
    "ServerConnection",
    "ServerSession",
    "derive_capabilities",
    "probed_name",
    "version_order",
]

UNSUPPORTED_PROTOCOL_VERSION = -32022
"""The error of a request at a protocol version the server does not serve."""

INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
DISCOVER = "server/discover"
PING = "ping"
SET_LEVEL = "logging/setLevel"
LASTING = frozenset(
    {INITIALIZED, SET_LEVEL, "resources/subscribe", "resources/unsubscribe"}
)
"""The legacy messages whose effect outlasts them (`ServerConnection.on_effect`)."""
BATCH_VERSIONS = frozenset({"2025-03-26"})
"""The revisions that define JSON-RPC batches."""

Era = Literal["legacy", "modern"]


def version_order(version: str) -> tuple[bool, str]:
    """Sort key of protocol versions: dated ones by date, then `draft`."""
    return (version == "draft", version)


@dataclass(frozen=True)
class Revision:
    """One revision a session serves: its handler and generated package."""

    version: str
    handlers: Handlers
    package: ModuleType
    dispatcher: Dispatcher
    written_for: ModuleType
    """The package the handler was written against (`package` unless adapted)."""

    # Cached: every legacy request asks (a frozen dataclass keeps them in
    # its __dict__ all the same).
    @functools.cached_property
    def legacy(self) -> bool:
        """Whether the revision uses the `initialize` handshake."""
        return is_legacy(self.package)

    @functools.cached_property
    def needs_envelope(self) -> bool:
        """Whether its requests need a modern `_meta` envelope made up for them
        (a legacy revision served by a modern handler)."""
        return self.legacy and not is_legacy(self.written_for)

    @classmethod
    def of(cls, handlers: Handlers, package: ModuleType | None = None) -> Revision:
        """The revision of generated `ServerHandlers`, or, given `package`,
        those handlers adapted to serve that package's revision.

        Raises:
            TypeError: not server handlers of a generated revision package.
        """
        base = generated_base(type(handlers))
        if "client_to_server" not in getattr(base, "__mcp_directions__", ()):
            raise TypeError(f"{type(handlers).__name__} does not serve a server")
        _, own = revision_of(handlers)
        target = package or own
        served = adapt(handlers, target)
        version: str = target.PROTOCOL_VERSION
        return cls(version, served, target, Dispatcher(served), own)


class _Revisions(Mapping[str, Revision]):
    """The revisions a session serves, by version, oldest first.

    A revision without its own handler is built (its package imported, the
    nearest handler adapted) when it is first looked up: a server offering
    six revisions starts with only the packages its handlers were written
    against, and pays for the others when a client speaks them.
    """

    def __init__(
        self,
        handlers: Sequence[Handlers],
        own: Mapping[str, Revision],
        modules: Mapping[str, str],
        versions: Sequence[str],
    ) -> None:
        self._handlers = tuple(handlers)
        self._built = dict(own)
        self._modules = modules
        self._order = tuple(sorted(versions, key=version_order))

    def __getitem__(self, version: str) -> Revision:
        revision = self._built.get(version)
        if revision is None:
            if version not in self._order:
                raise KeyError(version)
            package = package_in(self._modules, version)
            revision = Revision.of(nearest(package, self._handlers), package)
            self._built[version] = revision
        return revision

    def get(self, version: str, default: Any = None) -> Any:
        # Every modern request looks its revision up: one dict lookup.
        revision = self._built.get(version)
        if revision is not None:
            return revision
        try:
            return self[version]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def _revisions(
    handlers: Sequence[Handlers], versions: Sequence[str] | None
) -> tuple[_Revisions, frozenset[str]]:
    """Each version to serve, by its own handler or the nearest one's, and
    which of them are modern.

    Raises:
        ValueError: two handlers for one revision, or an unknown version.
    """
    own: dict[str, Revision] = {}
    for handler in handlers:
        revision = Revision.of(handler)
        if revision.version in own:
            raise ValueError(f"two handlers for revision {revision.version}")
        own[revision.version] = revision
    root = importlib.import_module(
        next(iter(own.values())).package.__name__.rsplit(".", 1)[0]
    )
    modules: Mapping[str, str] = root.MODULES
    chosen = list(own) if versions is None else list(dict.fromkeys(versions))
    for version in chosen:
        if version not in modules:
            package_in(modules, version)  # raises the unknown-version error
    modern = frozenset(root.MODERN_VERSIONS).intersection(chosen)
    return _Revisions(handlers, own, modules, chosen), modern


def derive_capabilities(revision: Revision, *, list_changed: bool = False) -> Any:
    """The revision's `ServerCapabilities` for the methods its handler implements.

    tools, prompts, resources (`subscribe: true` with resources/subscribe),
    logging (logging/setLevel) and completions (completion/complete), each only
    where the revision's `ServerCapabilities` has the field. `list_changed`
    adds `listChanged: true` to tools, prompts and resources (the server sends
    their `notifications/.../list_changed`).
    """
    implemented = implemented_methods(revision.handlers)
    capability_type = revision.package.ServerCapabilities
    fields = {field.encode_name for field in msgspec.structs.fields(capability_type)}

    def has(*methods: str) -> bool:
        return any(method in implemented for method in methods)

    found: dict[str, Any] = {}
    if has("tools/list", "tools/call"):
        found["tools"] = {}
    if has("prompts/list", "prompts/get"):
        found["prompts"] = {}
    if has(
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
    ):
        found["resources"] = {"subscribe": True} if has("resources/subscribe") else {}
    if list_changed:
        for kind in ("tools", "prompts", "resources"):
            if kind in found:
                found[kind] = {**found[kind], "listChanged": True}
    if has("logging/setLevel"):
        found["logging"] = {}
    if has("completion/complete"):
        found["completions"] = {}
    return convert(
        {key: value for key, value in found.items() if key in fields}, capability_type
    )


class _ParamsProbe(msgspec.Struct):
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")
    protocol_version: Any = msgspec.field(default=None, name="protocolVersion")
    request_state: Any = msgspec.field(default=None, name="requestState")
    # Any: a malformed one is the handler's to refuse, not the probe's.
    input_responses: Any = msgspec.field(default=None, name="inputResponses")
    task: msgspec.Raw = msgspec.Raw()
    name: Any = None


class _ResultProbe(msgspec.Struct):
    # UNSET when absent: a member sent as null is rewritten, not duplicated.
    meta: Any = msgspec.field(default=UNSET, name="_meta")
    result_type: Any = msgspec.field(default=UNSET, name="resultType")


_probe_decoder = msgspec.json.Decoder(_ParamsProbe)
_result_probe_decoder = msgspec.json.Decoder(_ResultProbe)
_result_decoder = msgspec.json.Decoder(dict[str, Any])


_UNREAD = _ParamsProbe()
"""The probe of params it could not read (each reader then looks itself)."""

_probed: contextvars.ContextVar[tuple[bytes | None, _ParamsProbe]] = (
    contextvars.ContextVar("mcp_specgen_runtime.protocol.session.probed")
)


def probed_name(params: bytes | None) -> tuple[bool, Any]:
    """The `name` member of the params the session served last in this
    context, when these are those params and the session could read them:
    `(True, name)` (None when absent), else `(False, None)`: read them.
    A handler looking for a tool's or prompt's name saves a pass over them."""
    found = _probed.get(None)
    if found is None or found[0] is not params:
        return False, None
    return True, found[1].name


_PROBED_NAMES = frozenset(
    field.encode_name for field in msgspec.structs.fields(_ParamsProbe)
)

PICK_ABOVE = 16_384
"""Bytes of params above which the probe reads only its members (picked by
`pick_members`): below, msgspec's skip of the rest is as cheap."""


def _probe(params: bytes | None) -> _ParamsProbe:
    """The envelope members of params, None when absent (`_UNREAD` when
    the params are no JSON object)."""
    if not params:
        return _ParamsProbe()
    try:
        if len(params) > PICK_ABOVE:
            picked = pick_members(params, _PROBED_NAMES)
            if picked is not None:
                return _probe_decoder.decode(picked)
        return _probe_decoder.decode(params)
    except UNREADABLE:
        return _UNREAD


def _progress_token(probe: _ParamsProbe) -> RequestId | None:
    """`_meta.progressToken`, when a string or an integer."""
    meta = probe.meta
    token = None if meta is None else meta.get("progressToken")
    if token is None:  # most requests: no isinstance of a union
        return None
    if isinstance(token, int | str) and not isinstance(token, bool):
        return token
    return None


class _LevelProbe(msgspec.Struct):
    level: Any = None


def _not_an_object(params: bytes | None) -> bool:
    """Params present but not a JSON object (MCP params always are one)."""
    body = (params or b"").strip()
    return bool(body) and body[:1] != b"{" and body != b"null"


def _probe_level(params: bytes | None) -> str | None:
    level = msgspec.json.decode(params or b"{}", type=_LevelProbe).level
    return level if isinstance(level, str) else None


def _modern_version(probe: _ParamsProbe) -> str | None:
    if probe.meta is None:
        return None
    version = probe.meta.get(META_PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


def _admits_input_required(package: ModuleType, method: str) -> bool:
    """Whether `method`'s result may be an `InputRequiredResult`."""
    spec = package.METHODS.get(method)
    marker = getattr(package, "InputRequiredResult", None)
    if spec is None or marker is None:
        return False
    members = marker_members(spec.result) or typing.get_args(spec.result)
    return marker in members


class ServerSession:
    """Serves every revision it has a handler for; see the module docstring.

    Args:
        handlers: one generated `ServerHandlers` instance per revision written.
        name, version: the server's `Implementation`.
        versions: the protocol versions to serve (default: the handlers'
            own). Versions without their own handler are served by the nearest
            one through conversion.
        instructions: sent in the initialize and discover results.
        discover_ttl_ms: `ttlMs` of the discover result.
        state_key: 32-byte key sealing `requestState` (random when None; share
            one between instances behind a load balancer).
        state_ttl_s: how long a `requestState` stays valid; within it, the
            caller it was issued to may send it again (it is not single-use).
        list_changed: advertise `listChanged: true` for tools, prompts and
            resources (the server sends their list_changed notifications).
        extensions: the extensions offered (see `extensions`).
        tasks: the `TaskManager` running task-augmented requests (None: no
            tasks; `params.task` is then ignored and `tasks/*` is -32601).
        task_requests: the methods that may be task-augmented (2025-11-25:
            declared under `capabilities.tasks.requests`, e.g. "tools/call";
            2026: served as tasks to requests that negotiated the tasks
            extension, which the session then offers; see `tasks.wire2026`).
        task_support: `(method, raw params)` -> "optional", "required" or
            "forbidden" for one request (default "optional"); a plain
            request that requires a task, or a task-augmented one that
            forbids it, is -32601 (a tool's `execution.taskSupport`; 2026:
            -32021 naming the extension).
        task_start: `(method, raw params)` -> "immediate" (default) or
            "explicit": a 2026 task request answered with its task only when
            the handler calls `tasks.wire2026.start_task()`.

    Raises:
        ValueError: no handlers, two for the same revision, an unknown
            version, or two extensions claiming one id or method.
        TypeError: an object that is not generated server handlers.
    """

    def __init__(
        self,
        handlers: Sequence[Handlers],
        *,
        name: str,
        version: str,
        versions: Sequence[str] | None = None,
        instructions: str | None = None,
        discover_ttl_ms: int = 0,
        state_key: bytes | None = None,
        state_ttl_s: float = 600.0,
        list_changed: bool = False,
        extensions: Sequence[Extension] = (),
        tasks: TaskManager | None = None,
        task_requests: Collection[str] = (),
        task_support: Callable[[str, bytes | None], str] | None = None,
        task_start: Callable[[str, bytes | None], str] | None = None,
    ) -> None:
        if not handlers:
            raise ValueError("a session needs at least one revision's handlers")
        revisions, modern = _revisions(handlers, versions)
        self.name = name
        self.version = version
        self.instructions = instructions
        self.discover_ttl_ms = discover_ttl_ms
        self.list_changed = list_changed
        self.sealer = RequestStateSealer(state_key, ttl_s=state_ttl_s)
        self._start_steps: list[Callable[[], Awaitable[None]]] = []
        self._start_lock = anyio.Lock()
        self._close_steps: list[Callable[[], Awaitable[None]]] = []
        self.tasks = tasks
        """The task engine (None: the session runs no tasks)."""
        self.task_requests: frozenset[str] = (
            frozenset(task_requests) if tasks is not None else frozenset[str]()
        )
        """The methods a requestor may augment with a task."""
        self.task_support = task_support
        self.task_start = task_start
        self.revisions: Mapping[str, Revision] = revisions
        """Every revision served, by version, oldest first (built on first use)."""
        self.legacy_versions: tuple[str, ...] = tuple(
            v for v in revisions if v not in modern
        )
        """Served handshake versions, oldest first."""
        self.modern_versions: tuple[str, ...] = tuple(
            v for v in revisions if v in modern
        )
        """Served modern versions, oldest first."""
        self.extensions: dict[str, Extension] = {}
        """The extensions offered, by id."""
        self._extension_methods: dict[str, Extension] = {}
        for extension in extensions:
            self.add_extension(extension)
        self.tasks_extension: TasksExtension | None = None
        """The 2026 tasks extension, when the session runs tasks and serves
        a modern revision."""
        if tasks is not None and self.task_requests and self.modern_versions:
            self.tasks_extension = TasksExtension(tasks)
            self.add_extension(self.tasks_extension.extension())
        self._capabilities: dict[str, Any] = {}
        self._discover: dict[str, bytes] = {}
        self._notification_fits: dict[str, NotificationFit | None] = {}
        stamp_meta = msgspec.json.encode(
            {META_SERVER_INFO: {"name": name, "version": version}}
        )
        self._stamp_head = b'{"_meta":' + stamp_meta
        self._stamp_both = b'{"resultType":"complete","_meta":' + stamp_meta

    def prepare(self) -> None:
        """Build every revision now rather than when a client first speaks it
        (a long-running server trades start-up time for even first requests)."""
        for version in self.revisions:
            self.capabilities(version)
            if version in self.modern_versions:
                self.discover_result(version)

    def add_extension(self, extension: Extension) -> None:
        """Offer one more extension (before serving: capabilities are cached).

        Raises:
            ValueError: its id or one of its methods is taken.
        """
        if extension.id in self.extensions:
            raise ValueError(f"extension {extension.id} is already offered")
        taken = extension.methods & self._extension_methods.keys()
        if taken:
            raise ValueError(f"{extension.id}: methods already served: {taken}")
        self.extensions[extension.id] = extension
        for method in extension.methods:
            self._extension_methods[method] = extension

    def extension_for(self, method: str) -> Extension | None:
        """The extension serving `method`, if any."""
        return self._extension_methods.get(method)

    def capabilities(self, version: str) -> Any:
        """The `ServerCapabilities` advertised at `version` (with the
        extensions, where the revision defines `extensions`)."""
        found: Any = self._capabilities.get(version)
        if found is None:
            revision = self.revisions[version]
            found = derive_capabilities(revision, list_changed=self.list_changed)
            if self.runs_tasks(revision):
                declared: dict[str, Any] = to_builtins(found)
                declared["tasks"] = wire2025.task_capability(self.task_requests)
                found = convert(declared, revision.package.ServerCapabilities)
            names = {f.encode_name for f in msgspec.structs.fields(found)}
            if self.extensions and EXTENSIONS in names:
                offered = {e.id: dict(e.settings) for e in self.extensions.values()}
                found = msgspec.structs.replace(found, extensions=offered)
            self._capabilities[version] = found
        return found

    def runs_tasks(self, revision: Revision) -> bool:
        """Whether requests at `revision` may be task-augmented (the
        2025-11-25 design: a legacy revision whose schema has tasks)."""
        return (
            bool(self.task_requests)
            and revision.legacy
            and "tasks/get" in revision.package.METHODS
        )

    _released = False
    redis_keys: RedisKeys | None = None
    """The keys shared through Redis (`redis_switch.share_redis`), if any."""
    started = False
    """Whether every start-up step (`on_start`) has run."""

    def on_start(self, step: Callable[[], Awaitable[None]]) -> None:
        """Run `step` once before the session serves its first message (or
        at `start`); a failed step runs again at the next message."""
        self._start_steps.append(step)
        self.started = False

    async def start(self) -> None:
        """Run the start-up steps not run yet, in order, once each.

        Raises:
            Exception: the first step that failed (the later ones wait).
        """
        async with self._start_lock:
            while self._start_steps:
                await self._start_steps[0]()
                self._start_steps.pop(0)
            self.started = True

    def on_close(self, step: Callable[[], Awaitable[None]]) -> None:
        """Run `step` when the session closes (`aclose`), e.g. to close a
        store made for it."""
        self._close_steps.append(step)

    def use_state_key(self, key: bytes) -> None:
        """Seal `requestState` with `key` (32 bytes) from now on, e.g. one
        shared by every instance; tokens sealed before are refused."""
        self.sealer = RequestStateSealer(key, ttl_s=self.sealer.ttl_s)

    async def aclose(self) -> None:
        """Stop the session's background work: release its task manager,
        which closes once no other session holds it (`TaskManager.hold`); the
        serving transport calls this when it shuts down."""
        if self.tasks is not None and not self._released:
            self._released = True
            await self.tasks.release()
        steps, self._close_steps = self._close_steps, []
        for step in steps:
            await step()

    def handler(self) -> ServerConnection:
        """A fresh handler for one connection (pass it to `Connection`)."""
        return ServerConnection(self)

    __call__ = handler

    # -- results built by the session --

    def _server_info(self, package: ModuleType) -> Any:
        return package.Implementation(name=self.name, version=self.version)

    def _discover_result(self, revision: Revision) -> Any:
        package = revision.package
        info = self._server_info(package)
        return package.DiscoverResult(
            supported_versions=list(self.modern_versions),
            capabilities=self.capabilities(revision.version),
            instructions=UNSET if self.instructions is None else self.instructions,
            cache_scope="public",
            ttl_ms=self.discover_ttl_ms,
            meta=package.ResultMetaObject(server_info=info),
        )

    def initialize_result(self, version: str) -> Any:
        """The `InitializeResult` answering a handshake settled on `version`."""
        package = self.revisions[version].package
        return package.InitializeResult(
            protocol_version=version,
            capabilities=self.capabilities(version),
            server_info=self._server_info(package),
            instructions=UNSET if self.instructions is None else self.instructions,
        )

    def discover_result(self, version: str) -> bytes:
        """The encoded `DiscoverResult` of modern `version`."""
        found = self._discover.get(version)
        if found is None:
            found = encode(self._discover_result(self.revisions[version]))
            self._discover[version] = found
        return found

    def notification_fit(self, revision: Revision) -> NotificationFit | None:
        """What fits the notifications the handler of `revision` sends to its
        peers, None when it was written for that revision (nothing to do)."""
        if revision.package is revision.written_for:
            return None
        version = revision.version
        if version not in self._notification_fits:
            self._notification_fits[version] = notification_fit(revision.package)
        return self._notification_fits[version]

    def negotiate(self, requested: object) -> str:
        """The legacy version to answer an `initialize` offering `requested`."""
        if isinstance(requested, str) and requested in self.legacy_versions:
            return requested
        return self.legacy_versions[-1]

    def stamp(self, result: bytes | None) -> bytes:
        """A modern result with `resultType` and `_meta` serverInfo added."""
        result = (result or b"{}").strip()
        probe = _result_probe_decoder.decode(result)
        if probe.meta is UNSET:
            # The common case: splice what is missing in, no second decode
            # (2026 results built from generated types carry resultType).
            rest = result[1:].lstrip()
            tail = b"}" if rest == b"}" else b"," + rest
            if probe.result_type is UNSET:
                return self._stamp_both + tail
            return self._stamp_head + tail
        obj = _result_decoder.decode(result)
        obj.setdefault("resultType", "complete")
        meta = obj.get("_meta")
        if not isinstance(meta, dict):
            meta = obj["_meta"] = {}
        typing.cast("dict[str, Any]", meta)[META_SERVER_INFO] = {
            "name": self.name,
            "version": self.version,
        }
        return msgspec.json.encode(obj)

    def unsupported(self, requested: object) -> RpcError:
        """The -32022 error naming the modern versions served."""
        return RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(self.modern_versions), "requested": requested},
        )


def _invalid_request(message: str) -> RpcError:
    return RpcError(ErrorCode.INVALID_REQUEST, message)


def _fit_request(fit: NotificationFit) -> None:
    """Fit the notifications the request in progress sends with `fit`."""
    context = request_in_progress()
    if context is not None:
        context.fit = fit


def _is_notification(method: str) -> bool:
    return method.startswith("notifications/")


class ServerConnection:
    """The state of one connection of a `ServerSession`; a `Connection` handler.

    Attributes:
        era: "legacy" or "modern" once the first request settled it, else None.
        protocol_version: the negotiated version (legacy), or the version of the
            latest modern request.
        initialize_params: the decoded `initialize` params (legacy).
    """

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self.initialize_params: Any = None
        self._legacy: Revision | None = None
        self._exchange: ClientExchange | None = None
        self._envelope: dict[str, Any] = {}
        self._fit: NotificationFit | None = None
        """Fits each legacy request's notifications when its peer does not."""
        self._tasks: TaskManager | None = None
        self.key = secrets.token_urlsafe(16)
        """Names this connection as the owner of its anonymous tasks."""
        self.session_id: str | None = None
        """The transport's session id (Streamable HTTP's `Mcp-Session-Id`),
        None when it has none (stdio)."""
        self.on_effect: Callable[[str, bytes | None], Awaitable[None]] | None = None
        """Called with a `LASTING` message's method and params once it
        succeeded (a server keeping the session elsewhere records it)."""

    async def __call__(self, method: str, params: bytes | None) -> bytes | None:
        session = self.session
        if not session.started:
            await session.start()
        probe = _probe(params)
        if probe is not _UNREAD:
            # Read from the probe, so that the engine does not look again.
            context = request_in_progress()
            if context is not None:
                context.progress_token = _progress_token(probe)
            _probed.set((params, probe))
        version = _modern_version(probe) if session.modern_versions else None
        if version is not None:
            return await self._modern(version, method, params, probe)
        if method == INITIALIZE:
            return self._initialize(probe, params)
        # ping's params are ignored, whatever they are.
        shapeless = method != PING and _not_an_object(params)
        if self._legacy is not None:
            if method == INITIALIZED:
                if self.on_effect is not None:
                    await self.on_effect(method, params)
                return None
            if shapeless and request_in_progress() is not None:
                raise InvalidParamsError(method, "params must be a JSON object")
            return await self._serve_legacy(self._legacy, method, params, probe)
        modern = self.era == "modern" or not session.legacy_versions
        if modern and request_in_progress() is not None:  # a request, ping too
            if shapeless:
                raise InvalidParamsError(method, "params must be a JSON object")
            raise RpcError(
                ErrorCode.INVALID_PARAMS,
                f"{method}: modern requests must carry "
                f"params._meta[{META_PROTOCOL_VERSION!r}]",
            )
        if _is_notification(method) or method == PING:
            raise MethodNotFoundError(method)  # ignored; ping answered by the engine
        raise _invalid_request(f"{method}: send initialize first")

    def _initialize(self, probe: _ParamsProbe, params: bytes | None) -> bytes:
        session = self.session
        if self.era == "modern" or not session.legacy_versions:
            raise session.unsupported(probe.protocol_version)
        if self._legacy is not None:
            raise _invalid_request("initialize: the connection is already initialized")
        version = session.negotiate(probe.protocol_version)
        revision = session.revisions[version]
        spec = revision.package.METHODS[INITIALIZE]
        decoded = Dispatcher.decode_params(spec, params)
        result = encode(session.initialize_result(version))
        capabilities = to_builtins(decoded.capabilities)
        connection = current_request().connection
        fit = session.notification_fit(revision)
        if isinstance(connection, Connection):
            connection.allow_batches = version in BATCH_VERSIONS
            # On the connection, so that notifications sent outside any
            # request (list changes, resource updates) fit too.
            connection.fit_notification = fit
        else:
            self._fit = fit
        self.initialize_params = decoded
        self.protocol_version = version
        self.era = "legacy"
        self._legacy = revision
        self._exchange = ClientExchange(revision.package, capabilities, connection)
        if session.runs_tasks(revision):
            self._tasks = session.tasks
        if revision.needs_envelope:
            self._envelope = {
                "_meta": {
                    META_PROTOCOL_VERSION: version,
                    META_CLIENT_CAPABILITIES: capabilities,
                    META_CLIENT_INFO: to_builtins(decoded.client_info),
                }
            }
        return result

    def assume(self, version: str, *, unreachable: str) -> None:
        """Serve legacy `version` without a handshake (a stateless HTTP
        server: each request stands alone). The client declared nothing, and
        no request reaches it: `request_client` raises `ProtocolError` with
        `unreachable`."""
        revision = self.session.revisions[version]
        self.protocol_version = version
        self.era = "legacy"
        self._legacy = revision
        self._exchange = ClientExchange(revision.package, {}, unreachable=unreachable)
        self._fit = self.session.notification_fit(revision)
        if self.session.runs_tasks(revision):
            self._tasks = self.session.tasks
        if revision.needs_envelope:
            self._envelope = {
                "_meta": {
                    META_PROTOCOL_VERSION: version,
                    META_CLIENT_CAPABILITIES: {},
                    META_CLIENT_INFO: {"name": "unknown", "version": "unknown"},
                }
            }

    async def _serve_legacy(
        self,
        revision: Revision,
        method: str,
        params: bytes | None,
        probe: _ParamsProbe = _UNREAD,
    ) -> bytes | None:
        assert self._exchange is not None
        if self._fit is not None:
            _fit_request(self._fit)
        tasks = self._tasks
        if tasks is not None:
            if method in wire2025.TASK_METHODS:
                return await wire2025.serve_task_method(
                    tasks, owner_of(self.key), method, params
                )
            if method in self.session.task_requests:
                created = await self._maybe_task(tasks, revision, method, params, probe)
                if created is not None:
                    return created
        token = set_exchange(self._exchange)
        try:
            if revision.needs_envelope:
                with conversion_fill(self._envelope):
                    result = await revision.dispatcher.dispatch(method, params)
            else:
                result = await revision.dispatcher.dispatch(method, params)
        finally:
            reset_exchange(token)
        if method == SET_LEVEL:
            self._exchange.log_level = _probe_level(params)
        if self.on_effect is not None and method in LASTING:
            await self.on_effect(method, params)
        return result

    async def _maybe_task(
        self,
        tasks: TaskManager,
        revision: Revision,
        method: str,
        params: bytes | None,
        probe: _ParamsProbe = _UNREAD,
    ) -> bytes | None:
        """A task-augmented request: started as a task, its `CreateTaskResult`
        encoded; None for a plain request the handler serves itself.

        Raises:
            RpcError: -32601 (a plain request that requires a task, or an
                augmented one that forbids it), the engine's refusals.
        """
        # The probe tells when there is no task, without another look.
        unread = probe is _UNREAD or len(probe.task)
        task = wire2025.task_params(method, params) if unread else None
        support = self.session.task_support
        mode = "optional" if support is None else support(method, params)
        if task is None:
            if mode == "required":
                raise RpcError(
                    ErrorCode.METHOD_NOT_FOUND,
                    f"Task augmentation required for this {method} request: "
                    "send it with params.task",
                )
            return None
        if mode == "forbidden":
            raise RpcError(
                ErrorCode.METHOD_NOT_FOUND,
                f"This {method} request does not support task augmentation: "
                "send it without params.task",
            )
        exchange = self._exchange
        assert exchange is not None
        context = current_request()
        envelope = self._envelope

        async def run(handle: RunningTask) -> dict[str, Any]:
            own = dataclasses.replace(exchange, task=handle, answers={}, asked=0)
            entered = enter_request(context.derive(meta=handle.related_meta))
            token = set_exchange(own)
            try:
                if revision.needs_envelope:
                    with conversion_fill(envelope):
                        result = await revision.dispatcher.dispatch(method, params)
                else:
                    result = await revision.dispatcher.dispatch(method, params)
            finally:
                reset_exchange(token)
                leave_request(entered)
            return _result_decoder.decode(result or b"{}")

        peer = exchange.connection

        async def notify(record: TaskRecord) -> None:
            if peer is not None:
                try:
                    await peer.notify(wire2025.TASK_STATUS, wire2025.task_json(record))
                except Exception:  # the requestor may be gone: it polls anyway
                    logger.debug("task status not delivered", exc_info=True)

        record = await tasks.start(
            owner_of(self.key),
            wire2025.ERA,
            method,
            run,
            task.ttl_ms,
            notify,
            failed_when=wire2025.tool_failed if method == "tools/call" else None,
        )
        return msgspec.json.encode({"task": wire2025.task_json(record)})

    async def _modern(
        self, version: str, method: str, params: bytes | None, probe: _ParamsProbe
    ) -> bytes | None:
        session = self.session
        notification = _is_notification(method)
        if self.era == "legacy":
            if notification:
                return None
            raise _invalid_request(
                f"{method}: this connection negotiated {self.protocol_version} "
                "with initialize; modern requests are refused"
            )
        revision = session.revisions.get(version)
        if revision is None or revision.legacy:
            if notification:
                return None
            raise session.unsupported(version)
        if method == DISCOVER:
            # Built before the era is settled: a discover that fails decides
            # nothing, so the client's initialize fallback is still served
            # (as over HTTP, where each request meets a fresh connection).
            result = session.discover_result(version)
            self.era = "modern"
            self.protocol_version = version
            return result
        self.era = "modern"
        self.protocol_version = version
        if method == PING and PING not in revision.package.METHODS:
            # 2026-07-28 has no ping. Not a MethodNotFoundError, which the
            # engine would answer with {} for liveness.
            raise RpcError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        if notification:
            await revision.dispatcher.dispatch(method, params)
            return None
        if revision.package is not revision.written_for:
            fit = session.notification_fit(revision)
            if fit is not None:
                _fit_request(fit)
        extension = session.extension_for(method) if session.extensions else None
        return session.stamp(
            await self._serve_modern(revision, method, params, probe, extension)
        )

    async def _maybe_modern_task(
        self,
        tasks: TasksExtension,
        revision: Revision,
        method: str,
        params: bytes | None,
    ) -> bytes | None:
        """A 2026 request the server may run as a task: a task when it
        negotiated the extension and the request supports tasks (its
        `CreateTaskResult` encoded), else served as usual.

        Raises:
            RpcError: -32021 for a request that requires a task without the
                extension; the engine's refusals.
        """
        session = self.session
        support = session.task_support
        mode = "optional" if support is None else support(method, params)
        if mode not in ("optional", "required"):
            return await revision.dispatcher.dispatch(method, params)
        if not negotiated(TASKS):
            if mode == "required":
                raise missing_extension(TASKS)
            return await revision.dispatcher.dispatch(method, params)
        starts = session.task_start
        start = "immediate" if starts is None else starts(method, params)
        return await tasks.serve(
            method, start, lambda: revision.dispatcher.dispatch(method, params)
        )

    async def _serve_modern(
        self,
        revision: Revision,
        method: str,
        params: bytes | None,
        probe: _ParamsProbe,
        extension: Extension | None = None,
    ) -> bytes | None:
        meta = probe.meta or {}
        found = meta.get(META_CLIENT_CAPABILITIES)
        capabilities: dict[str, Any] = (
            typing.cast("dict[str, Any]", found) if isinstance(found, dict) else {}
        )
        level = meta.get(META_LOG_LEVEL)
        exchange = ClientExchange(
            revision.package,
            capabilities,
            log_level=level if isinstance(level, str) else None,
        )
        sealer = self.session.sealer
        context = request_in_progress()
        principal = None if context is None else context.principal
        if isinstance(probe.request_state, str):
            exchange.answers = open_answers(
                sealer,
                method,
                request_binding(method, params),
                probe.request_state,
                probe.input_responses,
                principal=principal,
            )
        token = set_exchange(exchange)
        try:
            if extension is not None:
                # Negotiation first: a caller without it learns nothing more.
                if not negotiated(extension.id):
                    raise missing_extension(extension.id)
                return await extension.dispatch(method, params)
            tasks = self.session.tasks_extension
            if tasks is not None and method in self.session.task_requests:
                return await self._maybe_modern_task(tasks, revision, method, params)
            return await revision.dispatcher.dispatch(method, params)
        except ExtensionResult as answer:
            return encode(answer.result)
        except InputRequired as signal:
            if not _admits_input_required(revision.package, method):
                raise RpcError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{method} cannot ask the client for input "
                    f"in {revision.version}",
                ) from None
            body = input_required_result(signal)
            body["requestState"] = seal_answers(
                sealer, signal, request_binding(method, params), principal=principal
            )
            return msgspec.json.encode(body)
        finally:
            reset_exchange(token)

"""Several MCP servers behind one object: names per server, calls routed.

`ClientGroup` opens one client per server, all at once, and shows their
tools, prompts and resources as one set::

    servers: dict[str, Target] = {"time": ["uvx", "mcp-server-time"], "web": url}
    async with ClientGroup(servers, client_options={"timeout": 10}) as group:
        tools = await group.list_all_tools()  # time_get_current_time, web_fetch...
        await group.call_tool("time_get_current_time", {"timezone": "UTC"})

Members. Each value is a client (a `GroupMember`: `Client` or another
object with its calls) used as it is, or a target (a command, a URL, an
`App`...) that gets a `Client(target, **client_options)`. The options are
the same for every target, checked as the group makes its clients; a server
that needs its own (a token, other versions) is given as a `Client`.

Naming. Every tool and prompt is named `<server><separator><name>`, the
separator "_" by default (langchain-mcp-adapters' `tool_name_prefix=True`;
"_" is valid in every model provider's tool names). The prefix is always
there, so a name never changes when another server joins. A resource keeps
its URI, which is an identity (tool results link to it), and only its `name`
is prefixed. A call goes to the server that listed the name or URI, by a
table the listings fill (never by splitting a name: "a_b" + "c" and "a" +
"b_c" both read "a_b_c"). Two servers whose names meet that way are a
`RoutingError` at listing time, not a silent overwrite; one URI listed by
two servers is read only with `server=` naming one.

Failures. Connecting is all or nothing by default: when any server fails to
connect, the others are closed again and `GroupError` reports every server
that failed (all are awaited, none hides another). With `partial=True` the
group opens with the servers that connected and `failures` says why the
others did not. A server that fails later (a call, a listing) raises for
that call only (calls route by the listings that succeeded); one whose
connection dies leaves the group (`failures` says why, calls routed to it
raise `GroupError`) and the others keep serving.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import anyio
import msgspec

from mcp_specgen_runtime.codec.wire import extra, with_extra
from mcp_specgen_runtime.errors import McpError

from .client import Client

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence
    from types import TracebackType
    from typing import Self

    from anyio.abc import TaskGroup, TaskStatus

    from mcp_specgen_types.latest import (
        CallToolResult,
        GetPromptResult,
        ListToolsResult,
        Prompt,
        ReadResourceResult,
        Resource,
        Tool,
    )

    from .targets import Target

__all__ = ["ClientGroup", "GroupError", "GroupMember", "RoutingError"]

T = TypeVar("T")
Named = TypeVar("Named", "Tool", "Prompt", "Resource")


@runtime_checkable
class GroupMember(Protocol):
    """What `ClientGroup` needs of each server's client (`Client` has it)."""

    async def __aenter__(self) -> object: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> bool | None: ...

    async def list_tools(self) -> ListToolsResult: ...

    async def list_all_tools(self) -> Sequence[Tool]: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - per call, as Client's
    ) -> CallToolResult: ...

    async def list_all_prompts(self) -> Sequence[Prompt]: ...

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult: ...

    async def list_all_resources(self) -> Sequence[Resource]: ...

    async def read_resource(self, uri: str) -> ReadResourceResult: ...


class GroupError(McpError):
    """One or more servers of a group failed; `failures` says which and why."""

    def __init__(self, doing: str, failures: Mapping[str, BaseException]) -> None:
        self.failures = dict(failures)
        listed = "; ".join(f"{name!r}: {exc!r}" for name, exc in self.failures.items())
        super().__init__(f"{doing}: {listed}")


class RoutingError(McpError, LookupError):
    """A name or URI no single server of the group answers to."""


class ClientGroup:
    """One client per named server, opened together; calls routed by name.

    Args:
        members: server name -> its client (not yet entered), or a target
            (a command, URL, `App`... as `Client` takes).
        client_options: keyword arguments of the `Client` made for each
            target (e.g. `{"timeout": 10, "sampling": answer}`).
        separator: between the server name and a tool's or prompt's name.
        partial: open with the servers that connect (see `failures`) instead
            of failing when any does not.

    Raises:
        ValueError: no members, or an empty server name.
        TypeError: an option `Client` does not take.
    """

    def __init__(
        self,
        members: Mapping[str, GroupMember | Target],
        *,
        client_options: Mapping[str, Any] | None = None,
        separator: str = "_",
        partial: bool = False,
    ) -> None:
        if not members:
            raise ValueError("a ClientGroup needs at least one server")
        if "" in members:
            raise ValueError("a server name must not be empty")
        self.separator = separator
        self.partial = partial
        options = dict(client_options or {})
        self._members: dict[str, GroupMember] = {
            name: (
                value if isinstance(value, GroupMember) else Client(value, **options)
            )
            for name, value in members.items()
        }
        self._live: dict[str, GroupMember] = {}
        self._failures: dict[str, BaseException] = {}
        self._close_failures: dict[str, BaseException] = {}
        self._names: dict[str, dict[str, tuple[str, str]]] = {"tool": {}, "prompt": {}}
        """kind -> group name -> (server, the server's name), from the listings."""
        self._uris: dict[str, list[str]] = {}
        """URI -> the servers that listed it."""
        self._tasks: TaskGroup | None = None
        self._closing: anyio.Event | None = None

    @property
    def servers(self) -> tuple[str, ...]:
        """The names of the connected servers, in the order given."""
        return tuple(name for name in self._members if name in self._live)

    @property
    def failures(self) -> Mapping[str, BaseException]:
        """Why each server that is not connected failed: on connecting
        (`partial=True`) or since."""
        return dict(self._failures)

    def __getitem__(self, server: str) -> GroupMember:
        """The client of one connected server.

        Raises:
            KeyError: no connected server of that name.
        """
        return self._live[server]

    def _member(self, server: str) -> GroupMember:
        """The client a call goes to.

        Raises:
            GroupError: the server failed (to connect, or since).
            KeyError: no server of that name.
        """
        member = self._live.get(server)
        if member is not None:
            return member
        if server in self._failures:
            failure = {server: self._failures[server]}
            raise GroupError(f"server {server!r} is not connected", failure)
        raise KeyError(server)

    def qualify(self, server: str, name: str) -> str:
        """The group's name for a server's tool or prompt."""
        return f"{server}{self.separator}{name}"

    async def __aenter__(self) -> Self:
        self._failures.clear()
        self._close_failures.clear()
        self._closing = anyio.Event()
        tasks = anyio.create_task_group()
        await tasks.__aenter__()
        self._tasks = tasks
        try:
            async with anyio.create_task_group() as starting:
                for name, member in self._members.items():
                    starting.start_soon(tasks.start, self._hold, name, member)
        except BaseException:
            await self._close()
            raise
        if self._failures and (not self.partial or not self._live):
            failures = self._failures
            await self._close()
            raise GroupError(
                f"{len(failures)} of {len(self._members)} servers failed to connect",
                failures,
            )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close()
        if self._close_failures and exc is None:
            raise GroupError("servers failed to close", self._close_failures)

    async def _close(self) -> None:
        """Let every member exit as after a normal body, whatever ended the
        group's (handing the task group an error would cancel them mid-close);
        an error of the body goes on once they are closed."""
        if self._closing is not None:
            self._closing.set()
        tasks, self._tasks = self._tasks, None
        if tasks is not None:
            await tasks.__aexit__(None, None, None)

    async def _hold(
        self, name: str, member: GroupMember, *, task_status: TaskStatus[None]
    ) -> None:
        """Enter one member, keep it open until the group closes, then exit it
        in this same task (anyio wants a context exited where it was entered)."""
        entered = False
        closing = self._closing
        assert closing is not None  # set by __aenter__ before any _hold starts
        try:
            async with member:
                entered = True
                self._live[name] = member
                task_status.started()
                await closing.wait()
        except Exception as exc:  # reported through `failures`, never lost
            if not entered:
                self._failures[name] = exc
                task_status.started()
            elif closing.is_set():
                self._close_failures[name] = exc
            else:  # died while open: calls routed to it say why
                self._failures[name] = exc
        finally:
            self._live.pop(name, None)

    async def _each(
        self, call: Callable[[GroupMember], Awaitable[T]]
    ) -> tuple[dict[str, T], dict[str, BaseException]]:
        """`call` on every connected server at once: the results in server
        order, and the failures (every one, none hiding another)."""
        results: dict[str, T] = {}
        failures: dict[str, BaseException] = {}

        async def one(name: str, member: GroupMember) -> None:
            try:
                results[name] = await call(member)
            except Exception as exc:  # every server's failure is reported
                failures[name] = exc

        async with anyio.create_task_group() as tasks:
            for name in self.servers:
                tasks.start_soon(one, name, self._live[name])
        ordered = {name: results[name] for name in self.servers if name in results}
        return ordered, failures

    def _named(
        self, server: str, item: Named, table: dict[str, tuple[str, str]], kind: str
    ) -> Named:
        """`item` under its group name, recorded in `table` for routing."""
        qualified = self.qualify(server, item.name)
        owner = table.setdefault(qualified, (server, item.name))
        if owner != (server, item.name):
            raise RoutingError(
                f"{kind} {qualified!r} names both {owner[1]!r} of server "
                f"{owner[0]!r} and {item.name!r} of server {server!r}; "
                "rename a server or choose another separator"
            )
        return _renamed(item, qualified)

    def _table(
        self,
        kind: str,
        listed: Mapping[str, Sequence[Named]],
        failed: Mapping[str, BaseException],
    ) -> list[Named]:
        """The items listed, under their group names; the routing table of
        `kind` rebuilt from them (a server whose listing failed keeps the
        names it listed before, as its calls may still work)."""
        table = {
            name: owner
            for name, owner in self._names[kind].items()
            if owner[0] in failed
        }
        named = [
            self._named(server, item, table, kind)
            for server, items in listed.items()
            for item in items
        ]
        self._names[kind] = table
        return named

    async def _tools(self) -> tuple[list[Tool], dict[str, BaseException]]:
        listed, failed = await self._each(lambda m: m.list_all_tools())
        return self._table("tool", listed, failed), failed

    async def list_all_tools(self) -> list[Tool]:
        """Every tool of every server, named `<server><separator><tool>`.

        Raises:
            GroupError: a server's listing failed (the others' still route).
            RoutingError: two servers' tools get the same name.
        """
        tools, failed = await self._tools()
        if failed:
            raise GroupError("listing tools failed", failed)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - passed to the member
    ) -> CallToolResult:
        """Call a tool by its group name on the server that has it.

        Raises:
            RoutingError: no server lists a tool of that name.
            GroupError: the server that has it failed, or no listing gave
                the name and some server's listing failed.
        """
        server, tool = await self._route("tool", name, self._tools)
        return await self._member(server).call_tool(tool, arguments, timeout=timeout)

    async def _prompts(self) -> tuple[list[Prompt], dict[str, BaseException]]:
        listed, failed = await self._each(lambda m: m.list_all_prompts())
        return self._table("prompt", listed, failed), failed

    async def list_all_prompts(self) -> list[Prompt]:
        """Every prompt of every server, named `<server><separator><prompt>`.

        Raises:
            GroupError: a server's listing failed (the others' still route).
            RoutingError: two servers' prompts get the same name.
        """
        prompts, failed = await self._prompts()
        if failed:
            raise GroupError("listing prompts failed", failed)
        return prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Get a prompt by its group name from the server that has it.

        Raises:
            RoutingError: no server lists a prompt of that name.
            GroupError: the server that has it failed, or no listing gave
                the name and some server's listing failed.
        """
        server, prompt = await self._route("prompt", name, self._prompts)
        return await self._member(server).get_prompt(prompt, arguments)

    async def _resources(self) -> tuple[list[Resource], dict[str, BaseException]]:
        """Every resource listed; the URI table rebuilt from those listings
        (a server whose listing failed keeps the URIs it listed before)."""
        listed, failed = await self._each(lambda m: m.list_all_resources())
        owners: dict[str, list[str]] = {}
        for uri, servers in self._uris.items():
            kept = [server for server in servers if server in failed]
            if kept:
                owners[uri] = kept
        resources: list[Resource] = []
        for server, items in listed.items():
            for resource in items:
                servers = owners.setdefault(resource.uri, [])
                if server not in servers:
                    servers.append(server)
                # URIs route, so the name is a label: a clash is no error.
                qualified = self.qualify(server, resource.name)
                resources.append(_renamed(resource, qualified))
        self._uris = owners
        return resources, failed

    async def list_all_resources(self) -> list[Resource]:
        """Every resource of every server: URIs unchanged, names prefixed.

        Raises:
            GroupError: a server's listing failed (the others' still route).
        """
        resources, failed = await self._resources()
        if failed:
            raise GroupError("listing resources failed", failed)
        return resources

    async def read_resource(
        self, uri: str, *, server: str | None = None
    ) -> ReadResourceResult:
        """Read a resource from the server that listed its URI, or from `server`
        (needed for a URI no listing has, from a template, or listed twice).

        Raises:
            RoutingError: no server, or more than one, listed the URI.
            GroupError: that server failed, or no listing gave the URI and
                some server's listing failed.
            KeyError: `server` is no server of the group.
        """
        if server is None:
            failed: dict[str, BaseException] = {}
            if uri not in self._uris:
                _, failed = await self._resources()
            owners = self._uris.get(uri, [])
            if not owners and failed:
                raise GroupError(f"no server listed {uri!r}; listings failed", failed)
            if len(owners) != 1:
                found = "no server" if not owners else f"servers {owners}"
                raise RoutingError(
                    f"{found} listed {uri!r}; pass server= to read it from one"
                )
            (server,) = owners
        return await self._member(server).read_resource(uri)

    async def _route(
        self,
        kind: str,
        name: str,
        refresh: Callable[[], Awaitable[tuple[object, dict[str, BaseException]]]],
    ) -> tuple[str, str]:
        """The (server, name) behind a group name, listing again once if
        unknown: a name the listings that succeeded give routes whatever
        other servers' listings did."""
        failed: dict[str, BaseException] = {}
        if name not in self._names[kind]:
            _, failed = await refresh()
        found = self._names[kind].get(name)
        if found is not None:
            return found
        if failed:
            doing = f"no server listed a {kind} named {name!r}; listings failed"
            raise GroupError(doing, failed)
        raise RoutingError(
            f"no server has a {kind} named {name!r} (names are "
            f"<server>{self.separator}<{kind}>; servers: {list(self.servers)})"
        )


def _renamed(item: Named, name: str) -> Named:
    """A copy of `item` named `name`, keeping its unknown keys."""
    renamed = msgspec.structs.replace(item, name=name)
    unknown = extra(item)
    if unknown:
        with_extra(renamed, unknown)
    return renamed

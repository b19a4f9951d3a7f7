"""Read what a live server offers: its identity, tools, prompts and resource
templates, every page, as the JSON the server sent."""

from __future__ import annotations

import shlex
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_specgen.errors import CodegenError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_specgen_runtime import Client


class ClientGenError(CodegenError):
    """The server cannot be read, or what it offers cannot be generated."""


@dataclass(frozen=True)
class Listing:
    """What a server offers, as builtins (wire names, nothing dropped)."""

    server_name: str
    server_version: str
    revision: str
    tools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    prompts: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    templates: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


def parse_target(target: str) -> str | list[str]:
    """An http(s) URL as is; anything else a command line split like a shell.

    Raises:
        ClientGenError: the command line is empty or badly quoted.
    """
    if target.startswith(("http://", "https://")):
        return target
    try:
        command = shlex.split(target)
    except ValueError as exc:
        raise ClientGenError(f"cannot split the command {target!r}: {exc}") from exc
    if not command:
        raise ClientGenError("the target is empty: give a command or an http(s) URL")
    return command


async def inspect_server(
    target: str,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,  # noqa: ASYNC109 - per request, given to the Client
) -> Listing:
    """Connect to `target` and read every page of its listings.

    Raises:
        ClientGenError: the server cannot be started, reached or read.
    """
    from mcp_specgen_runtime import Client

    where = parse_target(target)
    try:
        async with Client(
            where, headers=headers, timeout=timeout, cache=None, stderr="capture"
        ) as client:
            return await listing_of(client)
    except ClientGenError:
        raise
    except Exception as exc:  # any failure is "cannot read it"
        raise ClientGenError(
            f"cannot read the server {target!r}: {_reason(exc)}"
        ) from exc


async def listing_of(client: Client) -> Listing:
    """What the server behind an open `Client` offers."""
    from mcp_specgen_runtime.codec.wire import to_builtins

    info = client.server_info
    return Listing(
        server_name=info.name if info is not None else "",
        server_version=info.version if info is not None else "",
        revision=client.protocol_version,
        tools=[to_builtins(t) for t in await client.list_all_tools()],
        prompts=[to_builtins(p) for p in await client.list_all_prompts()],
        templates=[to_builtins(t) for t in await client.list_all_resource_templates()],
    )


def _reason(exc: BaseException) -> str:
    """The innermost useful message of an error (groups unwrapped)."""
    inner: BaseException = exc
    while isinstance(inner, BaseExceptionGroup):
        group = typing.cast("BaseExceptionGroup[BaseException]", inner)
        inner = group.exceptions[0]
    return f"{type(inner).__name__}: {str(inner) or 'no message'}"

"""Descriptions of protocol methods, filled in by generated method tables, and
the two contracts generated handler and client classes are written against."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import msgspec

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Direction", "Handlers", "MessageKind", "MethodSpec", "RequestSender"]

Direction = Literal["client_to_server", "server_to_client", "both"]
MessageKind = Literal["request", "notification"]


class MethodSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One JSON-RPC method of a protocol revision.

    `message` is the type of the whole request or notification, `params` the
    type of its `params` member (None when it has none), `result` the type of
    a successful response (None for notifications).
    """

    name: str
    py_name: str
    direction: Direction
    kind: MessageKind
    message: Any
    params: Any
    params_required: bool
    result: Any


class Handlers:
    """Base of generated handler classes; each method there raises -32601."""

    __mcp_methods__: ClassVar[Mapping[str, MethodSpec]]
    __mcp_directions__: ClassVar[frozenset[Direction]]


class RequestSender(Protocol):
    """What generated client stubs need from a session."""

    async def request(self, method: str, params: Any, result_type: Any) -> Any:
        """Send a request and wait for its result, decoded as `result_type`."""
        ...

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        ...

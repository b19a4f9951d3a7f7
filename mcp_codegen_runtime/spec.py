"""Descriptions of protocol methods, filled in by generated method tables."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

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

"""How a client serves the server's requests: `ClientDispatcher`.

The session's handlers (one per revision written) serve each server→client
request and notification in the negotiated revision's types, the nearest
handler `adapt`ed to it. Two things are added on top:

- Params the negotiated revision's types refuse are decoded as the newest
  revision of the same era has them, and handled there: servers send shapes of
  revisions newer than the one negotiated (server-everything at 2025-06-18
  sends 2025-11-25 multi-select `type: "array"` elicitation fields). Only when
  that fails too is the request refused with -32602.
- An elicitation accepted in form mode gets, for each requested field the
  handler left out, the field's `default` (SEP-1034, 2025-11-25), so a handler
  that only asks about what the user changed still answers every field.
"""

from __future__ import annotations

import importlib
import typing
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from mcp_specgen_runtime.errors import InvalidParamsError
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher, is_legacy

from .adapt import adapt, nearest, package_of_version

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    from mcp_specgen_runtime.codec.spec import Handlers

__all__ = ["ELICIT", "ClientDispatcher", "with_defaults"]

ELICIT = "elicitation/create"


class ClientDispatcher:
    """Serves server→client messages for a session that negotiated the
    revision of `package`, with `handlers` (one per revision written).

    Raises (from `dispatch`):
        MethodNotFoundError: a method no handler serves.
        InvalidParamsError: params no revision of the era takes.
    """

    def __init__(self, handlers: Sequence[Handlers], package: ModuleType) -> None:
        self.package = package
        self._handlers = tuple(handlers)
        self._dispatcher = Dispatcher(adapt(nearest(package, self._handlers), package))

    async def dispatch(self, method: str, params: bytes | None) -> bytes | None:
        """Serve one request or notification; the encoded result (None for
        notifications)."""
        try:
            answer = await self._dispatcher.dispatch(method, params)
        except InvalidParamsError:
            newer = self._newer(method, params)
            if newer is None:
                raise
            answer = await newer.dispatch(method, params)
        if method == ELICIT and answer is not None:
            return with_defaults(params, answer)
        return answer

    def _newer(self, method: str, params: bytes | None) -> Dispatcher | None:
        """A dispatcher of the newest revision of the negotiated era, when the
        negotiated revision's types refused `params` and that one's take them."""
        package = self.package
        if _takes(package, method, params) is not False:
            return None  # no such method, or the handler refused the params
        root = importlib.import_module(package.__name__.rsplit(".", 1)[0])
        # The draft changes under its users: its shapes are not guessed at.
        known = [v for v in root.KNOWN_VERSIONS if v != "draft"]
        version: str = package.PROTOCOL_VERSION
        later = known[known.index(version) + 1 :] if version in known else []
        same_era = [
            p
            for p in (package_of_version(package, v) for v in later)
            if is_legacy(p) == is_legacy(package)
        ]
        if not same_era or not _takes(same_era[-1], method, params):
            return None
        newest = same_era[-1]
        return Dispatcher(adapt(nearest(newest, self._handlers), newest))


def _takes(package: ModuleType, method: str, params: bytes | None) -> bool | None:
    """Whether `params` decode as `method`'s params in `package` (None: the
    revision has no such method, or it takes no params)."""
    spec = package.METHODS.get(method)
    if spec is None or spec.params is None:
        return None
    try:
        Dispatcher.decode_params(spec, params)
    except InvalidParamsError:
        return False
    return True


class _Schema(msgspec.Struct):
    properties: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])


class _Elicitation(msgspec.Struct):
    mode: str = "form"
    requested_schema: _Schema | UnsetType = msgspec.field(
        default=UNSET, name="requestedSchema"
    )


def with_defaults(params: bytes | None, answer: bytes) -> bytes:
    """`answer` to the elicitation `params`, with the `default` of each
    requested field an accepted form left out (SEP-1034); else `answer`."""
    try:
        asked = msgspec.json.decode(params or b"{}", type=_Elicitation)
        result: Any = msgspec.json.decode(answer)
    except msgspec.DecodeError:  # ValidationError included
        return answer
    if (
        asked.mode != "form"
        or isinstance(asked.requested_schema, UnsetType)
        or not isinstance(result, dict)
    ):
        return answer
    body = typing.cast("dict[str, Any]", result)
    content: Any = body.get("content", {})
    if body.get("action") != "accept" or not isinstance(content, dict):
        return answer
    given = typing.cast("dict[str, Any]", content)
    defaults = {
        name: typing.cast("dict[str, Any]", field)["default"]
        for name, field in asked.requested_schema.properties.items()
        if isinstance(field, dict) and "default" in field and name not in given
    }
    if not defaults:
        return answer
    return msgspec.json.encode({**body, "content": {**given, **defaults}})

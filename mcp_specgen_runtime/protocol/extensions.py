"""Extensions (SEP-2133): optional features negotiated through capabilities.

An `Extension` names its identifier, the settings the server advertises under
`capabilities.extensions[id]` (in `server/discover`, and in `initialize`
results of revisions whose `ServerCapabilities` has the field), and the
methods it adds, typed by a generated method table, with their handlers::

    from mcp_specgen_types.extensions import io_modelcontextprotocol_tasks as tasks

    extension = Extension(tasks.EXTENSION_ID, table=tasks.METHODS,
                          handlers={"tasks/get": get_task})
    session = ServerSession(handlers, name="demo", version="1",
                            extensions=[extension])

The session dispatches an extension's methods like core ones (params decoded
in one pass into the table's type, the result encoded), after checking that
the request negotiated the extension: a 2026 request names it in
`_meta["io.modelcontextprotocol/clientCapabilities"].extensions`, so a client
may opt in per request. Without it the method is -32021
(`MissingRequiredClientCapability`, HTTP 400) with
`data.requiredCapabilities.extensions[id]`. Extensions are served to modern
requests only: no handshake revision defines `extensions`.

A core handler may answer with an extension's result in lieu of its own
(SEP-2663 answers `tools/call` with `CreateTaskResult`) by raising
`ExtensionResult`; `negotiated(id)` says whether the request allows it.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

from mcp_specgen_runtime.codec.wire import encode
from mcp_specgen_runtime.errors import RpcError
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher

from .client_requests import MISSING_REQUIRED_CLIENT_CAPABILITY, current_exchange

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from mcp_specgen_runtime.codec.spec import MethodSpec

__all__ = [
    "EXTENSIONS",
    "Extension",
    "ExtensionResult",
    "declared_extensions",
    "missing_extension",
    "negotiated",
]

EXTENSIONS = "extensions"
"""The capabilities member holding extensions, by identifier."""


class ExtensionResult(BaseException):
    """Raised by a handler to answer its request with an extension's result
    instead of the method's standard one; the session encodes `result` as is.

    A `BaseException`, like `InputRequired`, so that a handler's
    `except Exception` does not swallow it.
    """

    def __init__(self, extension: str, result: Any) -> None:
        super().__init__(f"{extension} result")
        self.extension = extension
        self.result = result


class Extension:
    """One extension a server offers; see the module docstring.

    Args:
        id: the identifier (`io.modelcontextprotocol/tasks`).
        settings: what the server advertises under `extensions[id]`.
        table: the extension's generated method table (`METHODS`).
        handlers: method name -> async handler taking the decoded params and
            returning the result (a generated struct or builtins).

    Raises:
        ValueError: a handler for a method the table has not, or one that is
            not a client→server request.
    """

    def __init__(
        self,
        id: str,
        *,
        settings: Mapping[str, Any] | None = None,
        table: Mapping[str, MethodSpec] | None = None,
        handlers: Mapping[str, Callable[[Any], Awaitable[Any]]] | None = None,
    ) -> None:
        self.id = id
        self.settings: dict[str, Any] = dict(settings or {})
        self.table: dict[str, MethodSpec] = dict(table or {})
        self.handlers: dict[str, Callable[[Any], Awaitable[Any]]] = dict(handlers or {})
        for method in self.handlers:
            spec = self.table.get(method)
            if (
                spec is None
                or spec.kind != "request"
                or spec.direction
                not in (
                    "client_to_server",
                    "both",
                )
            ):
                raise ValueError(
                    f"{id}: {method} is not a client→server request of its table"
                )

    @property
    def methods(self) -> frozenset[str]:
        """The methods served."""
        return frozenset(self.handlers)

    async def dispatch(self, method: str, params: bytes | None) -> bytes:
        """Decode the params, call the handler, encode its result.

        Raises:
            InvalidParamsError: params that do not fit the method's type.
        """
        spec = self.table[method]
        decoded = Dispatcher.decode_params(spec, params) if spec.params else None
        handler = self.handlers[method]
        return encode(await handler(decoded))


def declared_extensions(capabilities: Mapping[str, Any]) -> Mapping[str, Any]:
    """The extensions a client's capabilities (builtins) declare, by id."""
    found = capabilities.get(EXTENSIONS)
    if isinstance(found, dict):
        return typing.cast("dict[str, Any]", found)
    return {}


def negotiated(extension_id: str) -> bool:
    """Whether the request being served declared the extension (a 2026
    request in its `_meta` client capabilities)."""
    try:
        exchange = current_exchange()
    except RuntimeError:
        return False
    declared = declared_extensions(exchange.client_capabilities)
    return isinstance(declared.get(extension_id), dict)


def missing_extension(extension_id: str) -> RpcError:
    """The -32021 error of a request that needs the extension."""
    return RpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: extension {extension_id}",
        {"requiredCapabilities": {EXTENSIONS: {extension_id: {}}}},
    )

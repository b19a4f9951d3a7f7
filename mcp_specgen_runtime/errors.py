"""Errors of the runtime.

    McpError
    ├── ProtocolError      a peer broke the protocol (bad envelope, wrong version...)
    │   └── NegotiationError  no protocol version both sides speak
    │       └── DiscoveryError  `server/discover` failed, and no fallback helped
    ├── CapabilityError    the peer did not declare the capability a request needs
    ├── TransportError     the connection failed or closed
    │   └── MessageTooLargeError  one message over the transport's limit (skipped)
    ├── RequestTimeoutError  no response in time (also a TimeoutError)
    └── RpcError           a JSON-RPC error response: code, message, data
        ├── MethodNotFoundError   -32601
        └── InvalidParamsError    -32602

Handlers raise `RpcError` (or a subclass) to answer a request with an error;
any other exception becomes -32603 without its traceback.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

__all__ = [
    "CapabilityError",
    "DiscoveryError",
    "ErrorCode",
    "InvalidParamsError",
    "McpError",
    "MessageTooLargeError",
    "MethodNotFoundError",
    "NegotiationError",
    "ProtocolError",
    "RequestTimeoutError",
    "RpcError",
    "TransportError",
]


class ErrorCode(IntEnum):
    """JSON-RPC 2.0 error codes used by every MCP revision."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603


class McpError(Exception):
    """Base class of every runtime error."""


class ProtocolError(McpError):
    """A peer sent something the protocol does not allow."""


class NegotiationError(ProtocolError):
    """The peers share no protocol version (or the peer answered one not offered)."""


class DiscoveryError(NegotiationError):
    """`server/discover` failed with an error that is no version mismatch
    (say -32603: the server could not build its result), and the
    `initialize` fallback settled no version either. The server's error is
    the `__cause__`.

    Attributes:
        version: the protocol version the probe named.
        error: the server's error answering `server/discover` (code,
            message, data).
        fallback: why the `initialize` fallback failed (None: the client
            allows no legacy version, so none was tried).
    """

    def __init__(
        self, version: str, error: RpcError, fallback: McpError | None = None
    ) -> None:
        told = f"server/discover at {version} failed: {error}"
        if error.data is not None:
            told += f", data: {error.data!r}"
        if fallback is None:
            told += "; the client allows no legacy version to fall back to"
        else:
            told += f"; the initialize fallback failed too: {fallback}"
        super().__init__(told)
        self.version = version
        self.error = error
        self.fallback = fallback


class CapabilityError(McpError):
    """A request needs a capability the peer did not declare, so it was not sent.

    Attributes:
        method: the request's method.
        capability: the capability it needs (`tools`, `sampling`...).
    """

    def __init__(self, method: str, capability: str, peer: str) -> None:
        super().__init__(
            f"{method} needs the {peer} capability {capability!r}, "
            f"which the {peer} did not declare"
        )
        self.method = method
        self.capability = capability


class TransportError(McpError):
    """The transport failed or was closed."""


class MessageTooLargeError(TransportError):
    """One incoming message was over the transport's size limit and was skipped;
    the transport itself is still usable.

    Attributes:
        limit: the limit, in bytes.
        head, tail: the first and last few KiB of the skipped message (empty
            when unknown), enough to find its id.
    """

    def __init__(
        self, message: str, limit: int, head: bytes = b"", tail: bytes = b""
    ) -> None:
        super().__init__(message)
        self.limit = limit
        self.head = head
        self.tail = tail


class RpcError(McpError):
    """An error to send (or received) as a JSON-RPC error response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class MethodNotFoundError(RpcError):
    """The peer does not implement the method (-32601)."""

    def __init__(self, method: str) -> None:
        super().__init__(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        self.method = method


class InvalidParamsError(RpcError):
    """The params do not fit the method's params type (-32602)."""

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(
            ErrorCode.INVALID_PARAMS, f"Invalid params for {method}: {reason}"
        )
        self.method = method
        self.reason = reason


class RequestTimeoutError(McpError, TimeoutError):
    """No response arrived within the request's timeout; the peer was told to
    cancel it. `request_id` is None where the caller does not know it (a
    timeout kept above the engine, as `Client`'s reset on progress)."""

    def __init__(self, method: str, request_id: int | None, timeout: float) -> None:
        sent = method if request_id is None else f"{method} (id {request_id})"
        super().__init__(f"{sent} timed out after {timeout} s")
        self.method = method
        self.request_id = request_id
        self.timeout = timeout

"""JSON-RPC 2.0: envelopes, the `Connection` (correlation, cancellation, timeouts),
table-driven dispatch and the `Transport` contract. Stands on the codec.
"""

from .connection import (
    Connection,
    Peer,
    RequestContext,
    RequestId,
    current_request,
    request_in_progress,
)
from .dispatch import Dispatcher
from .transport import Transport

__all__ = [
    "Connection",
    "Dispatcher",
    "Peer",
    "RequestContext",
    "RequestId",
    "Transport",
    "current_request",
    "request_in_progress",
]

"""JSON-RPC 2.0: envelopes, the `Connection` (correlation, cancellation, timeouts),
serving one request (`current_request`), table-driven dispatch and the
`Transport` contract. Stands on the codec.
"""

from .connection import Connection, RequestId
from .dispatch import Dispatcher
from .serving import Peer, RequestContext, current_request, request_in_progress
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

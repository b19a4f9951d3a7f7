"""The high-level client: `Client`, one object for any server (a command, a
URL, an App in this process), any transport and any revision; `ClientGroup`,
several servers behind one object. Stands on protocol (ClientSession) and
transports (stdio, memory, HTTP).
"""

from .callbacks import (
    ElicitationCallback,
    LogCallback,
    ProgressCallback,
    ResourceUpdatedCallback,
    RootsOption,
    SamplingCallback,
)
from .client import VERSION_CACHE, Client, Negotiated
from .group import ClientGroup, GroupError, GroupMember, RoutingError
from .targets import HasSession, Target

__all__ = [
    "VERSION_CACHE",
    "Client",
    "ClientGroup",
    "ElicitationCallback",
    "GroupError",
    "GroupMember",
    "HasSession",
    "LogCallback",
    "Negotiated",
    "ProgressCallback",
    "ResourceUpdatedCallback",
    "RootsOption",
    "RoutingError",
    "SamplingCallback",
    "Target",
]

"""The high-level client side: several servers behind one object (`ClientGroup`).
Stands on protocol (ClientSession) and transports, like `app` on the server side.
"""

from .group import ClientGroup, GroupError, GroupMember, RoutingError

__all__ = ["ClientGroup", "GroupError", "GroupMember", "RoutingError"]

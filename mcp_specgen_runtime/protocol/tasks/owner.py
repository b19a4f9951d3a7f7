"""Whom a task belongs to: the key `TaskRecord.owner` holds.

- An authenticated request (the transport set `current_request().principal`)
  binds the task to the principal's `binding` (an OAuth principal: issuer,
  subject, client), so the caller sees its tasks from any session or
  instance, and no other caller sees them.
- An anonymous request binds it to the connection it came in on (the
  legacy stdio connection or HTTP session), so two anonymous sessions cannot
  read each other's tasks; the tasks are then out of reach once the session
  ends (they still run to completion and expire).

The key is a digest, never the principal itself, so a store holds no claims.

Limits (rate, active tasks) are kept per owner, except for a caller that has
no owner (an anonymous 2026 request: its task belongs to whoever holds the
id): `limit_key` then tells callers apart by their network address (HTTP)
or their connection (stdio), so one cannot spend the others' limits.
"""

from __future__ import annotations

from mcp_specgen_runtime.jsonrpc.serving import peer_address, request_in_progress

from ..request_state import principal_digest

__all__ = ["limit_key", "owner_of", "principal_owner"]


def principal_owner(principal: object) -> str | None:
    """The owner key of `principal` (None for anonymous)."""
    digest = principal_digest(principal)
    return "principal:" + digest.hex() if digest else None


def owner_of(connection_key: str | None) -> str | None:
    """The owner of a task created by the request being served: its
    principal's, else `connection:<connection_key>` (None: anyone holding the
    id, for a caller that cannot be told apart at all)."""
    context = request_in_progress()
    principal = None if context is None else context.principal
    owner = principal_owner(principal)
    if owner is not None:
        return owner
    return None if connection_key is None else "connection:" + connection_key


def limit_key(owner: str | None) -> str | None:
    """Whose limits an operation of `owner` spends: the owner's, else (an
    anonymous owner) the client address of the request being served, else
    its connection; None outside any request."""
    if owner is not None:
        return owner
    address = peer_address()
    if address is not None:
        return "address:" + address
    context = request_in_progress()
    return None if context is None else f"link:{id(context.connection):x}"

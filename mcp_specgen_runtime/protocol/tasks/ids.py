"""Task ids: unguessable, URL-safe, from the operating system's CSPRNG."""

from __future__ import annotations

import secrets

__all__ = ["TASK_ID_BYTES", "new_task_id"]

TASK_ID_BYTES = 24
"""192 bits of entropy: ids cannot be guessed even without owner binding."""


def new_task_id() -> str:
    """A fresh task id (32 URL-safe characters)."""
    return secrets.token_urlsafe(TASK_ID_BYTES)

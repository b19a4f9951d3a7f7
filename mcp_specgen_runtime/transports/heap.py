"""Keep freed memory in the process for the next large message (glibc).

Serving a 1 MB message allocates a few MB of short-lived buffers (the line,
the params, the decoded string, the encoded result). glibc hands memory at
the top of its heap back to the system as soon as it is freed, so every large
message paid for its pages again: about 950 page faults per 1 MB echo, a third
of the server's CPU. Once large messages show up, `keep_freed_memory` asks
malloc to serve blocks up to `MMAP_BELOW` from the heap and to keep up to
`TRIM_ABOVE` bytes freed at its top: the pages of one message serve the
next. The cost is that much memory kept after the largest message.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["MMAP_BELOW", "TRIM_ABOVE", "keep_freed_memory"]

logger = logging.getLogger(__name__)

MMAP_BELOW = 8 << 20
"""Blocks smaller than this come from the heap (M_MMAP_THRESHOLD)."""

TRIM_ABOVE = 16 << 20
"""Freed bytes at the heap's top kept for reuse (M_TRIM_THRESHOLD)."""

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_kept = False


def _mallopt() -> Any:
    """glibc's `mallopt`, or None on another C library."""
    # Imported here: most servers never see a large message (cold start).
    import ctypes
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    return getattr(ctypes.CDLL(None), "mallopt", None)


def keep_freed_memory() -> bool:
    """Tune malloc for large messages, once per process; whether it is (or
    already was) tuned: False where the C library is not glibc."""
    global _kept
    if _kept:
        return True
    mallopt = _mallopt()
    if mallopt is None:
        return False
    # Both or neither: a fixed trim threshold alone leaves the mmap threshold
    # at 128 KiB, and every large block is then mapped and unmapped anew.
    if mallopt(_M_MMAP_THRESHOLD, MMAP_BELOW) and mallopt(
        _M_TRIM_THRESHOLD, TRIM_ABOVE
    ):
        _kept = True
    else:
        logger.debug("mallopt refused the large-message settings")
    return _kept

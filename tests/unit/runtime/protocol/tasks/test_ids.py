"""Task ids: unguessable and URL-safe."""

from __future__ import annotations

import re

from mcp_specgen_runtime.protocol.tasks.ids import TASK_ID_BYTES, new_task_id


def test_ids_carry_at_least_128_bits_and_are_url_safe() -> None:
    assert TASK_ID_BYTES * 8 >= 128
    ids = {new_task_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", i) for i in ids)

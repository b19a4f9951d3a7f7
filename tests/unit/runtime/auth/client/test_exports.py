"""`mcp_specgen_runtime.auth.client` exports a sorted `__all__` of real names."""

from __future__ import annotations

import mcp_specgen_runtime.auth.client as client


def test_all_is_sorted_and_complete() -> None:
    assert client.__all__ == sorted(set(client.__all__))
    for name in client.__all__:
        assert getattr(client, name) is not None

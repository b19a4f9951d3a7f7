"""Fixtures shared by the peer tests: the OAuth deployment."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from benchmarks import node22
from tests.peers.oidc_support import Deployment

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session")
def deployment() -> Iterator[Deployment]:
    """oidc-provider and the protected example, for every test that asks;
    none of them may write on stderr."""
    node22.ensure_oidc_provider(print)
    running = Deployment(node22.node22_executable())
    try:
        yield running
    finally:
        errors = running.stop()
        assert errors == dict.fromkeys(errors, "")

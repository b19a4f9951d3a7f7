"""Shared test setup: the repository paths and the synced schemas."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from benchmarks.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "schema"
GENERATED_DIR = ROOT / "generated"
# The official schemas live beside the repository (never copied into it);
# MCP_CODEGEN_SCHEMA_SOURCE may point elsewhere.
SHARED_SCHEMAS = Path(
    os.environ.get("MCP_CODEGEN_SCHEMA_SOURCE", ROOT.parent / "shared" / "mcp-schemas")
)


@pytest.fixture(scope="session", autouse=True)
def synced_schemas() -> None:
    """Make sure schema/<rev>/schema.json exist, syncing from the shared folder."""
    from mcp_specgen.manifest import load_manifest
    from mcp_specgen.sync import schema_path, sync

    manifest = load_manifest(SCHEMA_DIR)
    missing = tuple(
        pin
        for pin in manifest.revisions
        if not schema_path(SCHEMA_DIR, pin.name).exists()
    )
    if missing:
        sync(manifest, SCHEMA_DIR, missing, source_dir=SHARED_SCHEMAS)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private `redis-server` for the session (installed when missing; the
    tests using it skip, saying why, when that cannot be done, except on CI,
    which installs as root and must test against Redis)."""
    from benchmarks.peers import PeerInstallError
    from benchmarks.redis_server import RedisServer, ensure_redis_server

    try:
        binary = ensure_redis_server()
    except PeerInstallError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI could not install redis-server: {exc}")
        pytest.skip(f"no redis-server to test against: {exc}")
    with RedisServer(binary) as server:
        yield server


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix no other test uses (tests share the session's server)."""
    return f"test:{uuid.uuid4().hex}:"

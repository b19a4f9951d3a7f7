"""Shared test setup: the repository paths and the synced schemas."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    from mcp_codegen.manifest import load_manifest
    from mcp_codegen.sync import schema_path, sync

    manifest = load_manifest(SCHEMA_DIR)
    missing = tuple(
        pin
        for pin in manifest.revisions
        if not schema_path(SCHEMA_DIR, pin.name).exists()
    )
    if missing:
        sync(manifest, SCHEMA_DIR, missing, source_dir=SHARED_SCHEMAS)

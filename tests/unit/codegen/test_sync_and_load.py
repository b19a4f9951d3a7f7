"""Manifest, schema sync, loading and overrides."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import pytest

import mcp_specgen_types
from mcp_specgen.errors import OverrideError, SchemaLoadError
from mcp_specgen.load import load_schema
from mcp_specgen.manifest import load_manifest
from mcp_specgen.overrides import Patch, apply_patches, load_patches
from mcp_specgen.sync import schema_path, sync
from tests.conftest import SCHEMA_DIR, SHARED_SCHEMAS


@pytest.fixture
def schema_dir(tmp_path: Path) -> Path:
    """A private copy of schema/ (manifest and overrides, nothing synced)."""
    target = tmp_path / "schema"
    target.mkdir()
    shutil.copy(SCHEMA_DIR / "manifest.toml", target / "manifest.toml")
    shutil.copytree(SCHEMA_DIR / "overrides", target / "overrides")
    return target


def test_manifest_lists_revisions_in_protocol_order() -> None:
    manifest = load_manifest(SCHEMA_DIR)
    dated = [name for name in manifest.names if name != "draft"]
    assert manifest.names == (*sorted(dated), "draft")
    assert manifest.names == tuple(mcp_specgen_types.KNOWN_VERSIONS)
    assert "2024-11-05" in dated
    assert "2026-07-28" in dated
    assert manifest.revisions[-1].module == "draft"
    for pin in manifest.revisions:
        assert pin.url.endswith(f"/schema/{pin.name}/schema.json")


def test_sync_from_a_folder_checks_hashes(schema_dir: Path) -> None:
    manifest = load_manifest(schema_dir)
    _, results = sync(
        manifest, schema_dir, manifest.select(["2025-06-18"]), source_dir=SHARED_SCHEMAS
    )
    assert [r.revision for r in results] == ["2025-06-18"]
    data = schema_path(schema_dir, "2025-06-18").read_bytes()
    assert hashlib.sha256(data).hexdigest() == manifest.get("2025-06-18").sha256


def test_sync_refuses_a_hash_mismatch_and_writes_nothing(
    schema_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "upstream"
    (source / "2025-06-18").mkdir(parents=True)
    (source / "2025-06-18" / "schema.json").write_text('{"changed": true}')
    manifest = load_manifest(schema_dir)
    digest = hashlib.sha256(b'{"changed": true}').hexdigest()
    with pytest.raises(SchemaLoadError) as caught:
        sync(manifest, schema_dir, manifest.select(["2025-06-18"]), source_dir=source)
    message = str(caught.value)
    assert f"the file's sha256 (its SHA-256 digest) is {digest}" in message
    assert f"the manifest pins sha256 {manifest.get('2025-06-18').sha256}" in message
    assert "`mcp-codegen schema pin 2025-06-18`" in message
    assert f'`sha256 = "{digest}"`' in message
    assert not schema_path(schema_dir, "2025-06-18").exists()


def test_accepting_a_new_hash_records_it(schema_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "upstream"
    (source / "draft").mkdir(parents=True)
    content = (
        b'{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {}}'
    )
    (source / "draft" / "schema.json").write_bytes(content)
    manifest = load_manifest(schema_dir)
    updated, results = sync(
        manifest,
        schema_dir,
        manifest.select(["draft"]),
        source_dir=source,
        accept_new_hash=True,
    )
    digest = hashlib.sha256(content).hexdigest()
    assert results[0].accepted_new_hash
    assert load_manifest(schema_dir).get("draft").sha256 == digest
    assert updated.get("draft").sha256 == digest
    # Other pins and the header comments are kept.
    assert load_manifest(schema_dir).get("2024-11-05") == manifest.get("2024-11-05")
    assert (schema_dir / "manifest.toml").read_text().startswith("# Pinned MCP schema")


def test_unknown_revision_is_a_clear_error() -> None:
    with pytest.raises(SchemaLoadError, match="unknown revision '1999-01-01'"):
        load_manifest(SCHEMA_DIR).get("1999-01-01")


def test_load_requires_a_synced_file(schema_dir: Path) -> None:
    pin = load_manifest(schema_dir).get("2025-03-26")
    with pytest.raises(SchemaLoadError, match="mcp-codegen schema sync 2025-03-26"):
        load_schema(schema_dir, pin)


def test_load_rejects_a_file_edited_after_sync(schema_dir: Path) -> None:
    manifest = load_manifest(schema_dir)
    sync(
        manifest, schema_dir, manifest.select(["2025-03-26"]), source_dir=SHARED_SCHEMAS
    )
    path = schema_path(schema_dir, "2025-03-26")
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(SchemaLoadError, match="manifest pins"):
        load_schema(schema_dir, manifest.get("2025-03-26"))


def test_load_validates_against_the_meta_schema(schema_dir: Path) -> None:
    from mcp_specgen.load import from_document

    pin = load_manifest(schema_dir).get("draft")
    bad = {"$schema": pin.dialect, "$defs": {"X": {"type": 12}}}
    with pytest.raises(SchemaLoadError, match="not a valid") as caught:
        from_document(bad, pin, "0" * 64)
    assert caught.value.pointer.startswith("#/$defs/X")


def test_overrides_apply_and_check_expectations() -> None:
    document = {"a": {"required": ["x", "y"]}}
    patched = apply_patches(
        document,
        (
            Patch("/a/required", ["x", "y"], ["x"], "why"),
            Patch("/a/default", _absent(), 1, "add"),
        ),
        "rev",
    )
    assert patched == {"a": {"required": ["x"], "default": 1}}
    assert document == {"a": {"required": ["x", "y"]}}
    with pytest.raises(OverrideError, match="expects \\['z'\\]") as caught:
        apply_patches(document, (Patch("/a/required", ["z"], [], "why"),), "rev")
    assert caught.value.pointer == "/a/required"
    with pytest.raises(OverrideError, match="does not resolve"):
        apply_patches(document, (Patch("/b/c", 1, 2, "why"),), "rev")


def _absent() -> object:
    from mcp_specgen import overrides

    return overrides._ABSENT


def test_shipped_overrides_still_match_the_schemas() -> None:
    manifest = load_manifest(SCHEMA_DIR)
    for pin in manifest.revisions:
        patches = load_patches(SCHEMA_DIR, pin.name)
        document = json.loads(schema_path(SCHEMA_DIR, pin.name).read_text())
        apply_patches(document, patches, pin.name)  # raises when stale
    assert load_patches(SCHEMA_DIR, "2026-07-28")


def test_a_manifest_entry_without_sha256_says_how_to_pin(
    schema_dir: Path, tmp_path: Path
) -> None:
    path = schema_dir / "manifest.toml"
    text = path.read_text()
    pinned = load_manifest(schema_dir).get("2025-06-18").sha256
    path.write_text(text.replace(f'sha256 = "{pinned}"', 'sha256 = ""'))
    manifest = load_manifest(schema_dir)
    with pytest.raises(SchemaLoadError) as caught:
        sync(
            manifest,
            schema_dir,
            manifest.select(["2025-06-18"]),
            source_dir=SHARED_SCHEMAS,
        )
    message = str(caught.value)
    assert "pins ;" not in message
    assert "the manifest pins no sha256 for it yet" in message
    assert f"is {pinned}" in message
    assert "`mcp-codegen schema pin 2025-06-18`" in message


def test_a_manifest_entry_may_leave_out_sha256(schema_dir: Path) -> None:
    path = schema_dir / "manifest.toml"
    pinned = load_manifest(schema_dir).get("2025-06-18").sha256
    path.write_text(path.read_text().replace(f'sha256 = "{pinned}"\n', ""))
    assert load_manifest(schema_dir).get("2025-06-18").sha256 == ""


def test_load_of_an_unpinned_file_prints_its_digest(schema_dir: Path) -> None:
    manifest = load_manifest(schema_dir)
    sync(
        manifest, schema_dir, manifest.select(["2025-03-26"]), source_dir=SHARED_SCHEMAS
    )
    pin = manifest.get("2025-03-26")
    unpinned = dataclasses.replace(pin, sha256="")
    with pytest.raises(SchemaLoadError) as caught:
        load_schema(schema_dir, unpinned)
    assert f"is {pin.sha256}, but the manifest pins no sha256" in str(caught.value)

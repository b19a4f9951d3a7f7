"""Golden test of an extension's generated modules: `types.py` and
`methods.py` of a tiny extension schema (`extension/schema.json`), byte for
byte, as `render_extension` writes them (a header naming the extension and
its schema's hash, `EXTENSION_ID` instead of `PROTOCOL_VERSION`, no dispatch
stubs). Refresh with `MCP_CODEGEN_UPDATE_GOLDEN=1`, then review the diff.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import msgspec
import pytest

from mcp_specgen.emit import EXTENSIONS_PACKAGE, render_extension
from mcp_specgen.pipeline import revision_from_document

HERE = Path(__file__).resolve().parent / "extension"
UPDATE_ENV = "MCP_CODEGEN_UPDATE_GOLDEN"


def rendered() -> dict[str, str]:
    document = json.loads((HERE / "schema.json").read_text(encoding="utf-8"))
    rev = revision_from_document(document, "com.example/things@2026-07-28")
    rev = msgspec.structs.replace(
        rev,
        module="com_example_things",
        extension="com.example/things",
        source="extensions/com.example.things/2026-07-28/schema.json",
    )
    return render_extension(rev)


def test_the_files_of_an_extension_package() -> None:
    base = f"{EXTENSIONS_PACKAGE}/com_example_things"
    assert sorted(rendered()) == [
        f"{base}/__init__.py",
        f"{base}/methods.py",
        f"{base}/py.typed",
        f"{base}/types.py",
    ]


@pytest.mark.parametrize("module", ["types.py", "methods.py"])
def test_extension_output_matches_golden(module: str) -> None:
    actual = rendered()[f"{EXTENSIONS_PACKAGE}/com_example_things/{module}"]
    path = HERE / "expected" / module
    if os.environ.get(UPDATE_ENV) == "1" and not os.environ.get("CI"):
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"{path} (golden)",
            tofile="generated",
        )
    )
    assert actual == expected, diff

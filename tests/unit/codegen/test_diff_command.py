"""The diff reports (text, markdown, JSON) and `mcp-codegen diff`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_specgen import ir
from mcp_specgen.cli import main
from mcp_specgen.diff_report import FORMATS, summary, to_json, to_markdown, to_text
from mcp_specgen.pipeline import revision_from_document
from mcp_specgen.revdiff import RevisionDiff, diff_revisions
from tests.conftest import ROOT, SCHEMA_DIR

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SAMPLE = ROOT / "docs" / "diff-2025-11-25-to-2026-07-28.md"
SAMPLE_COMMAND = "mcp-codegen diff 2025-11-25 2026-07-28 --format markdown"
SAMPLE_HEADING = (
    f"# MCP schema changes, 2025-11-25 → 2026-07-28: output of `{SAMPLE_COMMAND}`"
)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def build(defs: dict[str, Any], name: str) -> ir.Revision:
    return revision_from_document({"$schema": DIALECT, "$defs": defs}, name)


@pytest.fixture(scope="module")
def small() -> RevisionDiff:
    """One change of each kind between two tiny revisions."""

    def tagged(tag: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"type": {"type": "string", "const": tag}},
            "required": ["type"],
        }

    a = {
        "A": tagged("a"),
        "B": tagged("b"),
        "C": tagged("c"),
        "U": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
        "Tool": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "title": {"type": "string"}},
            "required": ["name"],
        },
        "Id": {"type": "string"},
        "Gone": {"type": "object", "properties": {"x": {"type": "string"}}},
    }
    b = {
        **a,
        "U": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/C"}]},
        "Tool": {
            "type": "object",
            "properties": {
                "name": {"type": "integer"},
                "icons": {"type": "array", "items": {"type": "string"}},
            },
            "additionalProperties": False,
        },
        "Id": {"type": ["string", "integer"]},
        "New": {"type": "object", "properties": {"y": {"type": "string"}}},
    }
    del b["Gone"]
    return diff_revisions(build(a, "old"), build(b, "new"))


def test_text_report(small: RevisionDiff) -> None:
    text = to_text(small)
    lines = text.splitlines()
    assert lines[0] == summary(small)
    assert lines[0] == (
        "old -> new: 0 methods added, 0 removed, 0 changed, 0 unchanged; "
        "1 types added, 1 removed, 3 changed, 3 unchanged"
    )
    assert text.endswith("\n")
    assert "Types added (1)" in lines
    assert "Changed types (3)" in lines
    tool = lines.index("  Tool (struct)")
    assert lines[tool + 1 : tool + 5] == [
        "    ~ unknown keys: kept (open) -> rejected (closed)",
        "    + icons: list[str] | UnsetType (optional)",
        "    - title",
        "    ~ name: str (required) -> int | UnsetType (optional)",
    ]
    union = lines.index("  U (union)")
    assert lines[union + 1 : union + 3] == ["    + C", "    - B"]
    assert "    ~ target: str -> str | int" in lines


def test_text_tables_are_aligned(small: RevisionDiff) -> None:
    lines = to_text(small).splitlines()
    start = lines.index("Types added (1)")
    header, row = lines[start + 1 : start + 3]
    assert header.index("kind") == row.index("struct")


def test_empty_diff_says_so() -> None:
    rev = build({"A": {"type": "string"}}, "same")
    empty = diff_revisions(rev, rev)
    assert to_text(empty).splitlines()[1] == "no differences"
    assert "No differences." in to_markdown(empty)


def test_markdown_report(small: RevisionDiff) -> None:
    markdown = to_markdown(small)
    assert markdown.startswith("**old → new**: 0 methods added")
    assert "## Types added\n\n| Type | Kind |\n| --- | --- |\n| `New` | struct |" in (
        markdown
    )
    assert "## Types removed" in markdown
    assert "### `Tool` (struct)" in markdown
    assert "| + | `icons` |  | `list[str] \\| UnsetType (optional)` |" in markdown
    assert "| - | member | `B` |  |" in markdown
    assert "## Methods" not in markdown


def test_json_report(small: RevisionDiff) -> None:
    text = to_json(small)
    data = json.loads(text)
    assert set(data) == {
        "a",
        "b",
        "summary",
        "methods_added",
        "methods_removed",
        "method_changes",
        "methods_unchanged",
        "types_added",
        "types_removed",
        "type_changes",
        "types_unchanged",
    }
    assert data["summary"] == small.counts
    assert data["types_added"] == [{"name": "New", "kind": "struct"}]
    tool = next(c for c in data["type_changes"] if c["name"] == "Tool")
    assert tool["fields_removed"] == [
        {"wire_name": "title", "annotation": "str", "required": False, "default": None}
    ]
    assert (tool["open_a"], tool["open_b"]) == (True, False)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_formats_are_the_three_emitters() -> None:
    assert FORMATS == {"text": to_text, "markdown": to_markdown, "json": to_json}


def test_cli_text_is_the_default() -> None:
    code, output = run(
        "diff", "2024-11-05", "2025-03-26", "--schema-dir", str(SCHEMA_DIR)
    )
    assert code == 0, output
    assert output.splitlines()[0] == (
        "2024-11-05 -> 2025-03-26: 0 methods added, 0 removed, 0 changed, "
        "24 unchanged; 9 types added, 7 removed, 13 changed, 113 unchanged"
    )
    assert "    + annotations: ToolAnnotations | UnsetType (optional)" in output


def test_cli_json() -> None:
    code, output = run(
        "diff",
        "2025-11-25",
        "2026-07-28",
        "--format",
        "json",
        "--schema-dir",
        str(SCHEMA_DIR),
    )
    assert code == 0, output
    data = json.loads(output)
    assert (data["a"], data["b"]) == ("2025-11-25", "2026-07-28")
    removed = {m["name"] for m in data["methods_removed"]}
    added = {m["name"] for m in data["methods_added"]}
    assert {"initialize", "ping"} <= removed
    assert {"server/discover", "subscriptions/listen"} <= added
    call_tool = next(c for c in data["type_changes"] if c["name"] == "CallToolResult")
    assert "resultType" in {f["wire_name"] for f in call_tool["fields_added"]}


def test_cli_unknown_revision_exits_1() -> None:
    code, output = run(
        "diff", "2025-11-25", "1999-01-01", "--schema-dir", str(SCHEMA_DIR)
    )
    assert code == 1
    assert "error: unknown revision '1999-01-01'" in output


def test_cli_unsynced_schema_exits_1(tmp_path: Path) -> None:
    shutil.copy(SCHEMA_DIR / "manifest.toml", tmp_path)
    code, output = run(
        "diff", "2024-11-05", "2025-03-26", "--schema-dir", str(tmp_path)
    )
    assert code == 1
    assert "error: 2024-11-05:" in output


def test_cli_rejects_an_unknown_format() -> None:
    code, output = run("diff", "2024-11-05", "2025-03-26", "--format", "html")
    assert code == 2
    assert "html" in output


def test_committed_sample_is_current() -> None:
    code, output = run(
        "diff",
        "2025-11-25",
        "2026-07-28",
        "--format",
        "markdown",
        "--schema-dir",
        str(SCHEMA_DIR),
    )
    assert code == 0, output
    expected = f"{SAMPLE_HEADING}\n\n{output}"
    assert SAMPLE.read_text(encoding="utf-8") == expected, (
        f"{SAMPLE.relative_to(ROOT)} is stale; regenerate it with: "
        f"{{ echo '{SAMPLE_HEADING}'; echo; .venv/bin/{SAMPLE_COMMAND}; }} "
        f"> {SAMPLE.relative_to(ROOT)}"
    )


def test_committed_sample_shows_the_known_changes() -> None:
    sample = SAMPLE.read_text(encoding="utf-8")
    methods_removed = _section(sample, "## Methods removed")
    methods_added = _section(sample, "## Methods added")
    for method in ("initialize", "ping", "logging/setLevel", "tasks/get"):
        assert f"| `{method}` |" in methods_removed
    for method in ("server/discover", "subscriptions/listen"):
        assert f"| `{method}` |" in methods_added
    call_tool = _section(sample, "### `CallToolResult` (struct)")
    assert "| + | `resultType` |  | `str = 'complete'` |" in call_tool


def _section(markdown: str, heading: str) -> str:
    """The text from `heading` to the next heading."""
    start = markdown.index(heading + "\n") + len(heading)
    ends = [markdown.find(mark, start) for mark in ("\n## ", "\n### ")]
    return markdown[start : min((e for e in ends if e != -1), default=len(markdown))]

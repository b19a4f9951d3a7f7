"""Override rules: the revisions a patch applies to, and rules a revision loses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_specgen.cli import main
from mcp_specgen.errors import OverrideError
from mcp_specgen.manifest import load_manifest
from mcp_specgen.overrides import Patch, check_inherited, load_patches, load_rules
from tests.conftest import SCHEMA_DIR

ORDER = ("a", "b", "c", "draft")
NEW = "2099-12-31"
"""The synthetic revision added (before draft) to a copy of schema/."""


def patch(**where: object) -> Patch:
    return Patch("/x", 1, 2, "why", source="rule.toml", **where)  # type: ignore[arg-type]


def test_since_covers_that_revision_and_every_later_one() -> None:
    rule = patch(since="b")
    assert [rev for rev in ORDER if rule.applies_to(rev, ORDER)] == ["b", "c", "draft"]


def test_a_revision_added_after_since_inherits_the_rule() -> None:
    rule = patch(since="b")
    assert rule.applies_to("d", (*ORDER[:-1], "d", "draft"))


def test_until_ends_a_since_rule() -> None:
    rule = patch(since="a", until="b")
    assert [rev for rev in ORDER if rule.applies_to(rev, ORDER)] == ["a", "b"]


def test_an_explicit_list_applies_to_those_revisions_only() -> None:
    rule = patch(revisions=("a", "c"))
    assert [rev for rev in ORDER if rule.applies_to(rev, ORDER)] == ["a", "c"]


def write_rule(schema_dir: Path, text: str) -> None:
    folder = schema_dir / "overrides"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rule.toml").write_text(text)


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("", "exactly one of `since` or `revisions`"),
        ('since = "a"\nrevisions = ["a"]', "exactly one of `since` or `revisions`"),
        ('revisions = ["a"]\nuntil = "b"', "`until` goes with `since`"),
        ('since = "zz"', "names 'zz', which the manifest does not pin"),
        ('since = "c"\nuntil = "a"', "`until` 'a' comes before `since` 'c'"),
    ],
)
def test_malformed_applicability_is_refused(
    tmp_path: Path, where: str, message: str
) -> None:
    write_rule(
        tmp_path, f'[[patch]]\n{where}\npointer = "/x"\nvalue = 1\nreason = "r"\n'
    )
    with pytest.raises(OverrideError, match=message.replace("(", "\\(")):
        load_rules(tmp_path, ORDER)


def test_rules_load_from_every_file_in_name_order(tmp_path: Path) -> None:
    folder = tmp_path / "overrides"
    folder.mkdir()
    for name in ("b-rule", "a-rule"):
        (folder / f"{name}.toml").write_text(
            f'[[patch]]\nsince = "a"\npointer = "/{name}"\nvalue = 1\nreason = "r"\n'
        )
    rules = load_rules(tmp_path, ORDER)
    assert [(rule.pointer, rule.source) for rule in rules] == [
        ("/a-rule", "a-rule.toml"),
        ("/b-rule", "b-rule.toml"),
    ]


def test_a_rule_that_stops_while_still_needed_is_an_error() -> None:
    rule = patch(revisions=("a", "b"))
    with pytest.raises(OverrideError) as caught:
        check_inherited({"x": 1}, (rule,), "c", ORDER)
    error = caught.value
    assert (error.revision, error.pointer) == ("c", "/x")
    assert "rule.toml: 'why' applies to b but not to c" in error.message
    assert "still holds 1 there" in error.message
    assert "until = 'b'" in error.message


def test_a_stopped_rule_whose_value_changed_is_fine() -> None:
    check_inherited({"x": 5}, (patch(revisions=("a", "b")),), "c", ORDER)
    check_inherited({}, (Patch("/y/z", 1, 2, "why", revisions=("b",)),), "c", ORDER)


def test_a_rule_ended_by_until_is_deliberate() -> None:
    check_inherited({"x": 1}, (patch(since="a", until="b"),), "c", ORDER)


def test_a_rule_adding_a_member_still_needed_is_an_error() -> None:
    rule = Patch("/y", _absent(), 2, "add", revisions=("b",))
    with pytest.raises(OverrideError, match="still holds nothing"):
        check_inherited({}, (rule,), "c", ORDER)


def _absent() -> object:
    from mcp_specgen import overrides

    return overrides._ABSENT


def test_the_shipped_rules_are_stated_by_revision_range() -> None:
    order = load_manifest(SCHEMA_DIR).names
    rules = load_rules(SCHEMA_DIR, order)
    assert rules
    result_type = [r for r in rules if r.reason == "absent resultType means complete"]
    assert {r.since for r in result_type} == {"2026-07-28"}
    assert not any(r.until for r in rules)
    assert load_patches(SCHEMA_DIR, "draft") == load_patches(SCHEMA_DIR, "2026-07-28")


def add_revision(schema_dir: Path, name: str, copy_of: str = "2026-07-28") -> None:
    """Add revision `name` (a copy of `copy_of`'s schema) before draft."""
    shutil.copytree(schema_dir / copy_of, schema_dir / name)
    path = schema_dir / "manifest.toml"
    pin = load_manifest(schema_dir).get(copy_of)
    entry = (
        f'[[revision]]\nname = "{name}"\nurl = "{pin.url}"\nsha256 = "{pin.sha256}"\n'
        f'dialect = "{pin.dialect}"\nera = "{pin.era}"\n\n'
    )
    draft = '[[revision]]\nname = "draft"'
    path.write_text(path.read_text().replace(draft, entry + draft))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of schema/ with a new revision `2099-12-31` (a copy of 2026-07-28)."""
    schema_dir = tmp_path / "schema"
    shutil.copytree(SCHEMA_DIR, schema_dir)
    add_revision(schema_dir, "2099-12-31")
    return schema_dir


def test_a_new_revision_inherits_since_rules(project: Path) -> None:
    assert len(load_patches(project, "2099-12-31")) == len(
        load_patches(project, "2026-07-28")
    )


def test_generate_names_the_rule_a_new_revision_lost(
    project: Path, tmp_path: Path
) -> None:
    rule = project / "overrides" / "result-type-default.toml"
    names = load_manifest(project).names
    before = names[names.index("2026-07-28") : names.index(NEW)]
    listed = "revisions = [" + ", ".join(f'"{name}"' for name in before) + "]"
    rule.write_text(rule.read_text().replace('since = "2026-07-28"', listed))
    result = CliRunner().invoke(
        main, ["generate", "--schema-dir", str(project), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "error: 2099-12-31, /$defs/CacheableResult/required: the override " in (
        result.output
    )
    assert "result-type-default.toml" in result.output
    assert f"applies to {before[-1]} but not to 2099-12-31" in result.output


def test_a_stale_expectation_names_revision_pointer_and_rule(
    project: Path, tmp_path: Path
) -> None:
    path = project / "2099-12-31" / "schema.json"
    document = json.loads(path.read_text())
    document["$defs"]["CallToolResult"]["required"] = ["content"]
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(
        main,
        [
            "schema",
            "pin",
            "2099-12-31",
            "--schema-dir",
            str(project),
            "--from",
            str(project),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2099-12-31: pinned sha256 " in result.output
    result = CliRunner().invoke(
        main, ["generate", "--schema-dir", str(project), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "error: 2099-12-31, /$defs/CallToolResult/required: override " in (
        result.output
    )
    assert "expects ['content', 'resultType'] but the schema has ['content']" in (
        result.output
    )

"""The drill: a revision the specification has not published yet, added as the
README says, in a temporary copy of the project.

The new revision (`NEW`, dated far ahead) is a copy of the newest dated
revision's schema (2026-07-28 today) with one more type. The drill pins it,
syncs, generates, checks, makes a scaffold speaking it, runs the scaffold's
own tests, and talks to that scaffold with today's client (newest dated
revision 2026-07-28) and with the new revision's client.
Everything the copy runs comes from the copy (PYTHONPATH), never from the
installed project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_specgen_types
from mcp_specgen_runtime.client import Client
from mcp_specgen_types.latest import TextContent
from tests.conftest import ROOT, SCHEMA_DIR, SHARED_SCHEMAS

NEW = "2099-03-01"
"""A date no real revision will have, so the drill keeps working after the next one."""
NEW_TYPE = {
    "type": "object",
    "description": "A type only the drill's revision has.",
    "properties": {"text": {"type": "string", "description": "What it says."}},
    "required": ["text"],
}
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


def run(cwd: Path, env: dict[str, str], *args: str) -> str:
    """Run `args` and return its output; fail the test with it on exit != 0."""
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def codegen(copy: Path, env: dict[str, str], *args: str) -> str:
    return run(copy, env, sys.executable, "-m", "mcp_specgen", *args)


def add_manifest_entry(manifest: Path) -> None:
    """The README's step 1: the entry, before draft, with no sha256 yet."""
    pin = mcp_specgen_types.LATEST_VERSION
    text = manifest.read_text()
    old = text[text.index(f'name = "{pin}"') :]
    url = old[old.index("url = ") : old.index("\n", old.index("url = "))]
    url = url.replace(pin, NEW)
    entry = (
        f'[[revision]]\nname = "{NEW}"\n{url}\n'
        'dialect = "https://json-schema.org/draft/2020-12/schema"\nera = "modern"\n\n'
    )
    draft = '[[revision]]\nname = "draft"'
    manifest.write_text(text.replace(draft, entry + draft))


@pytest.fixture(scope="module")
def drill(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The project copy with the new revision's manifest entry, and its environment."""
    copy = tmp_path_factory.mktemp("drill")
    for part in ("codegen", "templates", "mcp_specgen_runtime", "generated"):
        shutil.copytree(ROOT / part, copy / part, ignore=IGNORED)
    shutil.copytree(SCHEMA_DIR, copy / "schema", ignore=IGNORED)
    upstream = copy / "upstream"
    shutil.copytree(SHARED_SCHEMAS, upstream)
    newest = SCHEMA_DIR / mcp_specgen_types.LATEST_VERSION / "schema.json"
    schema = json.loads(newest.read_text())
    schema["$defs"]["DrillNote"] = NEW_TYPE
    (upstream / NEW).mkdir()
    (upstream / NEW / "schema.json").write_text(json.dumps(schema, indent=2))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            str(copy / part) for part in ("", "codegen", "generated")
        ),
        "MCP_CODEGEN_SCHEMA_SOURCE": str(upstream),
    }
    env.pop("PYTHONSAFEPATH", None)
    add_manifest_entry(copy / "schema" / "manifest.toml")
    return copy, env


@pytest.fixture(scope="module")
def generated(drill: tuple[Path, dict[str, str]]) -> tuple[Path, dict[str, str]]:
    """The README's steps 2 and 3: sync (refused until pinned), pin, generate."""
    copy, env = drill
    unpinned = subprocess.run(
        [sys.executable, "-m", "mcp_specgen", "schema", "sync", NEW],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert unpinned.returncode == 1
    assert "the manifest pins no sha256 for it yet" in unpinned.stderr
    assert f"`mcp-codegen schema pin {NEW}`" in unpinned.stderr
    codegen(copy, env, "schema", "pin", NEW)
    codegen(copy, env, "schema", "sync")
    codegen(copy, env, "generate")
    return drill


@pytest.fixture(scope="module")
def project(generated: tuple[Path, dict[str, str]]) -> Path:
    copy, env = generated
    codegen(copy, env, "new", "demo", "--revision", NEW, "--dir", str(copy))
    return copy / "demo"


def test_generate_and_check_pass(generated: tuple[Path, dict[str, str]]) -> None:
    copy, env = generated
    assert codegen(copy, env, "check").strip() == "generated code is up to date"
    versions = run(
        copy,
        env,
        sys.executable,
        "-c",
        "import mcp_specgen_types as t, json; "
        "print(json.dumps([t.KNOWN_VERSIONS, t.LATEST_VERSION, t.__file__]))",
    )
    known, latest, where = json.loads(versions)
    assert known == [*mcp_specgen_types.KNOWN_VERSIONS[:-1], NEW, "draft"]
    assert latest == NEW
    assert where.startswith(str(copy))


def test_the_new_revision_inherits_the_overrides(
    generated: tuple[Path, dict[str, str]],
) -> None:
    copy, _ = generated
    module = (
        copy
        / "generated"
        / "mcp_specgen_types"
        / f"v{NEW.replace('-', '_')}"
        / "types.py"
    )
    text = module.read_text()
    assert "class DrillNote(" in text
    latest = "v" + mcp_specgen_types.LATEST_VERSION.replace("-", "_")
    ours = ROOT / "generated" / "mcp_specgen_types" / latest / "types.py"
    default = 'msgspec.field(default="complete", name="resultType")'
    assert text.count(default) == ours.read_text().count(default) >= 13


def test_the_scaffolds_own_tests_pass(
    generated: tuple[Path, dict[str, str]], project: Path
) -> None:
    _, env = generated
    output = run(
        project, env, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"
    )
    assert " passed" in output
    assert "failed" not in output


def test_the_new_revisions_client_negotiates_it(
    generated: tuple[Path, dict[str, str]], project: Path
) -> None:
    _, env = generated
    script = (
        "import anyio\n"
        "from mcp_specgen_runtime.client import Client\n"
        "from demo.server import app\n"
        "async def main():\n"
        "    async with Client(app) as client:\n"
        "        result = await client.call_tool('echo', {'message': 'hi'})\n"
        "        print(client.protocol_version, result.content[0].text)\n"
        "anyio.run(main)\n"
    )
    output = run(project, env, sys.executable, "-c", script)
    assert output.split() == [NEW, "hi"]


@pytest.mark.anyio
async def test_a_2026_client_talks_to_the_new_scaffold(
    generated: tuple[Path, dict[str, str]], project: Path
) -> None:
    _, env = generated
    command = [sys.executable, "-m", "demo"]
    with anyio.fail_after(60):
        async with Client(command, cwd=project, env=env, cache=None) as client:
            assert client.protocol_version == mcp_specgen_types.LATEST_VERSION
            result: Any = await client.call_tool("echo", {"message": "hi"})
    content = result.content[0]
    assert isinstance(content, TextContent)
    assert content.text == "hi"

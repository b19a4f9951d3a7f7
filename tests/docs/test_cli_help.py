"""Every `$ mcp-codegen ... --help` shown in the docs prints what the page shows
(a command added or renamed makes the page's copy stale, and this fails)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import blocks

ROOT = Path(__file__).resolve().parents[2]
COMMAND = Path(sys.executable).parent / "mcp-codegen"


def _shown() -> list[tuple[str, list[str], str]]:
    """(where, argv, the output shown) for each `--help` in a console block."""
    found: list[tuple[str, list[str], str]] = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for block in blocks(page.read_text(encoding="utf-8")):
            if block.language != "console":
                continue
            lines = block.code.splitlines()
            for index, line in enumerate(lines):
                if line.startswith("$ mcp-codegen") and line.endswith("--help"):
                    output: list[str] = []
                    for following in lines[index + 1 :]:
                        if following.startswith("$ "):
                            break
                        output.append(following)
                    where = f"{page.relative_to(ROOT)}:{block.line}"
                    argv = shlex.split(line[2:])[1:]
                    found.append((where, argv, "\n".join(output).strip()))
    return found


SHOWN = _shown()


def test_the_docs_show_some_help() -> None:
    assert SHOWN, "no `$ mcp-codegen ... --help` block found"


@pytest.mark.parametrize(("where", "argv", "shown"), SHOWN, ids=[s[0] for s in SHOWN])
def test_the_help_shown_is_the_help_printed(
    where: str, argv: list[str], shown: str
) -> None:
    printed = subprocess.run(
        [str(COMMAND), *argv], capture_output=True, text=True, check=True
    ).stdout
    assert printed.strip() == shown, f"{where} is stale; it should show:\n{printed}"

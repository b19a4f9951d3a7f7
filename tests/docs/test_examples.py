"""Every Python example of the docs and the README runs as written.

Each page is one test: its ```python blocks run in order in one namespace,
in a fresh folder (the current directory while they run, and on `sys.path`),
with this interpreter's folder first on PATH, as in an activated virtualenv.
A block after `<!-- docs: serve -->` is a server program: it is written to
`server.py` in that folder (where later blocks may start or import it), run
as its own process over stdio, and a `Client` must list its tools.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from tests.docs.blocks import Block, python_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
RUNNABLE = [page for page in PAGES if python_blocks(page)]


async def _list_tools(program: Path) -> list[str]:
    from mcp_specgen_runtime import Client

    command = [sys.executable, str(program)]
    async with Client(command, cwd=str(program.parent), stderr="capture") as client:
        return [tool.name for tool in await client.list_all_tools()]


def _serve(block: Block, page: Path, folder: Path) -> None:
    program = folder / "server.py"
    program.write_text(block.code, encoding="utf-8")
    try:
        tools = anyio.run(_list_tools, program)
    except Exception as error:
        where = f"{page.relative_to(ROOT)}:{block.line}"
        raise AssertionError(f"{where}: the server did not list its tools") from error
    assert isinstance(tools, list)


def _run(block: Block, page: Path, namespace: dict[str, object]) -> None:
    code = compile(block.code, f"{page.relative_to(ROOT)}:{block.line}", "exec")
    exec(code, namespace)


@pytest.mark.parametrize(
    "page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE]
)
def test_the_examples_of_the_page_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # As in an activated virtualenv: `python` and `mcp-codegen` are this one's.
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    namespace: dict[str, object] = {"__name__": "docs_example"}
    try:
        for block in python_blocks(page):
            if block.serve:
                _serve(block, page, tmp_path)
            else:
                _run(block, page, namespace)
    finally:
        for name in set(sys.modules) - before:
            origin = getattr(sys.modules[name], "__file__", None) or ""
            if origin.startswith(str(tmp_path) + os.sep):
                del sys.modules[name]


def test_the_docs_have_examples_to_run() -> None:
    # A reader that found nothing would make every page pass vacuously.
    assert len(RUNNABLE) >= 2
    assert any(b.serve for page in RUNNABLE for b in python_blocks(page))

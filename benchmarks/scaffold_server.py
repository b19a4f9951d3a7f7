"""The server a user gets from `mcp-codegen new`, as the round-trip benchmarks run it.

`prepare()` generates the project with the real scaffold (`mcp-codegen new
scaffold-echo`, from `templates/scaffold/`) on every run, so the benchmarks
follow the templates, into `.cache/benchmarks/scaffold/scaffold-echo/`
(ignored by git). The project is written into a fresh staging folder first,
then each file is copied into place only when its bytes changed (atomically,
by rename), so a benchmark running beside another one never sees the project
half written. The server is run the way its README says, not installed:
`python -m scaffold_echo` (stdio) or `... --http --port PORT` (Streamable
HTTP), with the project folder on `PYTHONPATH`. Its tool `echo(message: str)
-> str` is the one called.

Fair start-up: `PYTHONDONTWRITEBYTECODE=1` (set on the benchmark machines)
leaves our editable sources without `.pyc` files, so every spawn would compile
them again, whereas pip compiled the SDKs' packages when it installed them.
`prepare()` therefore byte-compiles the project, `mcp_specgen_runtime` and
`generated/mcp_specgen_types` (`compileall`, which writes regardless of that
variable, and skips what is up to date), and the peer venv (a no-op when pip
compiled it).

`echo_problem` checks an answer to the echo call in either shape a server may
give a `str` result: one text block holding the message, or, with
`structuredContent` `{"result": message}`, a text block holding the message or
that object's JSON.
"""

from __future__ import annotations

import compileall
import filecmp
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from ._common import (
    CACHE,
    MESSAGE,
    REPO,
    Reply,
    ServerFailedError,
    call_result_decoder,
    project_python,
)

NAME = "scaffold-echo"
"""The project's name (`mcp-codegen new NAME`)."""

PACKAGE = "scaffold_echo"
"""Its import name: `python -m scaffold_echo` runs it."""

FOLDER = CACHE / "benchmarks" / "scaffold"
"""Where the project is generated: `FOLDER / NAME`."""

COMPILED = (REPO / "mcp_specgen_runtime", REPO / "generated" / "mcp_specgen_types")
"""Our editable sources the server imports, byte-compiled with the project."""


def mcp_codegen_command() -> list[str]:
    """The project's `mcp-codegen` command (its console script, next to the
    project's python)."""
    python = Path(project_python())
    script = python.parent / "mcp-codegen"
    if script.exists():
        return [str(script)]
    return [str(python), "-c", "from mcp_specgen.cli import main; main()"]


def prepare(peer_python: Path | None = None) -> Path:
    """Generate the project with `mcp-codegen new`, bring `FOLDER / NAME` up to
    date with it, byte-compile it, our runtime and types (and the peer venv of
    `peer_python`, when given); return the project folder (for `PYTHONPATH`).

    Raises:
        ServerFailedError: `mcp-codegen new` failed.
    """
    FOLDER.mkdir(parents=True, exist_ok=True)
    project = FOLDER / NAME
    with tempfile.TemporaryDirectory(dir=FOLDER, prefix=".staging-") as staging:
        made = subprocess.run(
            [*mcp_codegen_command(), "new", NAME, "--dir", staging],
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO,
        )
        if made.returncode != 0:
            raise ServerFailedError(
                f"mcp-codegen new {NAME} failed: {made.stdout}{made.stderr}"
            )
        _sync(Path(staging) / NAME, project)
    for folder in (project, *COMPILED):
        compileall.compile_dir(folder, quiet=1)
    if peer_python is not None:
        subprocess.run(
            [str(peer_python), "-m", "compileall", "-q", str(peer_python.parents[1])],
            capture_output=True,
            check=False,
        )
    return project


def _sync(source: Path, target: Path) -> None:
    """Make the files of `target` those of `source` (`__pycache__` aside):
    changed or new ones copied in by rename, ones `source` lacks removed."""
    wanted = {path.relative_to(source) for path in source.rglob("*") if path.is_file()}
    for relative in sorted(wanted):
        origin, destination = source / relative, target / relative
        if destination.is_file() and filecmp.cmp(origin, destination, shallow=False):
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        fresh = destination.with_name(f".{destination.name}.{os.getpid()}.tmp")
        shutil.copyfile(origin, fresh)
        os.replace(fresh, destination)
    for path in sorted(target.rglob("*"), reverse=True):
        if "__pycache__" in path.parts or path.relative_to(target) in wanted:
            continue
        if path.is_file() or path.is_symlink():
            path.unlink()
        elif not any(path.iterdir()):
            path.rmdir()


def env(project: Path) -> dict[str, str]:
    """Our environment with `project` first on `PYTHONPATH`."""
    environment = dict(os.environ)
    paths = [str(project), *filter(None, [environment.get("PYTHONPATH")])]
    environment["PYTHONPATH"] = os.pathsep.join(paths)
    return environment


def stdio_argv() -> list[str]:
    """The stdio server, as the project's README runs it."""
    return [project_python(), "-m", PACKAGE]


def http_argv(port: str) -> list[str]:
    """The Streamable HTTP server on `port` (a number, or a placeholder)."""
    return [project_python(), "-m", PACKAGE, "--http", "--port", port]


# --- the echo answer ---------------------------------------------------------------


_EXPECTED = {"result": MESSAGE}
"""The structured content of a `str` result wrapped as an object."""


def echo_problem(reply: Reply) -> str | None:
    """What is wrong with an answer to the echo call, if anything (its id
    aside): it must echo the message as one text block, with no
    `structuredContent` or with `{"result": message}` (its text then the
    message or that object's JSON)."""
    if not reply.result:
        return f"error answer to {reply.id}: {reply.error!r}"
    try:
        result = call_result_decoder.decode(reply.result)
    except msgspec.DecodeError as exc:
        return f"not a tools/call result ({exc}): {bytes(reply.result)[:300]!r}"
    content = result.content
    if result.is_error:
        return f"a tool error: {content!r}"
    if len(content) != 1 or content[0].type != "text":
        return f"not one text block: {content!r}"
    text, structured = content[0].text, result.structured_content
    if structured is None:
        return None if text == MESSAGE else f"wrong echo: {text!r}"
    if structured != _EXPECTED:
        return f"wrong echo: structuredContent {structured!r}"
    if text != MESSAGE and _json(text) != _EXPECTED:
        return f"wrong echo: {text!r} beside structuredContent {structured!r}"
    return None


def _json(text: str) -> Any:
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None

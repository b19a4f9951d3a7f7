"""`mcp-codegen new`: render a ready server project from `templates/scaffold/`.

`render_project` returns every file of the project as text, keyed by its path
relative to the project folder (deterministic: the same arguments give the
same bytes); `create_project` validates, renders, then writes the files into
a new folder, and writes nothing when anything is wrong.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import mcp_specgen_types

from .emit import environment, format_python
from .errors import CodegenError
from .importnames import is_identifier, shadows

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AUTH_FILES",
    "FILES",
    "ScaffoldError",
    "create_project",
    "package_name",
    "protocol_versions",
    "render_project",
]

FILES: tuple[tuple[str, str], ...] = (
    (".gitignore", "gitignore.jinja"),
    ("README.md", "README.md.jinja"),
    ("pyproject.toml", "pyproject.toml.jinja"),
    ("{package}/__init__.py", "package/__init__.py.jinja"),
    ("{package}/__main__.py", "package/__main__.py.jinja"),
    ("{package}/server.py", "package/server.py.jinja"),
    ("tests/test_server.py", "tests/test_server.py.jinja"),
)
"""Each file of a project: its path (`{package}` is the import name) and the
template under `templates/scaffold/` that renders it."""

AUTH_FILES: tuple[tuple[str, str], ...] = (
    ("{package}/auth.py", "package/auth.py.jinja"),
    ("tests/test_auth.py", "tests/test_auth.py.jinja"),
)
"""The files a project protected by OAuth (`--auth`) has besides."""

_DISTRIBUTION_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
"""A valid distribution name (the packaging specification's)."""

_TAKEN = frozenset({"tests"})
"""Import names a project's package must not take besides those `shadows`
refuses: the project's own `tests` folder."""


class ScaffoldError(CodegenError):
    """The project cannot be created: a bad name or revision, or the folder exists."""


def package_name(name: str) -> str:
    """The import name of project `name` (dashes become underscores).

    Raises:
        ScaffoldError: `name` is no valid distribution name, or its package
            name is no valid Python identifier, a keyword, or shadows a
            standard library module or one of our own packages.
    """
    if not _DISTRIBUTION_NAME.fullmatch(name):
        raise ScaffoldError(
            f"{name!r} is not a valid project name: use letters, digits, '-', "
            "'_' and '.', starting and ending with a letter or digit"
        )
    package = name.replace("-", "_")
    if not is_identifier(package):
        raise ScaffoldError(
            f"{name!r} makes the package name {package!r}, which is not a valid "
            "Python identifier: use letters, digits, '-' and '_', starting "
            "with a letter"
        )
    if shadows(package) or package in _TAKEN:
        raise ScaffoldError(
            f"the package name {package!r} would shadow the module of that "
            "name: pick another project name"
        )
    return package


def protocol_versions(revision: str) -> list[str]:
    """Every known protocol revision up to and including `revision`, in order.

    Raises:
        ScaffoldError: `revision` is not a known revision.
    """
    known: list[str] = list(mcp_specgen_types.KNOWN_VERSIONS)
    if revision not in known:
        raise ScaffoldError(
            f"unknown protocol revision {revision!r}: known are {', '.join(known)}"
        )
    return known[: known.index(revision) + 1]


def render_project(name: str, revision: str, auth: bool = False) -> dict[str, str]:
    """Every file of project `name` serving up to `revision`, by relative path;
    with `auth`, its HTTP server is an OAuth protected resource.

    Raises:
        ScaffoldError: as `package_name` and `protocol_versions`.
    """
    package = package_name(name)
    context = {
        "name": name,
        "package": package,
        "revision": revision,
        "versions": protocol_versions(revision),
        "auth": auth,
    }
    env = environment()
    files: dict[str, str] = {}
    for path_pattern, template in FILES + (AUTH_FILES if auth else ()):
        path = path_pattern.format(package=package)
        text = env.get_template(f"scaffold/{template}").render(context)
        files[path] = format_python(text) if path.endswith(".py") else text
    return files


def create_project(
    name: str,
    directory: Path,
    revision: str = mcp_specgen_types.LATEST_VERSION,
    auth: bool = False,
) -> Path:
    """Write project `name` into the new folder `directory/name`; return it
    (with `auth`, protected by OAuth over HTTP).

    Raises:
        ScaffoldError: as `render_project`, or `directory/name` exists.
    """
    target = directory / name
    files = render_project(name, revision, auth)
    if target.exists() or target.is_symlink():
        raise ScaffoldError(f"{target} already exists; nothing was written")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        target.mkdir()
    except FileExistsError:
        raise ScaffoldError(f"{target} already exists; nothing was written") from None
    for path, text in files.items():
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8", newline="\n")
    return target

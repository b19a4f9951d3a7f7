"""What `mcp-codegen dev`, `install` and `python -m mcp_specgen.dev.serve`
serve: an `App` named by a TARGET.

- ``pkg.module`` or ``pkg.module:name``: the attribute `name` (default
  ``app``) of a module, imported with the current folder first on the path;
- ``path/to/file.py`` or ``path/to/file.py:name``: the same of a file, its
  folder first on the path (so it imports its neighbours);
- nothing: the project made by `mcp-codegen new` in the current folder, its
  ``<package>/server.py`` ``app`` (the package named after `pyproject.toml`'s
  project name).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import tomllib
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import CodegenError
from ..importnames import is_identifier

if TYPE_CHECKING:
    from types import ModuleType

    from mcp_specgen_runtime.app import App

__all__ = ["Target", "TargetError", "find_target", "load_app", "parse_target"]

DEFAULT_NAME = "app"


class TargetError(CodegenError):
    """The TARGET names nothing that can be served."""


@dataclass(frozen=True, slots=True)
class Target:
    """An `App` to serve: in a file or a module, under `name`.

    Attributes:
        kind: "file" or "module".
        location: the file's absolute path, or the module's dotted name.
        name: the attribute holding the `App`.
        app_dir: the folder put first on `sys.path` (absolute).
    """

    kind: Literal["file", "module"]
    location: str
    name: str
    app_dir: Path

    @property
    def spec(self) -> str:
        """The TARGET naming this one from any folder (a file's absolute
        path; a module's name, with `app_dir` given apart)."""
        return f"{self.location}:{self.name}"

    @property
    def watched(self) -> Path:
        """The folder whose changes reload the server."""
        return self.app_dir

    def runner_args(self) -> list[str]:
        """The arguments of `python -m mcp_specgen.dev.serve` serving it."""
        if self.kind == "file":
            return [self.spec]
        return ["--app-dir", str(self.app_dir), self.spec]


def parse_target(text: str, cwd: Path) -> Target:
    """The target `text` names, paths taken from `cwd`.

    Raises:
        TargetError: a file that does not exist, or a name that is no
            Python identifier.
    """
    location, name = text, DEFAULT_NAME
    head, sep, tail = text.rpartition(":")
    if sep and is_identifier(tail) and head:
        location, name = head, tail
    elif sep and not _is_drive(text):
        raise TargetError(
            f"{text!r}: after ':' comes the name of the App, a Python identifier"
        )
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = (cwd / location).resolve()
        if not path.is_file():
            raise TargetError(f"{location}: no such file")
        return Target("file", str(path), name, path.parent)
    if not all(is_identifier(part) for part in location.split(".")):
        raise TargetError(
            f"{text!r} is neither a .py file nor a module name (pkg.module[:app])"
        )
    return Target("module", location, name, cwd.resolve())


def _is_drive(text: str) -> bool:
    return len(text) > 2 and text[1] == ":" and text[2] in "\\/"


def find_target(text: str | None, cwd: Path) -> Target:
    """`parse_target(text)`, or without `text` the project `mcp-codegen
    new` made in `cwd`.

    Raises:
        TargetError: as `parse_target`, or no such project in `cwd`.
    """
    if text is not None:
        return parse_target(text, cwd)
    pyproject = cwd / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        package = str(project["name"]).replace("-", "_")
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        package = None
    if package is None or not (cwd / package / "server.py").is_file():
        raise TargetError(
            "no TARGET given, and the current folder holds no project made by "
            "`mcp-codegen new` (pyproject.toml and <package>/server.py): name "
            "a file (server.py[:app]) or a module (pkg.module[:app])"
        )
    return Target("module", f"{package}.server", DEFAULT_NAME, cwd.resolve())


def load_app(target: Target) -> App:
    """Import `target` and return its `App`.

    Raises:
        TargetError: the import failed (its message shows the user's part
            of the traceback), or the name holds something else than an
            `App`.
    """
    from mcp_specgen_runtime.app import App

    folder = str(target.app_dir)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = _import(target)
    except TargetError:
        raise
    except Exception as error:
        raise TargetError(
            f"{target.spec} failed to import:\n{_users_traceback(error)}"
        ) from error
    found = getattr(module, target.name, None)
    if found is None:
        raise TargetError(
            f"{target.location} has no {target.name!r}: name the App with "
            f"{target.location}:NAME"
        )
    if not isinstance(found, App):
        kind = type(found).__name__
        raise TargetError(f"{target.spec} is a {kind}, not an App")
    return found


def _import(target: Target) -> ModuleType:
    if target.kind == "file":
        path = Path(target.location)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"{path}: cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(path.stem, None)  # as a failed import does
            raise
        return module
    try:
        return importlib.import_module(target.location)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if not (target.location + ".").startswith(missing + "."):
            raise  # a module the target imports is missing
        raise TargetError(
            f"no module {target.location!r} in {target.app_dir} or on the path"
        ) from None


def _users_traceback(error: BaseException) -> str:
    """`error`'s traceback without the frames of the import machinery and of
    this package: what the user's code did."""
    trace = traceback.TracebackException.from_exception(error)
    ours = (str(Path(importlib.__file__).parent), str(Path(__file__).parent))
    frames = [
        frame
        for frame in trace.stack
        if not frame.filename.startswith(("<frozen ", *ours))
    ]
    trace.stack = traceback.StackSummary.from_list(frames)
    return "".join(trace.format(chain=False)).rstrip()

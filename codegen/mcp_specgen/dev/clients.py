"""`mcp-codegen install`: a stdio server's entry in an MCP client's config.

Each client's documented file and shape:

- Claude Desktop: `claude_desktop_config.json` in its config folder
  (macOS `~/Library/Application Support/Claude/`, Windows
  `%APPDATA%\\Claude\\`, elsewhere `$XDG_CONFIG_HOME/Claude/`, by default
  `~/.config/Claude/`), entries under `mcpServers`: `command`, `args`, `env`.
- Cursor: `~/.cursor/mcp.json` (every project), the same shape.
- VS Code: `.vscode/mcp.json` of the workspace (the current folder), entries
  under `servers`, with `"type": "stdio"`.

The entry is merged into the file: other entries and keys stay; an entry of
the same name is refused unless forced. The file is replaced atomically (a
new file renamed over it), keeping its permissions; a file that is not a
JSON object (VS Code allows comments, which are not JSON) is left alone.
A symlinked file is written through its link.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CodegenError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "CLIENTS",
    "ClientConfig",
    "InstallError",
    "client_config",
    "install_entry",
    "server_entry",
]


class InstallError(CodegenError):
    """The entry cannot be written: the name is taken, or the file unreadable."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Where a client keeps its servers, and how it names them."""

    client: str
    path: Path
    key: str
    typed: bool
    """Whether entries carry `"type": "stdio"`."""


CLIENTS = ("claude-desktop", "cursor", "vscode")


def client_config(
    client: str,
    *,
    home: Path,
    cwd: Path,
    platform: str = sys.platform,
    environ: Mapping[str, str] = os.environ,
) -> ClientConfig:
    """The config file of `client` (one of `CLIENTS`) for this user.

    Raises:
        ValueError: an unknown client.
    """
    if client == "claude-desktop":
        if platform == "darwin":
            folder = home / "Library" / "Application Support" / "Claude"
        elif platform == "win32":
            appdata = environ.get("APPDATA")
            base = Path(appdata) if appdata else home / "AppData" / "Roaming"
            folder = base / "Claude"
        else:
            xdg = environ.get("XDG_CONFIG_HOME")
            folder = (Path(xdg) if xdg else home / ".config") / "Claude"
        path = folder / "claude_desktop_config.json"
        return ClientConfig(client, path, "mcpServers", typed=False)
    if client == "cursor":
        return ClientConfig(client, home / ".cursor" / "mcp.json", "mcpServers", False)
    if client == "vscode":
        return ClientConfig(client, cwd / ".vscode" / "mcp.json", "servers", True)
    raise ValueError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")


def server_entry(
    config: ClientConfig, command: Sequence[str], env: Mapping[str, str]
) -> dict[str, Any]:
    """The entry starting `command` over stdio with `env` added."""
    entry: dict[str, Any] = {"type": "stdio"} if config.typed else {}
    entry["command"] = command[0]
    entry["args"] = list(command[1:])
    if env:
        entry["env"] = dict(env)
    return entry


def install_entry(
    path: Path, key: str, name: str, entry: Mapping[str, Any], *, force: bool
) -> None:
    """Put `entry` as `name` under `key` in the JSON file `path` (created
    with its folders when missing), atomically.

    Raises:
        InstallError: `name` is there already (without `force`), or the
            file is no JSON object, or its `key` no object.
    """
    document = _read(path)
    servers: Any = document.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: {key!r} is not an object; nothing was written")
    if name in servers and not force:
        raise InstallError(
            f"{path} already has a server named {name!r}: pick another --name, "
            "or replace it with --force"
        )
    servers[name] = dict(entry)
    _write_atomically(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InstallError(
            f"{path} is not plain JSON ({error}); nothing was written: add the "
            "entry by hand (--print shows it)"
        ) from None
    if not isinstance(document, dict):
        raise InstallError(f"{path} is not a JSON object; nothing was written")
    return typing.cast("dict[str, Any]", document)


def _write_atomically(path: Path, text: str) -> None:
    # A symlink (a dotfiles repository's file) stays: the file it names is
    # replaced, in its own folder.
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

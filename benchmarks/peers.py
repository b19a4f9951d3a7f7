"""Install the benchmark peers into a cached virtualenv, `.cache/peers/venv`.

The peers are pinned; installing is idempotent: when the venv already holds every
peer at its pinned version nothing is run but one quick version check. `.cache/`
is ignored by git.

    python -m benchmarks.peers          # install (or check) and print the python path
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from typing import TYPE_CHECKING

from ._common import CACHE, Echo

if TYPE_CHECKING:
    from pathlib import Path

PEERS: dict[str, str] = {"mcp-types": "2.3.0"}
"""Distribution name -> pinned version."""

PEERS_DIR = CACHE / "peers"
VENV = PEERS_DIR / "venv"

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


def _venv_python(venv: Path = VENV) -> Path:
    return venv / "bin" / "python"


def installed_versions(venv: Path = VENV) -> dict[str, str | None]:
    """The version of each peer installed in `venv` (None: missing or no venv)."""
    python = _venv_python(venv)
    if not python.exists():
        return dict.fromkeys(PEERS)
    proc = subprocess.run(
        [str(python), "-c", _VERSIONS_SNIPPET, *PEERS],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return dict.fromkeys(PEERS)
    found: dict[str, str | None] = json.loads(proc.stdout)
    return found


def ensure_peers(echo: Echo | None = None, venv: Path = VENV) -> Path:
    """Create the peer venv if needed, install peers not at their pin; return python.

    Raises:
        subprocess.CalledProcessError: venv creation or pip failed.
    """
    say = echo or (lambda _msg: None)
    venv.parent.mkdir(parents=True, exist_ok=True)
    # Serialise concurrent callers (a test run and a manual run, say).
    with open(venv.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = _venv_python(venv)
        if not python.exists():
            say(f"creating the peer venv {venv}")
            subprocess.run(
                [sys.executable, "-m", "venv", "--clear", str(venv)], check=True
            )
        versions = installed_versions(venv)
        wanted = [
            f"{name}=={pin}" for name, pin in PEERS.items() if versions.get(name) != pin
        ]
        if wanted:
            say(f"installing {' '.join(wanted)} into {venv}")
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    *wanted,
                ],
                check=True,
            )
            versions = installed_versions(venv)
            wrong = {n: v for n, v in versions.items() if v != PEERS[n]}
            if wrong:
                raise RuntimeError(f"peer install left wrong versions: {wrong}")
    return python


def peer_python(echo: Echo | None = None) -> Path:
    """The python of the peer venv, installing the peers first when needed."""
    return ensure_peers(echo)


def main() -> None:
    python = ensure_peers(print)
    print(python)
    print(json.dumps(installed_versions()))


if __name__ == "__main__":
    main()

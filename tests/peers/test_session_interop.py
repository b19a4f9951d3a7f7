"""`ServerSession` against the official Python SDK client (PyPI `mcp==2.3.0`).

The server is `tests/unit/runtime/session_programs/echo_session.py`: one
dual-era session (2025-06-18, 2025-11-25, 2026-07-28) over stdio. The SDK
client (`tests/peers/programs/python_sdk_client.py`, run with the peer venv's
python) spawns it, lists the tools, calls `echo` and reports what it negotiated:

- `legacy`: the initialize handshake, at the SDK's newest handshake version;
- `auto`: `server/discover` succeeds, so the client adopts 2026-07-28 and reads
  the server's name from the discover result's `_meta` stamp;
- `2026-07-28`: adopted without a probe, so the server never names itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peers
from benchmarks._common import REPO

CLIENT = Path(__file__).parent / "programs" / "python_sdk_client.py"
SERVER = REPO / "tests" / "unit" / "runtime" / "session_programs" / "echo_session.py"
MESSAGE = 'héllo, wörld ✓ "quoted" \\ back\nslash'
NAME = "mcp-codegen-session-echo"


@pytest.fixture(scope="module")
def peer_python() -> Path:
    return peers.ensure_python_peers(print)


def peer_env() -> dict[str, str]:
    """This environment without anything that would steer the peer venv's python."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def named(report: dict[str, object]) -> tuple[object, object] | None:
    """The server's (name, version) as the client saw them."""
    info = report["server_info"]
    if info is None:
        return None
    assert isinstance(info, dict)
    return info["name"], info["version"]


def run_client(python: Path, mode: str, *server_args: str) -> dict[str, object]:
    proc = subprocess.run(
        [
            str(python),
            str(CLIENT),
            mode,
            MESSAGE,
            "--",
            sys.executable,
            str(SERVER),
            *server_args,
        ],
        cwd=REPO,
        env=peer_env(),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    report: dict[str, object] = json.loads(proc.stdout)
    return report


@pytest.mark.parametrize(
    ("mode", "negotiated", "identified"),
    [
        ("legacy", "2025-11-25", True),
        ("auto", "2026-07-28", True),
        ("2026-07-28", "2026-07-28", False),
    ],
)
def test_python_sdk_client_against_a_dual_era_session(
    peer_python: Path, mode: str, negotiated: str, identified: bool
) -> None:
    report = run_client(peer_python, mode)
    assert report["protocol_version"] == negotiated
    assert named(report) == ((NAME, "1.0.0") if identified else None)
    assert report["tools"] == ["echo"]
    assert report["echo"] == {"is_error": False, "texts": [MESSAGE]}


def test_auto_mode_falls_back_to_initialize_on_a_legacy_only_session(
    peer_python: Path,
) -> None:
    report = run_client(peer_python, "auto", "2025-06-18", "2025-11-25")
    assert report["protocol_version"] == "2025-11-25"
    assert named(report) == (NAME, "1.0.0")
    assert report["echo"] == {"is_error": False, "texts": [MESSAGE]}


def test_legacy_mode_gets_the_newest_legacy_revision_served(
    peer_python: Path,
) -> None:
    report = run_client(peer_python, "legacy", "2025-06-18", "2026-07-28")
    assert report["protocol_version"] == "2025-06-18"
    assert report["echo"] == {"is_error": False, "texts": [MESSAGE]}

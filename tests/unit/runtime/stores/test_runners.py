"""`RunnerLock` and `runner_alive`: liveness told by locks the OS frees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_specgen_runtime.stores.runners import RunnerLock, runner_alive

HOLD = """
import sys
from pathlib import Path
from mcp_specgen_runtime.stores.runners import RunnerLock
lock = RunnerLock(Path(sys.argv[1]))
print(lock.runner_id, flush=True)
sys.stdin.readline()
"""


def test_a_held_lock_is_alive_and_a_released_one_gone(tmp_path: Path) -> None:
    lock = RunnerLock(tmp_path / "runners")
    assert runner_alive(lock.folder, lock.runner_id)
    assert runner_alive(lock.folder, lock.runner_id)
    lock.release()
    lock.release()
    assert not runner_alive(lock.folder, lock.runner_id)
    assert list(lock.folder.iterdir()) == []


def test_each_lock_has_its_own_id(tmp_path: Path) -> None:
    first, second = RunnerLock(tmp_path), RunnerLock(tmp_path)
    assert first.runner_id != second.runner_id
    first.release()
    assert runner_alive(tmp_path, second.runner_id)
    second.release()


@pytest.mark.parametrize("runner_id", ["", "unknown", "../x", "a/b", ".hidden"])
def test_an_unknown_or_hostile_id_is_gone(tmp_path: Path, runner_id: str) -> None:
    (tmp_path / "x.lock").write_text("")
    assert not runner_alive(tmp_path / "runners", runner_id)
    assert (tmp_path / "x.lock").exists()


def test_a_killed_process_s_lock_is_gone_and_its_file_removed(tmp_path: Path) -> None:
    folder = tmp_path / "runners"
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        runner_id = process.stdout.readline().strip()
        assert runner_alive(folder, runner_id)
        process.kill()
        process.wait()
    assert not runner_alive(folder, runner_id)
    assert list(folder.iterdir()) == []

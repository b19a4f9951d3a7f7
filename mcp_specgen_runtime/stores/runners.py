"""Which processes are alive, told by lock files the operating system frees.

A durable task store outlives the process that runs a task: after a crash the
record still says `working`, and nothing will ever finish it. Each process
that runs tasks holds an exclusive lock on a file of its own (`RunnerLock`);
the operating system releases the lock when the process ends, kill -9
included, so another process learns that the runner is gone by taking the
lock itself (`runner_alive`). Locks are advisory locks of one host, which is
what an SQLite file is for anyway.
"""

from __future__ import annotations

import os
import secrets
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["RunnerLock", "runner_alive"]

_SUFFIX = ".lock"


if sys.platform == "win32":  # a byte-range lock, also freed when the process ends
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


class RunnerLock:
    """This process's claim to be alive, held until `release` or death.

    Args:
        folder: where the lock files of every runner of one store live.
    """

    def __init__(self, folder: Path) -> None:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.runner_id = secrets.token_hex(16)
        """The id recorded on the tasks this process runs."""
        self.folder = folder
        self._path = folder / (self.runner_id + _SUFFIX)
        self._fd: int | None = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _try_lock(self._fd):
            raise RuntimeError(f"runner lock {self._path} is already held")

    def release(self) -> None:
        """Give up the claim: from now on this runner counts as gone."""
        if self._fd is None:
            return
        # Unlink first: a checker that opens the file after this sees no file
        # (gone); one that opened it before takes the lock once it is closed.
        self._path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


def runner_alive(folder: Path, runner_id: str) -> bool:
    """Whether the process that holds `runner_id`'s lock is still running.

    A runner whose lock can be taken is gone; its lock file is removed.
    """
    if not runner_id or os.sep in runner_id or runner_id.startswith("."):
        return False
    path = folder / (runner_id + _SUFFIX)
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        if not _try_lock(fd):
            return True
        path.unlink(missing_ok=True)
        return False
    finally:
        os.close(fd)

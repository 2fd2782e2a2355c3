"""Which replicas of this machine still run: each process holds a lock on a file named
after its replica id for as long as it lives, and the kernel lets go of the lock when the
process ends, however it ends (no pid to outlive it). A holder whose file is here and
unlocked has exited; a holder with no file here (another machine, another config dir) is
unknown, never gone: its leases lapse as usual."""

import fcntl
import logging
import os
import re
import time
from pathlib import Path

from application.ports.leases import ReplicaPresence

log = logging.getLogger(__name__)

_REPLICA_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")  # as settings allow: safe as a file name
STALE_AFTER = 24 * 3600.0  # an unlocked file this old is removed (one per process start)
LOCK_ATTEMPTS = 50  # another process may be testing our file at the moment we lock it


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class LockFilePresence(ReplicaPresence):
    def __init__(self, directory: Path, replica_id: str) -> None:
        self._directory = directory
        self._replica_id = replica_id
        self._held: int | None = None  # our locked file, open until the process ends

    def here(self) -> None:
        if self._held is not None:
            return
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            self._sweep()
            fd = os.open(self._path(self._replica_id), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            log.warning("replica %s cannot mark itself running: %s", self._replica_id, exc)
            return
        for _ in range(LOCK_ATTEMPTS):
            if _try_lock(fd):
                os.utime(fd)  # fresh: not swept as stale
                self._held = fd
                return
            time.sleep(0.002)  # a checker holds it for a moment only
        os.close(fd)
        log.warning("another running process uses replica id %s", self._replica_id)

    def gone(self, holder: str) -> bool:
        if holder == self._replica_id or not _REPLICA_ID.fullmatch(holder):
            return False
        try:
            fd = os.open(self._path(holder), os.O_RDWR)
        except OSError:
            return False  # not a process of this machine (or this config dir)
        try:
            if not _try_lock(fd):
                return False
            fcntl.flock(fd, fcntl.LOCK_UN)
            return True
        finally:
            os.close(fd)

    def _path(self, replica_id: str) -> Path:
        return self._directory / f"{replica_id}.lock"

    def _sweep(self) -> None:
        """Remove the files of processes that exited long ago."""
        cutoff = time.time() - STALE_AFTER
        for path in self._directory.glob("*.lock"):
            try:
                if path.stat().st_mtime < cutoff and self.gone(path.stem):
                    path.unlink()
            except OSError:
                continue

"""The bytes of files as a snapshot before a command read them, kept between commands: a
file whose stamp (inode, size, mtime, ctime) has not moved since it was read is not read
again, so a command pays only for what changed since the one before it.

One store for the whole process (every session's snapshots share it), at most `max_bytes`
of content, the least recently used dropped first. Snapshots run in worker threads: a lock
guards it."""

import threading
from collections import OrderedDict

from domain.checkpoints import Unrestorable

Stamp = tuple[int, int, int, int]  # inode, size, mtime ns, ctime ns: ctime moves on any write
Held = bytes | Unrestorable  # the content, or why it is not kept (binary, say)


class PriorBytes:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[str, tuple[Stamp, Held]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, path: str, stamp: Stamp) -> Held | None:
        """What was read of `path` at this stamp; None when not held (or since changed)."""
        with self._lock:
            found = self._held.get(path)
            if found is None or found[0] != stamp:
                return None
            self._held.move_to_end(path)
            return found[1]

    def put(self, path: str, stamp: Stamp, held: Held) -> None:
        with self._lock:
            self._forget(path)
            size = _size(held)
            if size > self.max_bytes:
                return
            while self._held and self._size + size > self.max_bytes:
                self._forget(next(iter(self._held)))
            self._held[path] = (stamp, held)
            self._size += size

    @property
    def size(self) -> int:
        return self._size

    def _forget(self, path: str) -> None:
        gone = self._held.pop(path, None)
        if gone is not None:
            self._size -= _size(gone[1])


def _size(held: Held) -> int:
    return len(held) if isinstance(held, bytes) else 0

"""File checkpoints: what a file was before the agent first changed it in a turn, and how
a rewind puts the files back.

A file's state is named by a digest of its bytes (`state_of`), or ABSENT when there was no
file: the prior content itself is kept, deduplicated by that digest, by the session store."""

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

ABSENT = "absent"  # the state of a path with no file
UNKNOWN = "unknown"  # the state of a file whose content was not seen
# The state of a path where something other than a regular file stands, or that is reached
# through one (a symlink, a directory, a FIFO, a file in place of a directory): never what
# the agent left, so always a conflict, and never written through.
NOT_A_FILE = "not_a_file"
FILE_LIMIT = 1024 * 1024  # bytes: a bigger file's checkpoint keeps no content


def state_of(content: bytes | None) -> str:
    """The name of a file's state: the sha256 of its bytes, or ABSENT."""
    return ABSENT if content is None else hashlib.sha256(content).hexdigest()


class Unrestorable(StrEnum):
    """Why a checkpoint keeps no content (its file is reported, never silently skipped)."""

    TOO_LARGE = "too_large"  # over the per-file limit
    BINARY = "binary"
    OVER_LIMIT = "over_session_limit"  # bigger than the session's whole checkpoint budget
    DROPPED = "dropped"  # pruned, oldest first, to stay within the session's budget
    PRIOR_UNKNOWN = "prior_unknown"  # a command changed it; what it held before is not known
    OUTSIDE = "outside_workspace"  # not inside the session's directories: never written
    NOT_A_FILE = "not_a_regular_file"  # a symlink or no regular file stands there, or on the way


@dataclass(frozen=True, slots=True, kw_only=True)
class FileCheckpoint:
    """`path` as it was before the agent first changed it in the turn of the prompt
    `message_id`: `prior` names that state; `after` the state the agent last left it in
    (None: not known, e.g. the change failed half way)."""

    message_id: str
    path: str
    prior: str
    after: str | None = None
    unrestorable: Unrestorable | None = None
    seq: int = 0  # the store's order: older checkpoints have smaller numbers


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRestore:
    """One path a rewind puts back: to `prior` (ABSENT: removed), unless the user changed
    it since the agent did (`conflict`) or its prior content was not kept."""

    path: str
    prior: str
    last_written: str | None
    unrestorable: Unrestorable | None


def files_to_restore(checkpoints: list[FileCheckpoint], cut: frozenset[str]) -> list[FileRestore]:
    """Per path the cut turns changed: the state before the first of them (the oldest
    checkpoint) and the state the agent left it in last (the newest)."""
    first: dict[str, FileCheckpoint] = {}
    last: dict[str, FileCheckpoint] = {}
    for checkpoint in sorted(checkpoints, key=lambda c: c.seq):
        if checkpoint.message_id not in cut:
            continue
        first.setdefault(checkpoint.path, checkpoint)
        last[checkpoint.path] = checkpoint
    return [
        FileRestore(
            path=path,
            prior=oldest.prior,
            last_written=last[path].after,
            unrestorable=oldest.unrestorable,
        )
        for path, oldest in first.items()
    ]


def conflicts_of(restores: Sequence[FileRestore], current: Mapping[str, str]) -> tuple[str, ...]:
    """The paths whose current state is not what the agent last left (the user changed
    them since), and that a restore would change; a path where no regular file stands now
    is one whatever was left there."""
    return tuple(
        restore.path
        for restore in restores
        if restore.unrestorable is None and _changed_since(restore, current[restore.path])
    )


def _changed_since(restore: FileRestore, now: str) -> bool:
    if now == NOT_A_FILE:
        return True
    return now not in (restore.prior, restore.last_written)

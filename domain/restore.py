"""How a rewind, or its undo, puts files back: per path, written, left as it already is, left
as the user changed it, or reported; and the permission that needs.

One rule for both. A rewind puts each file back as it was before the cut turns (FileRestore
from the checkpoints); its undo puts back what that restore overwrote (`undo_restores`): for
both, a file is a conflict when it is not what the agent (or the restore) left there.
Nothing is ever written where no regular file stands, or through anything that is not a
directory: such a path is a conflict, and `force` does not write it either (it is reported
`not_a_regular_file`)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from domain.checkpoints import NOT_A_FILE, FileRestore, Unrestorable, conflicts_of, state_of
from domain.tool_call import ToolKind
from domain.tools import Category, ToolSpec

# What restoring files is to the permission rule (domain.permission.decide): an edit, so
# plan mode refuses it, accept_edits and bypass allow it, the default mode asks.
RESTORE_FILES = ToolSpec(name="rewind_restore_files", kind=ToolKind.EDIT, category=Category.EDIT)


class OnConflict(StrEnum):
    """What a restore does with files the user changed since the agent did."""

    REFUSE = "refuse"  # nothing is done; the conflicts are answered
    FORCE = "force"  # restored all the same (never through a symlink)
    SKIP = "skip"  # left as they are; the rest is restored


class Step(StrEnum):
    PUT = "put"  # written back (or removed: the prior state was no file)
    KEPT = "kept"  # already as it was: nothing to write
    SKIPPED = "skipped"  # a conflict left as the user made it
    UNRESTORABLE = "unrestorable"  # reported, with why


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoreStep:
    restore: FileRestore
    step: Step
    reason: Unrestorable | None = None  # why, when UNRESTORABLE

    @property
    def path(self) -> str:
        return self.restore.path


@dataclass(frozen=True, slots=True, kw_only=True)
class UndoFile:
    """A file a restore wrote: as it was before (`content`, None: no file) and the state the
    restore left it in (`left`; None: not recorded, so any change since is a conflict)."""

    path: str
    content: bytes | None
    left: str | None


def undo_restores(files: Sequence[UndoFile]) -> list[FileRestore]:
    """An undo as a restore: back to what the restore overwrote, the restore's own writes
    being what was 'last left'."""
    return [
        FileRestore(path=f.path, prior=state_of(f.content), last_written=f.left, unrestorable=None)
        for f in files
    ]


def restore_steps(
    restores: Sequence[FileRestore], current: Mapping[str, str], on_conflict: OnConflict
) -> tuple[RestoreStep, ...]:
    """What happens to each path, its state now given (`current`). With REFUSE, conflicts
    are answered before (`conflicts_of`), so none is left to decide here."""
    conflicts = frozenset(conflicts_of(restores, current))
    return tuple(
        _step(restore, current, restore.path in conflicts, on_conflict) for restore in restores
    )


def _step(
    restore: FileRestore, current: Mapping[str, str], conflict: bool, on_conflict: OnConflict
) -> RestoreStep:
    if restore.unrestorable is not None:  # its state now is not even looked at
        return RestoreStep(restore=restore, step=Step.UNRESTORABLE, reason=restore.unrestorable)
    now = current[restore.path]
    if conflict and on_conflict is OnConflict.SKIP:
        return RestoreStep(restore=restore, step=Step.SKIPPED)
    if now == NOT_A_FILE:
        return RestoreStep(restore=restore, step=Step.UNRESTORABLE, reason=Unrestorable.NOT_A_FILE)
    if now == restore.prior:
        return RestoreStep(restore=restore, step=Step.KEPT)
    return RestoreStep(restore=restore, step=Step.PUT)

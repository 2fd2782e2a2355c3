"""The restore rule (domain.restore): what a rewind, or its undo, does to each file, and
the permission it needs under the one permission rule."""

import pytest

from domain.checkpoints import ABSENT, NOT_A_FILE, FileRestore, Unrestorable, conflicts_of, state_of
from domain.modes import ModeId
from domain.permission import Verdict, decide
from domain.restore import (
    RESTORE_FILES,
    OnConflict,
    Step,
    UndoFile,
    restore_steps,
    undo_restores,
)

BEFORE, LEFT, USERS = state_of(b"before"), state_of(b"agent's"), state_of(b"user's")


def restore(path: str = "/p/a", *, unrestorable: Unrestorable | None = None) -> FileRestore:
    return FileRestore(path=path, prior=BEFORE, last_written=LEFT, unrestorable=unrestorable)


def step(now: str, on_conflict: OnConflict = OnConflict.FORCE) -> tuple[Step, object]:
    (decided,) = restore_steps([restore()], {"/p/a": now}, on_conflict)
    return decided.step, decided.reason


def test_a_file_as_the_agent_left_it_is_put_back_and_one_already_back_is_kept() -> None:
    assert step(LEFT) == (Step.PUT, None)
    assert step(BEFORE) == (Step.KEPT, None)
    assert step(ABSENT) == (Step.PUT, None) and conflicts_of([restore()], {"/p/a": ABSENT})


def test_a_users_change_is_a_conflict_forced_or_skipped() -> None:
    assert conflicts_of([restore()], {"/p/a": USERS}) == ("/p/a",)
    assert step(USERS, OnConflict.FORCE) == (Step.PUT, None)
    assert step(USERS, OnConflict.SKIP) == (Step.SKIPPED, None)


@pytest.mark.parametrize("left", [LEFT, NOT_A_FILE, None])
def test_no_regular_file_standing_there_is_a_conflict_that_force_never_writes(
    left: str | None,
) -> None:
    """A symlink (or a directory, or anything on the way that is not a directory) is a
    conflict whatever the agent left; forced, it is reported, never written through."""
    odd = FileRestore(path="/p/a", prior=BEFORE, last_written=left, unrestorable=None)
    assert conflicts_of([odd], {"/p/a": NOT_A_FILE}) == ("/p/a",)
    (forced,) = restore_steps([odd], {"/p/a": NOT_A_FILE}, OnConflict.FORCE)
    assert (forced.step, forced.reason) == (Step.UNRESTORABLE, Unrestorable.NOT_A_FILE)
    (skipped,) = restore_steps([odd], {"/p/a": NOT_A_FILE}, OnConflict.SKIP)
    assert skipped.step is Step.SKIPPED


def test_an_unrestorable_checkpoint_is_reported_without_its_state_being_read() -> None:
    (decided,) = restore_steps([restore(unrestorable=Unrestorable.OUTSIDE)], {}, OnConflict.FORCE)
    assert (decided.step, decided.reason) == (Step.UNRESTORABLE, Unrestorable.OUTSIDE)


def test_an_undo_is_a_restore_back_to_what_the_restore_overwrote() -> None:
    undo = undo_restores(
        [
            UndoFile(path="/p/a", content=b"agent's", left=BEFORE),
            UndoFile(path="/p/made", content=None, left=BEFORE),
            UndoFile(path="/p/old", content=b"x", left=None),  # stored before `left` was
        ]
    )
    assert [(r.prior, r.last_written) for r in undo] == [
        (LEFT, BEFORE),
        (ABSENT, BEFORE),
        (state_of(b"x"), None),
    ]
    # Changed since the restore: a conflict, exactly as for a rewind.
    now = {"/p/a": USERS, "/p/made": BEFORE, "/p/old": state_of(b"y")}
    assert conflicts_of(undo, now) == ("/p/a", "/p/old")


@pytest.mark.parametrize(
    ("mode", "verdict"),
    [
        (ModeId.DEFAULT, Verdict.ASK),
        (ModeId.ACCEPT_EDITS, Verdict.ALLOW),
        (ModeId.BYPASS, Verdict.ALLOW),
        (ModeId.PLAN, Verdict.REFUSE),
    ],
)
def test_restoring_files_is_an_edit_to_the_one_permission_rule(mode: str, verdict: Verdict) -> None:
    assert decide(RESTORE_FILES, mode, always_asks=False) is verdict

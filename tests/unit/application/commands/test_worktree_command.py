"""/worktree with fake worktrees: what it says of a session without one, of one's changes,
and of a merge back (refused while changes are uncommitted; done; a conflict)."""

from application.commands.worktree import NONE, WorktreeCommand
from application.ports.worktrees import Merged, Summary, Unmerged
from domain.session import Session
from tests.factories import SessionFactory
from tests.fakes.worktrees import FakeWorktrees
from tests.unit.application.test_background_tasks import command_input

PATH = "/worktrees/0a1b2c3d"


def in_worktree(worktrees: FakeWorktrees) -> Session:
    worktrees.repositories.add("/repo")
    worktrees.add("iac-code/0a1b2c3d", base="base0123456789")
    session: Session = SessionFactory(cwd=f"{PATH}/src")
    return session


async def test_a_session_without_a_worktree_is_told_how_to_get_one() -> None:
    command = WorktreeCommand(worktrees=FakeWorktrees())
    assert await command.run(command_input(SessionFactory(cwd="/repo"), "")) == NONE


async def test_it_shows_the_commits_the_changes_and_the_new_files() -> None:
    worktrees = FakeWorktrees()
    session = in_worktree(worktrees)
    worktrees.summaries[PATH] = Summary(
        commits=("abc1234 agent: v2",), changed=" src/app.py | 2 +-", untracked=("notes.md",)
    )
    said = await WorktreeCommand(worktrees=worktrees).run(command_input(session, ""))
    assert f"Worktree `{PATH}`, branch `iac-code/0a1b2c3d`, from `base01234567`." in said
    assert "- abc1234 agent: v2" in said and "src/app.py | 2 +-" in said
    assert "New, not yet added: notes.md" in said


async def test_a_merge_waits_for_uncommitted_changes_to_be_committed() -> None:
    worktrees = FakeWorktrees()
    session = in_worktree(worktrees)
    worktrees.unmerged_work[PATH] = Unmerged(changes=3, commits=1)
    said = await WorktreeCommand(worktrees=worktrees).run(command_input(session, "merge"))
    assert said.startswith("Not merged: the worktree has 3 uncommitted change(s).")
    assert worktrees.merged == []


async def test_a_merge_says_how_it_went_or_what_conflicted() -> None:
    worktrees = FakeWorktrees()
    session = in_worktree(worktrees)
    command = WorktreeCommand(worktrees=worktrees)
    said = await command.run(command_input(session, "merge"))
    assert said == "Merged `iac-code/0a1b2c3d` into `main`: a fast-forward."
    worktrees.merges[PATH] = Merged(
        done=False, into="main", why="git merge: conflict", conflicts=("src/app.py",)
    )
    said = await command.run(command_input(session, "merge"))
    assert "Not merged into `main`: git merge: conflict" in said
    assert "Conflicting files (the merge was aborted, nothing changed): src/app.py" in said


async def test_anything_else_gets_the_usage() -> None:
    worktrees = FakeWorktrees()
    said = await WorktreeCommand(worktrees=worktrees).run(
        command_input(in_worktree(worktrees), "push --force")
    )
    assert said.startswith("Usage: `/worktree`")

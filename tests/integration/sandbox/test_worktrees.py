"""Session worktrees with the real git, and sandboxed commands working in them (bubblewrap
and Landlock): two sessions edit the same file of one repository at once without seeing
each other's change; `git commit` works from inside the sandbox; the repository's hooks and
config and its main checkout stay out of reach; a fork holds its source's current files; a
worktree's unmerged work is counted, and removing it takes its branch along."""

import subprocess
from pathlib import Path

import pytest

from adapters.workspace.confinement import Confinement
from adapters.workspace.local import LocalWorkspace
from adapters.workspace.worktrees import GitWorktrees, worktree_at
from application.ports.workspace import CommandRun
from application.ports.worktrees import Made, NoRepository, Unmerged
from tests.integration.sandbox.conftest import WRITE, World, run_in

pytestmark = pytest.mark.integration

IDENTITY = "-c user.name=agent -c user.email=agent@example.invalid"


def read(*parts: str) -> str:
    return Path(*parts).read_text()


def write(text: str, *parts: str) -> None:
    Path(*parts).write_text(text)


def exists(path: str) -> bool:
    return Path(path).exists()


def git(*arguments: str, cwd: Path | str) -> str:
    done = subprocess.run(
        ["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@pytest.fixture
def repository(world: World) -> Path:
    repo = world.root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('v1')\n")
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git(*IDENTITY.split(), "commit", "-q", "-m", "first", cwd=repo)
    return repo


@pytest.fixture
def worktrees(world: World) -> GitWorktrees:
    return GitWorktrees(world.root / "config" / "worktrees")


async def run_made(world: World, made: Made, command: str, engine: str = "auto") -> CommandRun:
    confinement = Confinement.found(hidden=(world.config,), engine=engine)
    workspace = LocalWorkspace(confinement).under(WRITE, (made.cwd,))
    return await run_in(workspace, command, made.cwd)


async def test_a_worktree_is_made_at_the_same_place_on_its_own_branch(
    repository: Path, worktrees: GitWorktrees
) -> None:
    made = await worktrees.make(str(repository / "src"), "iac-code/0a1b2c3d")
    assert made.cwd == f"{made.worktree.path}/src"
    assert made.worktree.branch == "iac-code/0a1b2c3d"
    assert made.worktree.base == git("rev-parse", "HEAD", cwd=repository)
    assert worktree_at(made.cwd) == made.worktree  # found again from its directory alone
    assert worktree_at(str(repository)) is None  # the main checkout is no session's


async def test_outside_a_repository_none_is_made(world: World, worktrees: GitWorktrees) -> None:
    with pytest.raises(NoRepository):
        await worktrees.make(str(world.work), "iac-code/0a1b2c3d")


@pytest.mark.parametrize("engine", ["bubblewrap", "landlock"])
async def test_two_sessions_edit_the_same_file_without_seeing_each_other(
    world: World, repository: Path, worktrees: GitWorktrees, engine: str
) -> None:
    one = await worktrees.make(str(repository), "iac-code/11111111")
    two = await worktrees.make(str(repository), "iac-code/22222222")
    first = await run_made(world, one, "echo \"print('one')\" > src/app.py; cat src/app.py", engine)
    second = await run_made(
        world, two, "echo \"print('two')\" > src/app.py; cat src/app.py", engine
    )
    assert (first.output, second.output) == ("print('one')\n", "print('two')\n")
    assert read(one.worktree.path, "src/app.py") == "print('one')\n"
    assert read(two.worktree.path, "src/app.py") == "print('two')\n"
    assert (repository / "src" / "app.py").read_text() == "print('v1')\n"  # the main checkout


@pytest.mark.parametrize("engine", ["bubblewrap", "landlock"])
async def test_a_sandboxed_command_commits_in_its_worktree(
    world: World, repository: Path, worktrees: GitWorktrees, engine: str
) -> None:
    made = await worktrees.make(str(repository), "iac-code/33333333")
    ran = await run_made(
        world,
        made,
        f"echo more >> src/app.py && git {IDENTITY} commit -qam 'by the agent' && echo done",
        engine,
    )
    assert ran.output.strip().endswith("done"), ran.output
    assert git("log", "-1", "--format=%s", "iac-code/33333333", cwd=repository) == "by the agent"
    assert await worktrees.unmerged(made.worktree) == Unmerged(changes=0, commits=1)


@pytest.mark.parametrize("engine", ["bubblewrap", "landlock"])
async def test_the_repositorys_hooks_config_and_main_checkout_stay_out_of_reach(
    world: World, repository: Path, worktrees: GitWorktrees, engine: str
) -> None:
    made = await worktrees.make(str(repository), "iac-code/44444444")
    hooks = repository / ".git" / "hooks"
    ran = await run_made(
        world,
        made,
        f"echo 'touch /tmp/pwned' > {hooks}/post-checkout; "
        f"echo '[core] hooksPath = /tmp' >> {repository}/.git/config; "
        f"echo changed > {repository}/src/app.py",
        engine,
    )
    assert ran.exit_code != 0
    assert not (hooks / "post-checkout").exists()
    assert "hooksPath" not in (repository / ".git" / "config").read_text()
    assert (repository / "src" / "app.py").read_text() == "print('v1')\n"


async def test_a_fork_holds_its_sources_current_files(
    repository: Path, worktrees: GitWorktrees
) -> None:
    source = await worktrees.make(str(repository), "iac-code/55555555")
    write("print('edited')\n", source.worktree.path, "src/app.py")
    write("new and untracked\n", source.worktree.path, "notes.md")
    fork = await worktrees.fork(source.worktree, source.cwd, "iac-code/66666666")
    assert read(fork.worktree.path, "src/app.py") == "print('edited')\n"
    assert read(fork.worktree.path, "notes.md") == "new and untracked\n"
    assert fork.worktree.branch == "iac-code/66666666"
    assert await worktrees.unmerged(fork.worktree) == Unmerged(changes=2, commits=0)


async def test_removing_takes_the_worktree_and_its_branch(
    repository: Path, worktrees: GitWorktrees
) -> None:
    made = await worktrees.make(str(repository), "iac-code/77777777")
    write("print('lost')\n", made.worktree.path, "src/app.py")
    await worktrees.remove(made.worktree)
    assert not exists(made.worktree.path)
    assert "iac-code/77777777" not in git("branch", "--list", cwd=repository)


def commit_in(path: str, name: str, text: str, message: str) -> None:
    write(text, path, name)
    git("add", name, cwd=path)
    git(*IDENTITY.split(), "commit", "-qm", message, cwd=path)


async def test_the_summary_shows_commits_changes_and_new_files(
    repository: Path, worktrees: GitWorktrees
) -> None:
    made = await worktrees.make(str(repository), "iac-code/88888888")
    commit_in(made.worktree.path, "src/app.py", "print('v2')\n", "agent: v2")
    write("draft\n", made.worktree.path, "notes.md")
    summary = await worktrees.summary(made.worktree)
    assert [c.split(" ", 1)[1] for c in summary.commits] == ["agent: v2"]
    assert "src/app.py" in summary.changed
    assert summary.untracked == ("notes.md",)


async def test_a_merge_back_fast_forwards_where_it_can(
    repository: Path, worktrees: GitWorktrees
) -> None:
    made = await worktrees.make(str(repository), "iac-code/99999999")
    commit_in(made.worktree.path, "src/app.py", "print('v2')\n", "agent: v2")
    merged = await worktrees.merge(made.worktree)
    assert (merged.done, merged.how) == (True, "a fast-forward")
    assert read(str(repository), "src/app.py") == "print('v2')\n"
    assert await worktrees.unmerged(made.worktree) == Unmerged(changes=0, commits=0)


async def test_a_merge_back_makes_a_merge_commit_when_both_moved(
    repository: Path, worktrees: GitWorktrees
) -> None:
    made = await worktrees.make(str(repository), "iac-code/aaaaaaaa")
    commit_in(made.worktree.path, "agent.txt", "by the agent\n", "agent")
    commit_in(str(repository), "user.txt", "by the user\n", "user")
    merged = await worktrees.merge(made.worktree)
    assert (merged.done, merged.how) == (True, "a merge commit")
    assert read(str(repository), "agent.txt") == "by the agent\n"
    assert read(str(repository), "user.txt") == "by the user\n"


async def test_a_conflict_is_reported_and_nothing_is_changed(
    repository: Path, worktrees: GitWorktrees
) -> None:
    made = await worktrees.make(str(repository), "iac-code/bbbbbbbb")
    commit_in(made.worktree.path, "src/app.py", "print('agent')\n", "agent")
    commit_in(str(repository), "src/app.py", "print('user')\n", "user")
    head = git("rev-parse", "HEAD", cwd=repository)
    merged = await worktrees.merge(made.worktree)
    assert not merged.done and merged.conflicts == ("src/app.py",)
    assert git("rev-parse", "HEAD", cwd=repository) == head
    assert read(str(repository), "src/app.py") == "print('user')\n"
    assert git("status", "--porcelain", cwd=repository) == ""  # the merge was aborted

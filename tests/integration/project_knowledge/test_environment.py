"""LocalProjectKnowledge's environment: git branch and status, the listing, a git that hangs."""

import os
from pathlib import Path

import pytest

from adapters.knowledge.local import LocalProjectKnowledge
from domain.knowledge import (
    GIT_STATUS_LINES,
    LISTING_ENTRIES,
)
from tests.integration.project_knowledge.support import (
    commit_all,
    git,
    init_repository,
    write,
)

pytestmark = pytest.mark.integration


async def test_environment_of_a_repository_on_a_branch(
    knowledge: LocalProjectKnowledge, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELL", "/bin/zsh")
    write(repo / "main.tf", "resource {}\n")
    commit_all(repo)
    git(repo, "checkout", "--quiet", "-b", "feature/x")
    write(repo / "main.tf", "changed\n")
    write(repo / "new.tf", "")

    environment = await knowledge.environment(str(repo), ("/extra",))

    assert environment.cwd == str(repo) and environment.directories == ("/extra",)
    assert environment.date == "2024-02-29"
    assert environment.shell == "/bin/zsh"
    assert environment.platform.strip()
    assert environment.git is not None
    assert environment.git.root == str(repo)
    assert environment.git.branch == "feature/x"
    assert environment.git.status == (" M main.tf", "?? new.tf")
    assert environment.git.more_status == 0
    assert environment.listing == ("main.tf", "new.tf")


async def test_a_detached_head_has_no_branch_and_a_clean_tree_no_status(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    write(repo / "main.tf", "")
    commit_all(repo)
    git(repo, "checkout", "--quiet", "--detach")

    environment = await knowledge.environment(str(repo / "."), ())

    assert environment.git is not None
    assert environment.git.branch is None
    assert environment.git.status == ()


async def test_a_repository_without_commits_still_names_its_branch(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    environment = await knowledge.environment(str(repo), ())

    assert environment.git is not None and environment.git.branch == "main"


async def test_a_subdirectory_of_a_repository_is_in_it(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    write(repo / "modules" / "vpc" / "main.tf", "")

    environment = await knowledge.environment(str(repo / "modules"), ())

    assert environment.git is not None and environment.git.root == str(repo)
    assert environment.git.status == ("?? ./",)  # relative to cwd, as git shows it there
    assert environment.listing == ("vpc/",)


async def test_a_dirty_status_is_cut_at_its_limit_and_counts_the_rest(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    for number in range(GIT_STATUS_LINES + 5):
        write(repo / f"file{number:02}.tf", "")

    environment = await knowledge.environment(str(repo), ())

    assert environment.git is not None
    assert environment.git.status == tuple(
        f"?? file{number:02}.tf" for number in range(GIT_STATUS_LINES)
    )
    assert environment.git.more_status == 5


async def test_not_a_repository(
    knowledge: LocalProjectKnowledge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A directory above tmp_path could be a repository on some machine: git is told to
    # look no higher than tmp_path.
    cwd = tmp_path / "plain"
    cwd.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))

    environment = await knowledge.environment(str(cwd), ())

    assert environment.git is None
    assert environment.listing == ()


async def test_the_listing_is_sorted_regardless_of_case_and_cut(
    knowledge: LocalProjectKnowledge, tmp_path: Path
) -> None:
    cwd = init_repository(tmp_path / "listed")
    (cwd / "Beta").mkdir()
    (cwd / ".hidden").mkdir()
    write(cwd / "alpha.tf", "")
    write(cwd / ".env.example", "")
    (cwd / "to-beta").symlink_to(cwd / "Beta")
    for number in range(LISTING_ENTRIES):
        write(cwd / f"z{number:02}.txt", "")

    environment = await knowledge.environment(str(cwd), ())

    assert environment.listing[:5] == (".env.example", ".hidden/", "alpha.tf", "Beta/", "to-beta/")
    assert ".git" not in environment.listing and ".git/" not in environment.listing
    assert len(environment.listing) == LISTING_ENTRIES
    assert environment.listing[-1] == f"z{LISTING_ENTRIES - 6:02}.txt"
    assert environment.more_entries == 5


async def test_a_missing_cwd_gives_an_empty_listing_and_no_git(
    knowledge: LocalProjectKnowledge, tmp_path: Path
) -> None:
    environment = await knowledge.environment(str(tmp_path / "gone"), ())

    assert environment.listing == () and environment.git is None


def fake_git(directory: Path, script: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "git"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return directory


async def test_a_git_that_does_not_answer_is_stopped_and_left_out(
    config_dir: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    bin_dir = fake_git(tmp_path / "bin", f"echo $$ >> {pids}\nexec sleep 600\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    knowledge = LocalProjectKnowledge(config_dir, git_seconds=2.0)

    environment = await knowledge.environment(str(repo), ())

    assert environment.git is None
    (pid,) = map(int, pids.read_text().split())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(pid, 0)


async def test_a_status_that_does_not_finish_in_time_says_so(
    config_dir: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        'case "$1" in\n'
        f"  rev-parse) echo {repo} ;;\n"
        "  symbolic-ref) echo main ;;\n"
        "  *) exec sleep 600 ;;\n"
        "esac\n"
    )
    monkeypatch.setenv("PATH", f"{fake_git(tmp_path / 'bin', script)}:{os.environ['PATH']}")
    knowledge = LocalProjectKnowledge(config_dir, git_seconds=2.0)

    environment = await knowledge.environment(str(repo), ())

    assert environment.git is not None
    assert environment.git.branch == "main"
    assert environment.git.status == ("(git status took over 2 s: not shown)",)


async def test_without_git_there_is_no_git_state(
    knowledge: LocalProjectKnowledge, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))

    environment = await knowledge.environment(str(repo), ())

    assert environment.git is None


async def test_git_never_sees_the_servers_secrets(
    config_dir: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "seen"
    script = f"env > {seen}\necho {repo}\n"
    monkeypatch.setenv("PATH", f"{fake_git(tmp_path / 'bin', script)}:{os.environ['PATH']}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("GIT_DIR", "/somewhere/else/.git")
    knowledge = LocalProjectKnowledge(config_dir)

    await knowledge.environment(str(repo), ())

    variables = seen.read_text()
    assert "sk-secret" not in variables and "GIT_DIR=" not in variables
    assert "GIT_OPTIONAL_LOCKS=0" in variables and "LC_ALL=C" in variables

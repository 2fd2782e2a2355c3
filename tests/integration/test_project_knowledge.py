"""LocalProjectKnowledge against real temp directories and real git repositories."""

import logging
import os
import subprocess
from datetime import date
from pathlib import Path

import pytest

from adapters.knowledge.files import READ_LIMIT
from adapters.knowledge.local import LocalProjectKnowledge
from application.ports.knowledge import SkillNotFound
from domain.knowledge import (
    CUT_MARKER,
    GIT_STATUS_LINES,
    INSTRUCTION_CAP,
    LISTING_ENTRIES,
    InstructionFile,
    InstructionScope,
)

pytestmark = pytest.mark.integration

USER, PROJECT, DIRECTORY = (
    InstructionScope.USER,
    InstructionScope.PROJECT,
    InstructionScope.DIRECTORY,
)


def git(repo: Path, *args: str) -> str:
    # The machine's own git settings (a signing key, another default branch) stay out.
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


def init_repository(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    return repo.resolve()  # what git names its root


def commit_all(repo: Path, message: str = "work") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", message)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def found(files: tuple[InstructionFile, ...]) -> list[tuple[str, InstructionScope]]:
    return [(file.path, file.scope) for file in files]


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def knowledge(config_dir: Path) -> LocalProjectKnowledge:
    return LocalProjectKnowledge(config_dir, today=lambda: date(2024, 2, 29))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repository(tmp_path / "outer" / "repo")


# --- instructions ---------------------------------------------------------------------


async def test_the_users_file_then_each_directory_from_the_repository_root_down_to_cwd(
    knowledge: LocalProjectKnowledge, config_dir: Path, repo: Path
) -> None:
    write(repo.parent / "AGENTS.md", "above the repository: never read")
    user = write(config_dir / "AGENTS.md", "user rules")
    user_iac = write(config_dir / "IAC-CODE.md", "user iac rules")
    root = write(repo / "AGENTS.md", "root rules")
    root_iac = write(repo / "IAC-CODE.md", "root iac rules")
    package = write(repo / "pkg" / "AGENTS.md", "package rules")
    cwd = repo / "pkg" / "sub"
    here = write(cwd / "IAC-CODE.md", "here")

    files = await knowledge.instructions(str(cwd))

    assert found(files) == [
        (str(user), USER),
        (str(user_iac), USER),
        (str(root), PROJECT),
        (str(root_iac), PROJECT),
        (str(package), PROJECT),
        (str(here), PROJECT),
    ]
    assert [file.text for file in files] == [
        "user rules",
        "user iac rules",
        "root rules",
        "root iac rules",
        "package rules",
        "here",
    ]
    assert not any(file.truncated for file in files)


async def test_a_worktree_or_submodule_has_a_git_file_and_that_is_its_root(
    knowledge: LocalProjectKnowledge, tmp_path: Path
) -> None:
    write(tmp_path / "AGENTS.md", "outside")
    write(tmp_path / "work" / ".git", "gitdir: /elsewhere\n")
    inner = write(tmp_path / "work" / "AGENTS.md", "inside")

    files = await knowledge.instructions(str(tmp_path / "work"))

    assert found(files) == [(str(inner), PROJECT)]


async def test_outside_a_repository_every_parent_up_to_the_file_system_root(
    knowledge: LocalProjectKnowledge, tmp_path: Path
) -> None:
    top = write(tmp_path / "a" / "AGENTS.md", "top")
    middle = write(tmp_path / "a" / "b" / "IAC-CODE.md", "middle")
    cwd = tmp_path / "a" / "b" / "c"
    here = write(cwd / "AGENTS.md", "here")

    files = await knowledge.instructions(str(cwd))

    # The file system root or /tmp may hold files of their own: only ours are checked.
    ours = [entry for entry in found(files) if entry[0].startswith(str(tmp_path))]
    assert ours == [(str(top), PROJECT), (str(middle), PROJECT), (str(here), PROJECT)]
    assert found(files)[-3:] == ours


async def test_a_long_file_is_cut_with_a_marker_naming_what_was_left_out(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    long = write(repo / "AGENTS.md", "x" * (INSTRUCTION_CAP + 10))
    huge = write(repo / "IAC-CODE.md", "y" * (READ_LIMIT + 5000))  # more than is ever read

    first, second = await knowledge.instructions(str(repo))

    assert first.truncated and second.truncated
    assert first.text == "x" * INSTRUCTION_CAP + CUT_MARKER.format(cut=10, path=long)
    assert second.text == "y" * INSTRUCTION_CAP + CUT_MARKER.format(
        cut=READ_LIMIT + 5000 - INSTRUCTION_CAP, path=huge
    )


async def test_a_file_of_exactly_the_cap_is_whole(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    write(repo / "AGENTS.md", "z" * INSTRUCTION_CAP)

    (file,) = await knowledge.instructions(str(repo))

    assert file.text == "z" * INSTRUCTION_CAP and not file.truncated


async def test_files_that_cannot_be_read_are_left_out_and_bad_bytes_replaced(
    knowledge: LocalProjectKnowledge, repo: Path, tmp_path: Path
) -> None:
    (repo / "AGENTS.md").mkdir()  # a directory by that name
    os.mkfifo(repo / "IAC-CODE.md")  # would block a plain open() for ever
    one = repo / "one"
    write(one / "AGENTS.md", "")
    write(one / "IAC-CODE.md", " \n\t\n")
    two = repo / "two"
    two.mkdir()
    (two / "AGENTS.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0binary")
    (two / "IAC-CODE.md").symlink_to(two / "IAC-CODE.md")  # a loop
    three = repo / "three"
    three.mkdir()
    (three / "AGENTS.md").symlink_to(tmp_path / "missing.md")
    (three / "IAC-CODE.md").symlink_to(repo)  # to a directory
    four = repo / "four"
    four.mkdir()
    (four / "AGENTS.md").write_bytes(b"caf\xe9 and \xff")
    (four / "IAC-CODE.md").symlink_to(write(tmp_path / "shared.md", "linked"))

    for cwd in (one, two, three):
        assert await knowledge.instructions(str(cwd)) == ()
    files = await knowledge.instructions(str(four))

    assert found(files) == [
        (str(four / "AGENTS.md"), PROJECT),
        (str(four / "IAC-CODE.md"), PROJECT),  # named where it was found, not its target
    ]
    assert [file.text for file in files] == ["caf\ufffd and \ufffd", "linked"]


async def test_a_missing_cwd_or_config_directory_gives_nothing(tmp_path: Path) -> None:
    knowledge = LocalProjectKnowledge(tmp_path / "no-config")
    init_repository(tmp_path / "repo")

    assert await knowledge.instructions(str(tmp_path / "repo" / "gone")) == ()


async def test_a_change_is_picked_up_by_the_next_call(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    assert await knowledge.instructions(str(repo)) == ()
    rules = write(repo / "AGENTS.md", "first")
    assert [file.text for file in await knowledge.instructions(str(repo))] == ["first"]

    rules.write_text("second")
    assert [file.text for file in await knowledge.instructions(str(repo))] == ["second"]

    rules.unlink()
    assert await knowledge.instructions(str(repo)) == ()


async def test_the_same_file_is_never_given_twice(tmp_path: Path) -> None:
    repo = init_repository(tmp_path / "repo")
    user = write(repo / "AGENTS.md", "the config directory is the project")
    (repo / "IAC-CODE.md").symlink_to(user)  # the same file by another name
    knowledge = LocalProjectKnowledge(repo)

    files = await knowledge.instructions(str(repo))

    assert found(files) == [(str(user), USER)]


async def test_paths_are_the_ones_cwd_names_normalised(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    rules = write(repo / "AGENTS.md", "rules")
    (repo / "sub").mkdir()

    files = await knowledge.instructions(f"{repo}/sub/../sub/.")

    assert found(files) == [(str(rules), PROJECT)]


# --- nested instructions --------------------------------------------------------------


async def test_each_directory_below_cwd_on_the_way_to_a_deep_file_outermost_first(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    write(repo / "AGENTS.md", "cwd's own: given by instructions(), not here")
    a = write(repo / "a" / "AGENTS.md", "a")
    b_agents = write(repo / "a" / "b" / "AGENTS.md", "b")
    b_iac = write(repo / "a" / "b" / "IAC-CODE.md", "b iac")
    c = write(repo / "a" / "b" / "c" / "AGENTS.md", "c")
    write(repo / "a" / "b" / "c" / "d" / "AGENTS.md", "below the file: not on the way")
    target = write(repo / "a" / "b" / "c" / "main.tf", "")

    files = await knowledge.nested_instructions(str(target), str(repo))

    assert found(files) == [
        (str(a), DIRECTORY),
        (str(b_agents), DIRECTORY),
        (str(b_iac), DIRECTORY),
        (str(c), DIRECTORY),
    ]
    assert [file.text for file in files] == ["a", "b", "b iac", "c"]


async def test_a_directory_path_includes_its_own_and_a_new_files_path_works(
    knowledge: LocalProjectKnowledge, repo: Path
) -> None:
    a = write(repo / "a" / "AGENTS.md", "a")
    b = write(repo / "a" / "b" / "AGENTS.md", "b")

    assert found(await knowledge.nested_instructions(str(repo / "a" / "b"), str(repo))) == [
        (str(a), DIRECTORY),
        (str(b), DIRECTORY),
    ]
    new_file = repo / "a" / "b" / "new" / "file.tf"  # not written yet
    assert found(await knowledge.nested_instructions(str(new_file), str(repo))) == [
        (str(a), DIRECTORY),
        (str(b), DIRECTORY),
    ]
    assert found(await knowledge.nested_instructions("a/x.tf", str(repo))) == [(str(a), DIRECTORY)]


async def test_nothing_for_cwd_itself_or_outside_it_or_out_through_dot_dot_or_a_symlink(
    knowledge: LocalProjectKnowledge, tmp_path: Path
) -> None:
    cwd = tmp_path / "project"
    write(cwd / "AGENTS.md", "cwd")
    write(tmp_path / "other" / "AGENTS.md", "other")
    (cwd / "link").symlink_to(tmp_path / "other")

    for path in (
        cwd / "main.tf",
        cwd,
        tmp_path / "other" / "main.tf",
        cwd / ".." / "other" / "main.tf",
        cwd / "link" / "main.tf",
        tmp_path,
    ):
        assert await knowledge.nested_instructions(str(path), str(cwd)) == (), path


async def test_a_file_is_found_through_a_cwd_reached_by_a_symlink(
    knowledge: LocalProjectKnowledge, tmp_path: Path
) -> None:
    real = tmp_path / "real"
    write(real / "a" / "AGENTS.md", "a")
    alias = tmp_path / "alias"
    alias.symlink_to(real)

    files = await knowledge.nested_instructions(str(real / "a" / "x.tf"), str(alias))

    assert found(files) == [(str(alias / "a" / "AGENTS.md"), DIRECTORY)]


# --- environment ----------------------------------------------------------------------


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


# --- skills ---------------------------------------------------------------------------


def skill(directory: Path, folder: str, front: str, body: str = "Do it.") -> Path:
    return write(directory / folder / "SKILL.md", f"---\n{front}\n---\n\n{body}\n")


async def test_skills_of_the_project_and_the_user_the_projects_winning_by_name(
    knowledge: LocalProjectKnowledge,
    config_dir: Path,
    repo: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    project_skills, user_skills = repo / ".iac-code" / "skills", config_dir / "skills"
    deploy = skill(project_skills, "deploy", "description: the project's deploy")
    skill(user_skills, "deploy", "description: the user's deploy")
    review = skill(user_skills, "review-x", "name: Review\ndescription: reviews")
    plan = skill(project_skills, "plan", "name: plan_it\ndescription: >\n  plans\n  things")
    skill(user_skills, "broken", "description: [unclosed")
    skill(user_skills, "mute", "name: mute")
    skill(user_skills, "bad-name", "name: no spaces allowed\ndescription: d")
    (user_skills / "empty-folder").mkdir()
    write(user_skills / "stray.md", "not a folder")
    write(user_skills / "plain" / "SKILL.md", "no front matter")

    with caplog.at_level(logging.WARNING):
        skills = await knowledge.skills(str(repo))

    assert [(s.name, s.description, s.path) for s in skills] == [
        ("deploy", "the project's deploy", str(deploy)),
        ("plan_it", "plans things", str(plan)),
        ("review", "reviews", str(review)),
    ]
    left_out = " ".join(record.getMessage() for record in caplog.records)
    for folder in ("broken", "mute", "bad-name", "plain"):
        assert str(user_skills / folder / "SKILL.md") in left_out


async def test_no_skill_directories_no_skills(knowledge: LocalProjectKnowledge, repo: Path) -> None:
    assert await knowledge.skills(str(repo)) == ()


async def test_a_skills_body_is_its_text_after_the_front_matter(
    knowledge: LocalProjectKnowledge, config_dir: Path, repo: Path
) -> None:
    skill(config_dir / "skills", "deploy", "description: d", body="## Steps\n---\n1. plan")
    (deploy,) = await knowledge.skills(str(repo))

    assert await knowledge.skill_body(deploy) == "## Steps\n---\n1. plan"


async def test_a_long_body_is_cut_and_a_gone_skill_is_not_found(
    knowledge: LocalProjectKnowledge, config_dir: Path, repo: Path
) -> None:
    path = skill(config_dir / "skills", "long", "description: d", body="b" * (INSTRUCTION_CAP + 3))
    (long,) = await knowledge.skills(str(repo))

    assert await knowledge.skill_body(long) == "b" * INSTRUCTION_CAP + CUT_MARKER.format(
        cut=3, path=path
    )
    path.unlink()
    with pytest.raises(SkillNotFound):
        await knowledge.skill_body(long)

"""LocalProjectKnowledge's instruction files: the user's, then each directory down to cwd."""

import os
from pathlib import Path

import pytest

from adapters.knowledge.files import READ_LIMIT
from adapters.knowledge.local import LocalProjectKnowledge
from domain.knowledge import (
    CUT_MARKER,
    INSTRUCTION_CAP,
)
from tests.integration.project_knowledge.support import (
    PROJECT,
    USER,
    found,
    init_repository,
    write,
)

pytestmark = pytest.mark.integration


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

"""LocalProjectKnowledge's instruction files below cwd, on the way to a file the agent touches."""

from pathlib import Path

import pytest

from adapters.knowledge.local import LocalProjectKnowledge
from tests.integration.project_knowledge.support import DIRECTORY, found, write

pytestmark = pytest.mark.integration


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

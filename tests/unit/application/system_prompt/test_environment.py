"""The environment context: pure text from the workspace's facts."""

from application.knowledge.system_prompt import LINE_CAP, environment_context
from domain.knowledge import (
    GitState,
)
from tests.unit.application.system_prompt.support import environment


def test_the_environment_block_has_every_fact() -> None:
    block = environment_context(environment())
    assert block == (
        "<environment>\n"
        "Working directory: /repo/app\n"
        "Platform: Linux 6.1 (x86_64)\n"
        "Shell: /bin/bash\n"
        "Date: 2025-03-14\n"
        "Git: repository at /repo, branch main\n"
        "Git status: clean\n"
        "Top-level entries:\n"
        "  src/\n"
        "  README.md\n"
        "</environment>"
    )


def test_extra_directories_are_listed() -> None:
    block = environment_context(environment(directories=("/srv/shared", "/opt/lib")))
    assert "Extra directories: /srv/shared, /opt/lib\n" in block
    assert "Extra directories" not in environment_context(environment())


def test_a_dirty_tree_lists_its_status_lines() -> None:
    git = GitState(branch="feature/x", status=(" M app.py", "?? new.txt"), root="/repo/app")
    block = environment_context(environment(git=git))
    assert "Git: repository, branch feature/x\n" in block
    assert "Git status:\n   M app.py\n  ?? new.txt\nTop-level entries:" in block
    assert "clean" not in block


def test_status_lines_left_out_are_counted() -> None:
    git = GitState(branch="main", status=(" M a.py",), more_status=57, root="/repo")
    assert "Git status:\n   M a.py\n  +57 more\n" in environment_context(environment(git=git))


def test_a_detached_head_says_so() -> None:
    git = GitState(branch=None, status=(), root="/repo")
    assert "Git: repository at /repo, detached HEAD\n" in environment_context(environment(git=git))


def test_outside_a_repository() -> None:
    block = environment_context(environment(git=None))
    assert "Git: not a git repository\n" in block
    assert "Git status" not in block


def test_listing_entries_left_out_are_counted() -> None:
    block = environment_context(environment(listing=("a/", "b"), more_entries=140))
    assert block.endswith("Top-level entries:\n  a/\n  b\n  +140 more\n</environment>")


def test_an_empty_directory() -> None:
    block = environment_context(environment(listing=()))
    assert block.endswith("Top-level entries: none\n</environment>")


def test_each_line_is_cut_at_a_sane_length_and_stays_one_line() -> None:
    odd = "evil\nname" + "z" * 1000
    block = environment_context(environment(listing=(odd,), shell="/bin/" + "s" * 1000))
    lines = block.split("\n")
    assert all(len(line) <= LINE_CAP for line in lines)
    assert "  evil\\x0aname" in block
    assert lines[0] == "<environment>"
    assert lines[-1] == "</environment>"

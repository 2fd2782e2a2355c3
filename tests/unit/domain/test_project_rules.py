import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.project_rules import CommandPattern, ProjectRule, rule_for, simple_words
from tests.factories import T0


@pytest.mark.parametrize(
    ("command", "words", "exact"),
    [
        ("git status", ("git", "status"), False),
        ("git status -s", ("git", "status"), False),
        ("npm test -- --watch", ("npm", "test"), False),
        ("python script.py --fast", ("python", "script.py"), False),
        ("ls -la", ("ls", "-la"), True),  # no subcommand: only exactly this command
        ("pytest", ("pytest",), True),
        ("pytest tests/unit", ("pytest", "tests/unit"), True),
        ("'git' 'status'", ("git", "status"), False),
    ],
)
def test_always_allow_remembers_program_and_subcommand_or_the_exact_command(
    command: str, words: tuple[str, ...], exact: bool
) -> None:
    assert CommandPattern.of(command) == CommandPattern(words=words, exact=exact)


@pytest.mark.parametrize(
    "command",
    [
        "git status && rm -rf /",
        "git status; rm -rf /",
        "git status | sh",
        "echo $(rm -rf /)",
        "echo `id`",
        "echo hi > file",
        "cat < secret",
        "FOO=1 git status",
        "git status\nrm -rf /",
        "sleep 1 &",
        "echo 'unterminated",
        "",
        "   ",
    ],
)
def test_commands_with_shell_syntax_are_never_remembered_nor_covered(command: str) -> None:
    assert simple_words(command) is None
    assert CommandPattern.of(command) is None
    prefix = CommandPattern(words=("git", "status"), exact=False)
    assert not prefix.covers(command)


@pytest.mark.parametrize(
    ("pattern", "command", "covered"),
    [
        (("git", "status"), "git status", True),
        (("git", "status"), "git status --short .", True),
        (("git", "status"), "git push", False),
        (("git", "status"), "git", False),
        (("git", "status"), "git statusx", False),
        (("git", "status"), "git status && git push", False),
    ],
)
def test_a_prefix_pattern_covers_commands_starting_with_its_words(
    pattern: tuple[str, ...], command: str, covered: bool
) -> None:
    assert CommandPattern(words=pattern, exact=False).covers(command) is covered


def test_an_exact_pattern_covers_only_its_command() -> None:
    exact = CommandPattern(words=("ls", "-la"), exact=True)
    assert exact.covers("ls -la") and exact.covers("ls  '-la'")
    assert not exact.covers("ls -la /etc")
    assert not exact.covers("ls")


def rule(tool: str, command: str | None = None, cwd: str = "/p") -> ProjectRule:
    made = rule_for(
        cwd=cwd, tool_name=tool, arguments={"command": command} if command else {}, at=T0
    )
    assert made is not None
    return made


def test_rules_cover_their_tool_and_for_bash_their_commands() -> None:
    write = rule("write_file")
    assert write.covers("write_file", {"path": "a"})
    assert not write.covers("edit_file", {"path": "a"})
    git = rule("bash", "git status -s")
    assert git.covers("bash", {"command": "git status"})
    assert not git.covers("bash", {"command": "git push"})
    assert not git.covers("bash", {})
    assert not git.covers("write_file", {"command": "git status"})
    assert rule("agent").covers("agent", {"prompt": "x"})


def test_a_bash_rule_without_its_command_covers_nothing() -> None:
    assert not ProjectRule(cwd="/p", tool_name="bash", created_at=T0).covers(
        "bash", {"command": "ls"}
    )


def test_compound_commands_and_missing_commands_give_no_rule() -> None:
    assert rule_for(cwd="/p", tool_name="bash", arguments={"command": "a && b"}, at=T0) is None
    assert rule_for(cwd="/p", tool_name="bash", arguments={}, at=T0) is None


def test_same_grant_ignores_when_and_where_it_was_granted() -> None:
    first = rule("bash", "git status")
    again = rule_for(
        cwd="/p", tool_name="bash", arguments={"command": "git status -s"}, at=T0, session_id="s2"
    )
    assert again is not None and first.same_grant(again)
    assert not first.same_grant(rule("bash", "git status", cwd="/q"))
    assert not first.same_grant(rule("bash", "git push"))


def test_descriptions_say_what_is_covered() -> None:
    assert rule("bash", "git status -s").description == (
        "bash: commands starting with `git status …` in /p"
    )
    assert rule("bash", "ls -la").description == "bash: exactly `ls -la` in /p"
    assert rule("write_file").description == "write_file in /p"


def test_scopes_say_which_calls_run() -> None:
    assert rule("write_file").scope == "every call"
    assert rule("bash", "ls -la").scope == "exactly `ls -la`"
    assert rule("bash", "git status").scope == "commands starting with `git status …`"


@given(st.text(max_size=80))
def test_a_remembered_command_is_covered_by_its_own_rule(command: str) -> None:
    pattern = CommandPattern.of(command)
    if pattern is not None:
        assert pattern.covers(command)


@given(st.text(max_size=40), st.sampled_from(sorted(";&|<>()`$\n\r")), st.text(max_size=40))
def test_nothing_with_shell_syntax_is_ever_covered(before: str, syntax: str, after: str) -> None:
    command = f"git status {before}{syntax}{after}"
    assert not CommandPattern(words=("git", "status"), exact=False).covers(command)
    assert CommandPattern.of(command) is None

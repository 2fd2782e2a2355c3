"""Commands that expand into a prompt: a skill's `/<name> [args]` and `/init`."""

from application.knowledge.prompt_commands import INIT, init_prompt, skill_prompt, skill_specs
from domain.commands import CommandSpec
from domain.knowledge import InstructionFile, InstructionScope, Skill

CWD = "/home/dev/project"
RELEASE = Skill(name="release", description="Cut a release", path="/p/release/SKILL.md")
REVIEW = Skill(name="review", description="", path="/p/review/SKILL.md")


def _file(path: str, scope: InstructionScope = InstructionScope.PROJECT) -> InstructionFile:
    return InstructionFile(path=path, scope=scope, text="Run make test.")


# Specs and the name clash rule


def test_each_skill_is_a_command_taking_arguments() -> None:
    assert skill_specs((RELEASE, REVIEW)) == (
        CommandSpec(name="release", description="Cut a release", hint="args"),
        CommandSpec(name="review", description="Skill from /p/review/SKILL.md", hint="args"),
    )


def test_a_skill_never_shadows_a_built_in_command_or_an_mcp_prompt() -> None:
    help_skill = Skill(name="help", description="My help", path="/p/help/SKILL.md")
    mcp = Skill(name="mcp__docs__search", description="x", path="/p/m/SKILL.md")
    specs = skill_specs((help_skill, RELEASE, mcp), frozenset({"help", "mcp__docs__search"}))
    assert [s.name for s in specs] == ["release"]


def test_a_skill_never_shadows_init() -> None:
    init = Skill(name="init", description="Mine", path="/p/init/SKILL.md")
    assert skill_specs((init,)) == ()


def test_a_name_that_cannot_be_typed_as_a_command_is_left_out() -> None:
    odd = tuple(Skill(name=n, description="d", path="/p") for n in ("two words", "", "/x"))
    assert skill_specs(odd) == ()


# The expansion


def test_arguments_replace_the_placeholder() -> None:
    text = skill_prompt(RELEASE, "Release version $ARGUMENTS now.\n", "  2.0  ")
    first, rest = text.split("\n", 1)
    assert "release" in first and "invoked" in first
    assert rest.strip() == "Release version 2.0 now."
    assert "Arguments:" not in text


def test_an_empty_argument_empties_the_placeholder() -> None:
    text = skill_prompt(RELEASE, "Release $ARGUMENTS.", "")
    assert text.endswith("Release .") and "$ARGUMENTS" not in text


def test_without_a_placeholder_arguments_are_appended() -> None:
    text = skill_prompt(RELEASE, "Bump the version.\n", "2.0 --dry-run")
    assert text.endswith("Bump the version.\n\nArguments: 2.0 --dry-run")


def test_without_arguments_only_the_body_follows_the_first_line() -> None:
    text = skill_prompt(RELEASE, "Bump the version.", " ")
    assert text.split("\n\n", 1)[1] == "Bump the version."
    assert "Arguments" not in text


# /init


def test_init_is_a_command_without_arguments() -> None:
    assert INIT.name == "init" and INIT.hint is None
    assert INIT.description == "Write an AGENTS.md for this project"


def test_init_asks_for_a_new_agents_md_with_write_file() -> None:
    text = init_prompt(CWD, ())
    assert f"`{CWD}/AGENTS.md`" in text and "write_file" in text
    for topic in ("test", "layout", "conventions", "concise"):
        assert topic in text
    assert "Improve it" not in text


def test_init_improves_an_existing_agents_md_rather_than_replacing_it() -> None:
    existing = (_file("/home/dev/AGENTS.md"), _file(f"{CWD}/AGENTS.md"))
    text = init_prompt(CWD, existing)
    assert f"`{CWD}/AGENTS.md` exists" in text and "edit_file" in text
    assert "rather than replace it" in text
    # The other files loaded are named, so the new one does not repeat them.
    assert "`/home/dev/AGENTS.md` (project)" in text
    assert f"`{CWD}/AGENTS.md` (project)" not in text


def test_init_with_a_trailing_slash_in_cwd_finds_the_existing_file() -> None:
    text = init_prompt(CWD + "/", (_file(f"{CWD}/AGENTS.md"),))
    assert "exists" in text


def test_an_iac_code_md_in_cwd_is_not_the_agents_md() -> None:
    text = init_prompt(CWD, (_file(f"{CWD}/IAC-CODE.md"),))
    assert "write_file" in text and f"`{CWD}/IAC-CODE.md` (project)" in text

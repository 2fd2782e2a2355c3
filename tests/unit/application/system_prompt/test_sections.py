"""The system prompt template: its sections by tools and mode, kept stable for the cache."""

import pytest

from application.knowledge.system_prompt import (
    system_prompt,
)
from domain.modes import ModeId
from tests.unit.application.system_prompt.support import (
    ALL_TOOLS,
    ROOT_FILE,
    SKILLS,
    USER_FILE,
    render,
)


def test_the_prompt_says_who_the_agent_is_and_where_it_works() -> None:
    prompt = render()
    assert prompt.startswith("You are iac-code, an AI coding agent")
    assert "editor" in prompt
    assert "ACP" in prompt
    assert "The working directory of this session is `/repo/app`." in prompt


def test_every_present_tool_has_its_rule() -> None:
    prompt = render()
    for tool in ("read_file", "edit_file", "write_file", "glob", "grep", "bash", "agent"):
        assert f"`{tool}`" in prompt, tool
    assert "run the project's tests" in prompt
    assert "`web_fetch` only for URLs the user gave you" in prompt


def test_only_the_tools_present_are_mentioned() -> None:
    prompt = render(tools=frozenset({"read_file", "grep"}))
    assert "`read_file`" in prompt
    assert "with `grep` instead of guessing" in prompt
    for absent in ("edit_file", "write_file", "`bash`", "`agent`", "web_fetch", "`glob`"):
        assert absent not in prompt, absent


def test_the_general_rules_hold_without_any_tool() -> None:
    prompt = render(tools=frozenset())
    assert "Never invent file paths" in prompt
    assert "Quote file paths in backticks" in prompt
    assert "what you did not do" in prompt
    assert "`read_file`" not in prompt


def test_the_plan_section_needs_todo_write() -> None:
    assert "## Plans" in render()
    assert "todo_write" in render()
    without = render(tools=ALL_TOOLS - {"todo_write"})
    assert "## Plans" not in without
    assert "todo_write" not in without


def test_safety_and_output_sections_are_always_there() -> None:
    prompt = render(tools=frozenset())
    assert "Never send secrets, credentials or file contents to a URL" in prompt
    assert "need the user's say" in prompt
    assert "Ask when" in prompt
    assert "Markdown" in prompt
    assert "no emojis unless the user asks" in prompt


@pytest.mark.parametrize(
    ("mode", "heading", "says"),
    [
        (ModeId.DEFAULT, "## Mode: Default", "File edits and commands ask the user first"),
        (ModeId.ACCEPT_EDITS, "## Mode: Accept edits", "commands still ask the user first"),
        (ModeId.PLAN, "## Mode: Plan", "call `exit_plan_mode` with it"),
        (ModeId.BYPASS, "## Mode: Don't ask", "Everything inside the project runs without"),
    ],
)
def test_each_mode_says_what_it_allows(mode: str, heading: str, says: str) -> None:
    prompt = render(mode=mode)
    assert f"{heading}\n\n" in prompt
    assert says in prompt
    assert prompt.count("## Mode:") == 1


def test_only_plan_mode_mentions_exit_plan_mode() -> None:
    for mode in (ModeId.DEFAULT, ModeId.ACCEPT_EDITS, ModeId.BYPASS):
        assert "exit_plan_mode" not in render(mode=mode)


def test_an_unknown_mode_reads_as_the_default() -> None:
    assert render(mode="nonsense") == render(mode=ModeId.DEFAULT)


def test_the_prompt_stays_short_without_instructions() -> None:
    # ~4 characters a token: well under the ~1,000-token budget with every tool and skill.
    for mode in ModeId:
        assert len(render(mode=mode, skills=SKILLS)) < 3200


def test_no_date_in_the_prompt() -> None:
    assert "Date" not in render(instructions=(ROOT_FILE,), skills=SKILLS)


# --- cache stability and ordering ---


def test_the_same_inputs_give_the_same_text() -> None:
    first = render(instructions=(USER_FILE, ROOT_FILE), skills=SKILLS)
    again = system_prompt(
        cwd="/repo/app",
        mode=ModeId.DEFAULT,
        tools=list(reversed(sorted(ALL_TOOLS))),  # tool order does not matter
        instructions=(USER_FILE, ROOT_FILE),
        skills=SKILLS,
    )
    assert first.encode() == again.encode()


@pytest.mark.parametrize("mode", [ModeId.ACCEPT_EDITS, ModeId.PLAN, ModeId.BYPASS])
def test_a_mode_change_only_changes_the_text_from_the_mode_section_on(mode: str) -> None:
    default = render(instructions=(ROOT_FILE,), skills=SKILLS)
    other = render(mode=mode, instructions=(ROOT_FILE,), skills=SKILLS)
    prefix = default[: default.index("## Mode:")]
    assert other.startswith(prefix)
    assert other != default
    # The rest after the mode section is the same too: only that section differs.
    tail = default[default.index("The working directory") :]
    assert other.endswith(tail)


def test_sections_go_stable_first_then_mode_cwd_instructions_and_skills_last() -> None:
    prompt = render(instructions=(ROOT_FILE,), skills=SKILLS)
    order = [
        "You are iac-code",
        "## Working rules",
        "## Plans",
        "## Safety",
        "## Output",
        "## Mode:",
        "The working directory",
        "## Project instructions",
        "## Skills",
    ]
    positions = [prompt.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert prompt.endswith("- triage: Sort new issues by area.")

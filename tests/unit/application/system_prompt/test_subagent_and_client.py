"""The sub-agent's system prompt, and the client's own system prompt appended or overriding."""

import pytest

from application.knowledge.system_prompt import (
    subagent_system_prompt,
    system_prompt,
)
from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.modes import ModeId
from tests.unit.application.system_prompt.support import (
    ALL_TOOLS,
    ROOT_FILE,
    SKILLS,
    USER_FILE,
    render,
)


def test_the_subagent_prompt_gives_its_role_cwd_and_the_instructions() -> None:
    prompt = subagent_system_prompt(cwd="/repo/app", instructions=(USER_FILE, ROOT_FILE))
    assert prompt.startswith("You are a research sub-agent of iac-code")
    for tool in ("read_file", "list_files", "glob", "grep", "web_fetch"):
        assert tool in prompt
    assert "final message" in prompt
    assert "The working directory of this session is `/repo/app`." in prompt
    assert prompt.index(USER_FILE.path) < prompt.index(ROOT_FILE.path)
    assert "## Project instructions" in prompt
    # Not the lead's sections: no editing rules, plan or skills.
    for absent in ("edit_file", "todo_write", "## Skills", "## Mode"):
        assert absent not in prompt


def test_the_subagent_prompt_without_instructions() -> None:
    prompt = subagent_system_prompt(cwd="/w", instructions=())
    assert "## Project instructions" not in prompt
    assert prompt.endswith("The working directory of this session is `/w`.")


APPENDED = ClientPrompt(mode=ClientPromptMode.APPEND, texts=("Use metric units.", "Be brief."))
OVERRIDE = ClientPrompt(mode=ClientPromptMode.OVERRIDE, texts=("You review Terraform only.",))


def render_for(client: ClientPrompt, mode: str = ModeId.DEFAULT) -> str:
    return system_prompt(
        cwd="/repo/app",
        mode=mode,
        tools=ALL_TOOLS,
        instructions=(USER_FILE, ROOT_FILE),
        skills=SKILLS,
        client=client,
    )


def test_appended_text_comes_after_the_instructions_and_skills() -> None:
    prompt = render_for(APPENDED)
    ours = render(instructions=(USER_FILE, ROOT_FILE), skills=SKILLS)
    assert prompt.startswith(ours)  # the agent's prompt, byte for byte, first
    assert prompt[len(ours) :] == (
        "\n\n## From the editor\n\nThe editor gave these instructions for this session:"
        "\n\nUse metric units.\n\nBe brief."
    )


def test_override_replaces_the_agents_own_guidance() -> None:
    prompt = render_for(OVERRIDE)
    assert prompt.startswith("You review Terraform only.\n\n## Safety\n\n")
    for gone in ("You are iac-code", "## Working rules", "## Plans", "## Output"):
        assert gone not in prompt, gone


@pytest.mark.parametrize("mode", list(ModeId))
def test_override_keeps_what_keeps_the_agent_safe_and_working(mode: ModeId) -> None:
    prompt = render_for(OVERRIDE, mode)
    ours = render(mode=mode, instructions=(USER_FILE, ROOT_FILE), skills=SKILLS)
    kept = ours[ours.index("## Mode:") :]  # mode, working directory, instructions, skills
    assert prompt.endswith(kept)
    assert "Destructive or irreversible commands" in prompt
    assert "## Tool rules\n\n- Read a file with `read_file` before you change it" in prompt
    assert "Quote file paths" not in prompt  # our general style rules go with the rest
    assert "Answer in British English." in prompt and "## Skills" in prompt

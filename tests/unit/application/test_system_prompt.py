"""The system prompt template and the environment context: pure text from domain objects."""

import pytest

from application.knowledge.system_prompt import (
    LINE_CAP,
    environment_context,
    subagent_system_prompt,
    system_prompt,
)
from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.knowledge import (
    CUT_MARKER,
    Environment,
    GitState,
    InstructionFile,
    InstructionScope,
    Skill,
)
from domain.modes import ModeId

ALL_TOOLS = frozenset(
    {
        "read_file",
        "list_files",
        "glob",
        "grep",
        "web_fetch",
        "write_file",
        "edit_file",
        "bash",
        "agent",
        "todo_write",
        "exit_plan_mode",
        "load_skill",
    }
)
USER_FILE = InstructionFile(
    path="/home/dev/.config/iac-code/AGENTS.md",
    scope=InstructionScope.USER,
    text="Answer in British English.\n",
)
ROOT_FILE = InstructionFile(
    path="/repo/AGENTS.md", scope=InstructionScope.PROJECT, text="Run `make test`.\n"
)
INNER_FILE = InstructionFile(
    path="/repo/app/IAC-CODE.md", scope=InstructionScope.PROJECT, text="Use tabs in app/.\n"
)
SKILLS = (
    Skill(name="release", description="Cut a release of the package.", path="/s/release.md"),
    Skill(name="triage", description="Sort new issues by area.", path="/s/triage.md"),
)


def render(
    *,
    mode: str = ModeId.DEFAULT,
    tools: frozenset[str] = ALL_TOOLS,
    instructions: tuple[InstructionFile, ...] = (),
    skills: tuple[Skill, ...] = (),
) -> str:
    return system_prompt(
        cwd="/repo/app", mode=mode, tools=tools, instructions=instructions, skills=skills
    )


def environment(**changes: object) -> Environment:
    fields: dict[str, object] = {
        "cwd": "/repo/app",
        "directories": (),
        "platform": "Linux 6.1 (x86_64)",
        "shell": "/bin/bash",
        "date": "2025-03-14",
        "git": GitState(branch="main", status=(), root="/repo"),
        "listing": ("src/", "README.md"),
    }
    fields.update(changes)
    return Environment(**fields)  # type: ignore[arg-type]


# --- the system prompt: sections by tools and mode ---


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


# --- project instructions ---


def test_instruction_files_come_under_headers_with_path_and_scope_in_order() -> None:
    prompt = render(instructions=(USER_FILE, ROOT_FILE, INNER_FILE))
    headers = [
        "### `/home/dev/.config/iac-code/AGENTS.md` (user: the user's own, for every project)",
        "### `/repo/AGENTS.md` (project)",
        "### `/repo/app/IAC-CODE.md` (project)",
    ]
    positions = [prompt.index(header) for header in headers]
    assert positions == sorted(positions)
    assert "### `/repo/AGENTS.md` (project)\n\nRun `make test`.\n\n### `/repo/app/" in prompt
    assert prompt.endswith("Use tabs in app/.")


def test_the_users_file_goes_first_whatever_order_it_came_in() -> None:
    prompt = render(instructions=(ROOT_FILE, USER_FILE, INNER_FILE))
    assert prompt.index(USER_FILE.path) < prompt.index(ROOT_FILE.path)
    assert prompt.index(ROOT_FILE.path) < prompt.index(INNER_FILE.path)


def test_instructions_are_introduced_as_the_users_and_taking_precedence() -> None:
    prompt = render(instructions=(ROOT_FILE,))
    section = prompt[prompt.index("## Project instructions") :]
    assert "come from the user and the project" in section
    assert "take precedence" in section


def test_no_instructions_no_section() -> None:
    assert "## Project instructions" not in render()


def test_a_directory_file_is_labelled_as_such_and_goes_after_the_project_ones() -> None:
    nested = InstructionFile(
        path="/repo/app/db/AGENTS.md", scope=InstructionScope.DIRECTORY, text="Migrations."
    )
    prompt = render(instructions=(nested, ROOT_FILE))
    assert "### `/repo/app/db/AGENTS.md` (directory: for the files below it)" in prompt
    assert prompt.index(ROOT_FILE.path) < prompt.index(nested.path)


def test_a_cut_files_marker_reaches_the_model() -> None:
    marker = CUT_MARKER.format(cut=1234, path="/repo/AGENTS.md")
    cut = InstructionFile(
        path="/repo/AGENTS.md",
        scope=InstructionScope.PROJECT,
        text="x" * 100 + marker,
        truncated=True,
    )
    prompt = render(instructions=(cut,))
    assert prompt.endswith("x" * 100 + marker)
    assert "[... 1234 more characters of /repo/AGENTS.md not shown]" in prompt


# --- skills ---


def test_skills_are_listed_by_name_and_description_without_bodies() -> None:
    prompt = render(skills=SKILLS)
    section = prompt[prompt.index("## Skills") :]
    assert "call `load_skill` with its name" in section
    assert "- release: Cut a release of the package.\n- triage: Sort new issues by area." in (
        section
    )
    assert "/s/release.md" not in prompt


def test_no_skills_or_no_load_skill_no_section() -> None:
    assert "## Skills" not in render()
    assert "load_skill" not in render()
    without_tool = render(tools=ALL_TOOLS - {"load_skill"}, skills=SKILLS)
    assert "## Skills" not in without_tool
    assert "release" not in without_tool


def test_a_skill_description_stays_on_one_bounded_line() -> None:
    skill = Skill(name="long", description="line one\nline two " + "y" * 1000, path="/s")
    prompt = render(skills=(skill,))
    listed = prompt[prompt.index("- long:") :]
    assert "\n" not in listed
    assert len(listed) == LINE_CAP
    assert listed.endswith("…")


# --- the environment context ---


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


# --- the sub-agent ---


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


# --- the client's system prompt ---

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

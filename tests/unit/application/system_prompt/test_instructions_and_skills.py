"""The system prompt's project instructions and skills: pure text from domain objects."""

from application.knowledge.system_prompt import LINE_CAP
from domain.knowledge import (
    CUT_MARKER,
    InstructionFile,
    InstructionScope,
    Skill,
)
from tests.unit.application.system_prompt.support import (
    ALL_TOOLS,
    INNER_FILE,
    ROOT_FILE,
    SKILLS,
    USER_FILE,
    render,
)


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

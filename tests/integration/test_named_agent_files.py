"""Named sub-agents read from the project's and the user's agents/ folders: a file's front
matter and body become an agent; a file that cannot be used is left out with a warning,
never an error; the project's agent wins over the user's of the same name."""

import logging
from pathlib import Path

import pytest

from adapters.knowledge.agents import AgentFileError, agent_profile
from adapters.knowledge.local import LocalProjectKnowledge

WRITER = (
    "---\ndescription: Writes the tests\ntools: [read_file, write_file, bash]\n"
    "model: claude-haiku\nmode: accept_edits\n---\n\nYou write tests.\n"
)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_project_and_user_agents_by_name_the_projects_winning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    write(project / ".iac-code" / "agents" / "tester.md", WRITER)
    write(config / "agents" / "tester.md", "---\ndescription: mine\ntools: grep\n---\nx")
    write(config / "agents" / "Reviewer.md", "---\ndescription: Reviews\ntools: grep, glob\n---\nr")
    write(project / ".iac-code" / "agents" / "broken.md", "---\ntools: grep\n---\nno description")
    write(project / ".iac-code" / "agents" / "notes.txt", "not an agent")
    with caplog.at_level(logging.WARNING):
        agents = await LocalProjectKnowledge(config).agents(str(project))

    assert [a.name for a in agents] == ["reviewer", "tester"]
    reviewer, tester = agents
    assert (tester.description, tester.tools) == (
        "Writes the tests",
        ("read_file", "write_file", "bash"),
    )
    assert (tester.model, tester.mode, tester.prompt) == (
        "claude-haiku",
        "accept_edits",
        "You write tests.",
    )
    assert tester.path == str(project / ".iac-code" / "agents" / "tester.md")
    assert (reviewer.tools, reviewer.model, reviewer.mode) == (("grep", "glob"), None, None)
    assert "broken.md left out: description is missing" in caplog.text


async def test_no_agents_folder_gives_none(tmp_path: Path) -> None:
    assert await LocalProjectKnowledge(tmp_path / "c").agents(str(tmp_path / "p")) == ()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no front matter", "no front matter"),
        ("---\n[a, b]\n---\nbody", "not a mapping"),
        ("---\ndescription: d\ntools: [grep\n---\nbody", "not valid YAML"),
        ("---\ndescription: d\n---\nbody", "tools must name one or more tools"),
        ("---\ndescription: d\ntools: [grep, agent]\n---\nbody", "tools agent cannot be given"),
        ("---\ndescription: d\ntools: [grep, task_kill]\n---\nb", "tools task_kill cannot be"),
        ("---\ndescription: d\ntools: grep\nmode: yolo\n---\nbody", "mode 'yolo' is not one"),
        ("---\ndescription: d\ntools: grep\nmodel: 3\n---\nbody", "model must be text"),
        ("---\ndescription: d\ntools: grep\n---\n  \n", "the body"),
    ],
)
def test_a_file_that_cannot_be_an_agent_says_why(text: str, why: str) -> None:
    with pytest.raises(AgentFileError, match=why):
        agent_profile(text, "/p/.iac-code/agents/x.md")


def test_the_file_name_must_be_a_usable_name() -> None:
    with pytest.raises(AgentFileError, match="file name"):
        agent_profile(WRITER, "/p/.iac-code/agents/-bad name.md")

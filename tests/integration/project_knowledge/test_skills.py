"""LocalProjectKnowledge's skills: the project's and the user's, their bodies, cut when long."""

import logging
from pathlib import Path

import pytest

from adapters.knowledge.local import LocalProjectKnowledge
from application.ports.knowledge import SkillNotFound
from domain.knowledge import (
    CUT_MARKER,
    INSTRUCTION_CAP,
)
from tests.integration.project_knowledge.support import (
    write,
)

pytestmark = pytest.mark.integration


def skill(directory: Path, folder: str, front: str, body: str = "Do it.") -> Path:
    return write(directory / folder / "SKILL.md", f"---\n{front}\n---\n\n{body}\n")


async def test_skills_of_the_project_and_the_user_the_projects_winning_by_name(
    knowledge: LocalProjectKnowledge,
    config_dir: Path,
    repo: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    project_skills, user_skills = repo / ".iac-code" / "skills", config_dir / "skills"
    deploy = skill(project_skills, "deploy", "description: the project's deploy")
    skill(user_skills, "deploy", "description: the user's deploy")
    review = skill(user_skills, "review-x", "name: Review\ndescription: reviews")
    plan = skill(project_skills, "plan", "name: plan_it\ndescription: >\n  plans\n  things")
    skill(user_skills, "broken", "description: [unclosed")
    skill(user_skills, "mute", "name: mute")
    skill(user_skills, "bad-name", "name: no spaces allowed\ndescription: d")
    (user_skills / "empty-folder").mkdir()
    write(user_skills / "stray.md", "not a folder")
    write(user_skills / "plain" / "SKILL.md", "no front matter")

    with caplog.at_level(logging.WARNING):
        skills = await knowledge.skills(str(repo))

    assert [(s.name, s.description, s.path) for s in skills] == [
        ("deploy", "the project's deploy", str(deploy)),
        ("plan_it", "plans things", str(plan)),
        ("review", "reviews", str(review)),
    ]
    left_out = " ".join(record.getMessage() for record in caplog.records)
    for folder in ("broken", "mute", "bad-name", "plain"):
        assert str(user_skills / folder / "SKILL.md") in left_out


async def test_no_skill_directories_no_skills(knowledge: LocalProjectKnowledge, repo: Path) -> None:
    assert await knowledge.skills(str(repo)) == ()


async def test_a_skills_body_is_its_text_after_the_front_matter(
    knowledge: LocalProjectKnowledge, config_dir: Path, repo: Path
) -> None:
    skill(config_dir / "skills", "deploy", "description: d", body="## Steps\n---\n1. plan")
    (deploy,) = await knowledge.skills(str(repo))

    assert await knowledge.skill_body(deploy) == "## Steps\n---\n1. plan"


async def test_a_long_body_is_cut_and_a_gone_skill_is_not_found(
    knowledge: LocalProjectKnowledge, config_dir: Path, repo: Path
) -> None:
    path = skill(config_dir / "skills", "long", "description: d", body="b" * (INSTRUCTION_CAP + 3))
    (long,) = await knowledge.skills(str(repo))

    assert await knowledge.skill_body(long) == "b" * INSTRUCTION_CAP + CUT_MARKER.format(
        cut=3, path=path
    )
    path.unlink()
    with pytest.raises(SkillNotFound):
        await knowledge.skill_body(long)

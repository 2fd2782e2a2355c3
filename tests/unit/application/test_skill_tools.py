"""load_skill: offered when the turn has skills, loads a listed skill's body, and says
clearly what went wrong otherwise; every other tool goes to the runner it wraps."""

from collections.abc import Mapping

from application.ports.tools import ToolContext, ToolDefinition, ToolResult
from application.tools.skill_tools import LOAD_SKILL_TOOL, SkillTools
from domain.knowledge import Skill
from domain.tool_call import ToolOutput
from domain.tools import LOAD_SKILL, Category, spec_for
from tests.fakes.knowledge import FakeKnowledge
from tests.fakes.turn import FakeTools

CONTEXT = ToolContext(cwd="/home/dev/project", model="m1")
RELEASE = Skill(
    name="release",
    description="Cut a release",
    path="/home/dev/project/.iac-code/skills/release/SKILL.md",
)
REVIEW = Skill(name="review", description="Review a diff", path="/cfg/skills/review/SKILL.md")


async def _read(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text="file text")


async def _ignore(update: str | ToolOutput) -> None:
    return None


def tools(*skills: Skill, knowledge: FakeKnowledge | None = None) -> tuple[SkillTools, FakeTools]:
    inner = FakeTools(read_file=_read)
    knowledge = knowledge or FakeKnowledge(bodies={"release": "Bump the version, then tag."})
    return SkillTools(inner, knowledge, skills), inner


def names(definitions: tuple[ToolDefinition, ...]) -> list[str]:
    return [d.name for d in definitions]


async def load(runner: SkillTools, arguments: Mapping[str, object]) -> ToolResult:
    return await runner.run(LOAD_SKILL, arguments, CONTEXT, _ignore)


def test_load_skill_is_a_read_that_never_asks() -> None:
    spec = spec_for(LOAD_SKILL)
    assert spec.category is Category.READ and spec.kind.value == "read"


def test_load_skill_is_offered_only_when_the_session_has_skills() -> None:
    assert names(tools()[0].definitions()) == ["read_file"]
    assert names(tools(RELEASE)[0].definitions()) == ["read_file", LOAD_SKILL]


def test_a_selection_of_tools_includes_load_skill_only_when_named() -> None:
    runner, _ = tools(RELEASE)
    assert names(runner.definitions(("read_file",))) == ["read_file"]
    assert names(runner.definitions(("read_file", LOAD_SKILL))) == ["read_file", LOAD_SKILL]


def test_the_definition_asks_for_a_name_and_stays_the_same_whatever_the_skills() -> None:
    assert LOAD_SKILL_TOOL.input_schema["required"] == ["name"]
    assert "skill" in LOAD_SKILL_TOOL.description
    (one,) = [d for d in tools(RELEASE)[0].definitions() if d.name == LOAD_SKILL]
    (two,) = [d for d in tools(RELEASE, REVIEW)[0].definitions() if d.name == LOAD_SKILL]
    assert one == two == LOAD_SKILL_TOOL  # cache-friendly: the skills are listed elsewhere


async def test_a_listed_skill_plans_without_a_problem() -> None:
    plan = await tools(RELEASE)[0].plan(LOAD_SKILL, {"name": "release"}, CONTEXT)
    assert plan.problem is None and not plan.always_asks
    assert plan.locations == (RELEASE.path,)


async def test_loading_returns_the_body_and_names_the_skill() -> None:
    result = await load(tools(RELEASE)[0], {"name": "release"})
    assert result == ToolResult(
        text="Bump the version, then tag.",
        raw_output={"skill": "release", "path": RELEASE.path},
    )


async def test_an_empty_body_says_so() -> None:
    runner, _ = tools(RELEASE, knowledge=FakeKnowledge(bodies={"release": "\n"}))
    result = await load(runner, {"name": "release"})
    assert not result.is_error and "no instructions" in result.text


async def test_an_unknown_name_is_a_problem_listing_the_skills() -> None:
    runner, inner = tools(RELEASE, REVIEW)
    plan = await runner.plan(LOAD_SKILL, {"name": "deploy"}, CONTEXT)
    assert plan.problem == (
        "There is no skill named 'deploy'. The skills are: 'release', 'review'."
    )
    result = await load(runner, {"name": "deploy"})
    assert result.is_error and result.text == plan.problem
    assert inner.ran == []


async def test_a_missing_or_blank_name_is_a_problem() -> None:
    runner, _ = tools(RELEASE)
    for arguments in ({}, {"name": ""}, {"name": 3}):
        plan = await runner.plan(LOAD_SKILL, arguments, CONTEXT)
        assert plan.problem == "load_skill needs the name of a skill: one of 'release'."


async def test_without_skills_load_skill_says_there_is_nothing_to_load() -> None:
    runner, inner = tools()
    plan = await runner.plan(LOAD_SKILL, {"name": "release"}, CONTEXT)
    assert plan.problem is not None and "no skills" in plan.problem
    assert (await load(runner, {"name": "release"})).is_error
    assert inner.ran == []


async def test_a_skill_gone_since_it_was_listed_is_an_error_result() -> None:
    runner, _ = tools(REVIEW)  # the fake has no body for it: SkillNotFound
    result = await load(runner, {"name": "review"})
    assert result.is_error
    assert "'review'" in result.text and "/cfg/skills/review/SKILL.md is gone" in result.text
    assert result.raw_output == {"skill": "review", "path": REVIEW.path}


async def test_other_tools_go_to_the_inner_runner() -> None:
    runner, inner = tools(RELEASE)
    plan = await runner.plan("read_file", {"path": "a.py"}, CONTEXT)
    assert plan.locations == ("/home/dev/project/a.py",)
    result = await runner.run("read_file", {"path": "a.py"}, CONTEXT, _ignore)
    assert result.text == "file text" and inner.ran == [("read_file", {"path": "a.py"})]
    assert (await runner.plan("nope", {}, CONTEXT)).problem == "There is no tool named 'nope'."

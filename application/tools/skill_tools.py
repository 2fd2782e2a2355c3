"""The `load_skill` tool: the model reads a listed skill's instructions when it needs them.

The system prompt lists each skill's name and description only; a body costs context, so it
is loaded on demand. Loading touches nothing, so it never asks (domain.tools: READ)."""

from collections.abc import Mapping

from application.ports.knowledge import ProjectKnowledge, SkillNotFound
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from domain.knowledge import Skill
from domain.tools import LOAD_SKILL

# Stable from request to request (tools are part of the cached prompt): the skills
# themselves are listed in the system prompt, not here.
LOAD_SKILL_TOOL = ToolDefinition(
    name=LOAD_SKILL,
    description=(
        "Load the instructions of one of the skills listed for this session. Call it when a "
        "task matches a skill's description, before starting the task, then follow them."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)


class SkillTools(ToolRunner):
    """Offers `load_skill` when the turn has skills; every other tool goes to `inner`.
    Built per turn with that turn's skills, so a skill added since shows up next turn."""

    def __init__(
        self, inner: ToolRunner, knowledge: ProjectKnowledge, skills: tuple[Skill, ...]
    ) -> None:
        self._inner = inner
        self._knowledge = knowledge
        self._skills = {skill.name: skill for skill in skills}

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        inner = self._inner.definitions(names)
        if not self._skills or (names is not None and LOAD_SKILL not in names):
            return inner
        return (*inner, LOAD_SKILL_TOOL)

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        if name != LOAD_SKILL:
            return await self._inner.plan(name, arguments, context)
        found = self._find(arguments)
        if isinstance(found, str):
            return ToolPlan(problem=found)
        return ToolPlan(locations=(found.path,))

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        if name != LOAD_SKILL:
            return await self._inner.run(name, arguments, context, progress)
        found = self._find(arguments)
        if isinstance(found, str):
            return ToolResult(text=found, is_error=True)
        raw = {"skill": found.name, "path": found.path}
        try:
            body = await self._knowledge.skill_body(found)
        except SkillNotFound as exc:
            text = f"The skill {found.name!r} could not be read ({found.path}): {exc}"
            return ToolResult(text=text, is_error=True, raw_output=raw)
        if not body.strip():
            body = f"(The skill {found.name!r} has no instructions beyond its description.)"
        return ToolResult(text=body, raw_output=raw)

    def _find(self, arguments: Mapping[str, object]) -> Skill | str:
        """The skill asked for, or why there is none."""
        if not self._skills:
            return "There are no skills in this session: load_skill has nothing to load."
        known = ", ".join(repr(n) for n in self._skills)
        name = arguments.get("name")
        if not isinstance(name, str) or not name.strip():
            return f"load_skill needs the name of a skill: one of {known}."
        skill = self._skills.get(name.strip())
        if skill is None:
            return f"There is no skill named {name!r}. The skills are: {known}."
        return skill

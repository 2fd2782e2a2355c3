"""What a turn tells the model besides the conversation, and the prompt commands that come
from the project itself (/init and each skill's /<name>)."""

import asyncio

from application.knowledge.prompt_commands import INIT, init_prompt, skill_prompt, skill_specs
from application.knowledge.shared import SharedKnowledge
from application.knowledge.system_prompt import environment_context
from application.ports.knowledge import ProjectKnowledge, SkillNotFound
from application.runtime.registry import ActiveSession
from domain.commands import CommandCall, CommandSpec, Invocation
from domain.knowledge import Briefing, Environment, InstructionFile


class PromptCommandFailed(Exception):
    """A prompt command whose text could not be made (e.g. its skill is gone)."""


class Briefer:
    """Reads the project's instructions, skills and environment once per turn (files that
    changed since the last turn are picked up), and adds a subdirectory's instructions to
    the context the first time the agent works there."""

    def __init__(self, *, knowledge: ProjectKnowledge, shared: SharedKnowledge) -> None:
        self._knowledge = knowledge
        self._shared = shared

    async def gather(self, active: ActiveSession, *, environment: bool = True) -> Briefing:
        """Read the session's briefing. Without `environment` (opening a session: only its
        commands and context size are wanted), git and the directory listing are not read
        and the environment held, if any, is kept."""
        session = active.session
        reading = asyncio.gather(
            self._knowledge.instructions(session.cwd),
            self._knowledge.skills(session.cwd),
            self._knowledge.agents(session.cwd),
        )
        told: Environment | None
        if environment:
            (instructions, skills, agents), told = await asyncio.gather(
                reading,
                self._knowledge.environment(session.cwd, session.additional_directories),
            )
        else:
            (instructions, skills, agents), told = await reading, active.briefing.environment
        instructions, skills = self._shared.one_copy(session.cwd, instructions, skills)
        active.briefing = Briefing(
            instructions=instructions, skills=skills, environment=told, agents=agents
        )
        return active.briefing

    @staticmethod
    def context(briefing: Briefing) -> str | None:
        """The environment, as the turn's prompt message carries it to the model."""
        return environment_context(briefing.environment) if briefing.environment else None

    def offered(self, active: ActiveSession, taken: frozenset[str]) -> tuple[CommandSpec, ...]:
        """/init, then a command for each skill that no other command's name (`taken`:
        the built-in commands and MCP prompts) hides."""
        return (INIT, *skill_specs(active.briefing.skills, taken))

    def call_in(
        self, active: ActiveSession, invocation: Invocation, taken: frozenset[str]
    ) -> CommandCall | None:
        """The project command (`/init`, `/<skill> …`) the prompt calls, if any."""
        return invocation.call({spec.name for spec in self.offered(active, taken)})

    async def expand(self, active: ActiveSession, call: CommandCall) -> str:
        """The text the model is sent for `/init` or `/<skill> …`. Raises
        PromptCommandFailed."""
        briefing = active.briefing
        if call.name == INIT.name:
            return init_prompt(active.session.cwd, briefing.instructions)
        skill = next((s for s in briefing.skills if s.name == call.name), None)
        if skill is None:
            raise PromptCommandFailed(f"there is no skill named {call.name!r} any more")
        try:
            body = await self._knowledge.skill_body(skill)
        except SkillNotFound as exc:
            raise PromptCommandFailed(f"the skill {call.name!r} could not be read: {exc}") from exc
        return skill_prompt(skill, body, call.argument)

    async def nested(self, active: ActiveSession, paths: tuple[str, ...]) -> str:
        """Instructions of the subdirectories these paths lie in, not yet in the context,
        as text for the model (empty when none): each file is added once per session."""
        found: list[InstructionFile] = []
        for path in paths:
            for file in await self._knowledge.nested_instructions(path, active.session.cwd):
                if file.path not in active.nested_loaded:
                    active.nested_loaded.add(file.path)
                    found.append(file)
        return "".join(
            f"\n\n<instructions from `{file.path}` (they apply to files in its directory)>\n"
            f"{file.text}\n</instructions>"
            for file in found
        )

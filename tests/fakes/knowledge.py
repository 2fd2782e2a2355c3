"""An in-memory ProjectKnowledge: instruction files, skills and their bodies as given."""

from dataclasses import dataclass, field

from application.ports.knowledge import ProjectKnowledge, SkillNotFound
from domain.knowledge import AgentProfile, Environment, InstructionFile, Skill


@dataclass
class FakeKnowledge(ProjectKnowledge):
    files: tuple[InstructionFile, ...] = ()
    nested: dict[str, tuple[InstructionFile, ...]] = field(default_factory=dict)  # by path
    skill_list: tuple[Skill, ...] = ()
    agent_list: tuple[AgentProfile, ...] = ()
    bodies: dict[str, str] = field(default_factory=dict)  # by skill name; absent: not found
    asked: list[str] = field(default_factory=list)  # the cwd of each call
    environments: list[str] = field(default_factory=list)  # the cwd of each environment read

    async def instructions(self, cwd: str) -> tuple[InstructionFile, ...]:
        self.asked.append(cwd)
        return self.files

    async def nested_instructions(self, path: str, cwd: str) -> tuple[InstructionFile, ...]:
        return self.nested.get(path, ())

    async def environment(self, cwd: str, directories: tuple[str, ...]) -> Environment:
        self.environments.append(cwd)
        return Environment(
            cwd=cwd,
            directories=directories,
            platform="Linux",
            shell="/bin/sh",
            date="2026-01-01",
            git=None,
            listing=(),
        )

    async def skills(self, cwd: str) -> tuple[Skill, ...]:
        self.asked.append(cwd)
        return self.skill_list

    async def skill_body(self, skill: Skill) -> str:
        if skill.name not in self.bodies:
            raise SkillNotFound(f"{skill.path} is gone")
        return self.bodies[skill.name]

    async def agents(self, cwd: str) -> tuple[AgentProfile, ...]:
        return self.agent_list

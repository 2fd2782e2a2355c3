from abc import abstractmethod
from typing import Protocol

from domain.knowledge import AgentProfile, Environment, InstructionFile, Skill


class SkillNotFound(Exception):
    """No readable skill by that name (any more)."""


class ProjectKnowledge(Protocol):
    """Reads what the agent should know about a project. Every call reads afresh (a file
    changed since the last turn is picked up), bounded in size and time; files that cannot
    be read are left out, never an error."""

    @abstractmethod
    async def instructions(self, cwd: str) -> tuple[InstructionFile, ...]:
        """The user's own file, then AGENTS.md / IAC-CODE.md from the outermost directory
        (the repository root, or the file system root outside a repository) down to cwd."""

    @abstractmethod
    async def nested_instructions(self, path: str, cwd: str) -> tuple[InstructionFile, ...]:
        """Instruction files of the directories below cwd on the way to `path` (a file or
        directory the agent reads or edits), outermost first; none when `path` is not
        below cwd."""

    @abstractmethod
    async def environment(self, cwd: str, directories: tuple[str, ...]) -> Environment: ...

    @abstractmethod
    async def skills(self, cwd: str) -> tuple[Skill, ...]:
        """Skills of <cwd>/.iac-code/skills/ and then $IAC_CODE_CONFIG_DIR/skills/ (a
        project's skill wins over the user's of the same name), by name."""

    @abstractmethod
    async def skill_body(self, skill: Skill) -> str:
        """The SKILL.md's instructions after its front matter. Raises SkillNotFound."""

    @abstractmethod
    async def agents(self, cwd: str) -> tuple[AgentProfile, ...]:
        """Named sub-agents of <cwd>/.iac-code/agents/ and then $IAC_CODE_CONFIG_DIR/agents/
        (a project's agent wins over the user's of the same name), by name."""

"""ProjectKnowledge from this machine's files and git."""

import asyncio
import os
from collections.abc import Callable
from datetime import date
from pathlib import Path

from adapters.knowledge.agents import agent_directories, find_agents
from adapters.knowledge.environment import listing, platform_name, shell
from adapters.knowledge.git import GIT_SECONDS, git_state
from adapters.knowledge.instructions import instruction_files, nested_instruction_files
from adapters.knowledge.skills import find_skills, read_skill_body, skill_directories
from application.ports.knowledge import ProjectKnowledge
from domain.knowledge import AgentProfile, Environment, InstructionFile, Skill


class LocalProjectKnowledge(ProjectKnowledge):
    """Reads afresh on every call: files off the event loop, git with a time bound."""

    def __init__(
        self,
        config_dir: Path,
        *,
        today: Callable[[], date] = date.today,
        git_seconds: float = GIT_SECONDS,
    ) -> None:
        self._config_dir = os.path.abspath(config_dir)
        self._today = today
        self._git_seconds = git_seconds

    async def instructions(self, cwd: str) -> tuple[InstructionFile, ...]:
        return await asyncio.to_thread(instruction_files, self._config_dir, _absolute(cwd))

    async def nested_instructions(self, path: str, cwd: str) -> tuple[InstructionFile, ...]:
        return await asyncio.to_thread(nested_instruction_files, path, _absolute(cwd))

    async def environment(self, cwd: str, directories: tuple[str, ...]) -> Environment:
        (entries, more), git = await asyncio.gather(
            asyncio.to_thread(listing, cwd),
            git_state(cwd, seconds=self._git_seconds),
        )
        return Environment(
            cwd=cwd,
            directories=directories,
            platform=platform_name(),
            shell=shell(),
            date=self._today().isoformat(),
            git=git,
            listing=entries,
            more_entries=more,
        )

    async def skills(self, cwd: str) -> tuple[Skill, ...]:
        directories = skill_directories(_absolute(cwd), self._config_dir)
        return await asyncio.to_thread(find_skills, directories)

    async def skill_body(self, skill: Skill) -> str:
        return await asyncio.to_thread(read_skill_body, skill)

    async def agents(self, cwd: str) -> tuple[AgentProfile, ...]:
        directories = agent_directories(_absolute(cwd), self._config_dir)
        return await asyncio.to_thread(find_agents, directories)


def _absolute(path: str) -> str:
    # Normalised, symlinks kept: the paths shown are the ones the editor knows.
    return os.path.abspath(path)

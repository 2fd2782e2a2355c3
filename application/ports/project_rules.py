from abc import abstractmethod
from typing import Protocol

from domain.project_rules import ProjectRule


class ProjectRuleRepository(Protocol):
    """ "Always allow" answers remembered per project, across sessions and restarts.

    Read at each decision that needs them, so a rule revoked from the command line stops
    applying at once, even in a running server."""

    @abstractmethod
    async def for_project(self, cwd: str) -> list[ProjectRule]:
        """The rules of exactly this working directory, oldest first."""

    @abstractmethod
    async def add(self, rule: ProjectRule) -> ProjectRule:
        """Store a rule and return it with its id; the same grant twice is stored once
        (the existing rule is returned)."""

    @abstractmethod
    async def list(self, cwd: str | None = None) -> list[ProjectRule]:
        """Every rule (or those of `cwd`), by working directory then age."""

    @abstractmethod
    async def revoke(self, rule_id: int) -> ProjectRule | None:
        """Remove one rule; the removed rule, or None if there was none with that id."""

    @abstractmethod
    async def clear(self, cwd: str) -> int:
        """Remove every rule of `cwd`; how many there were."""

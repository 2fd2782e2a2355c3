from abc import abstractmethod
from typing import Protocol, Self

from application.ports.project_rules import ProjectRuleRepository
from application.ports.session_repository import SessionRepository


class UnitOfWork(Protocol):
    """One short transaction per `async with`: rolled back unless committed."""

    sessions: SessionRepository
    rules: ProjectRuleRepository

    @abstractmethod
    async def __aenter__(self) -> Self: ...

    @abstractmethod
    async def __aexit__(self, *exc: object) -> None: ...

    @abstractmethod
    async def commit(self) -> None: ...

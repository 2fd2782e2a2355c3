from abc import abstractmethod
from typing import Protocol, Self

from application.ports.checkpoints import CheckpointStore
from application.ports.project_rules import ProjectRuleRepository
from application.ports.session_listing import SessionListing
from application.ports.session_store import ActivityLog, SessionStore


class UnitOfWork(Protocol):
    """One short transaction per `async with`: rolled back unless committed. Use
    `reading()` for work that only reads: it takes no write lock."""

    sessions: SessionStore
    activity: ActivityLog
    listing: SessionListing
    rules: ProjectRuleRepository
    checkpoints: CheckpointStore

    @abstractmethod
    async def __aenter__(self) -> Self: ...

    @abstractmethod
    async def __aexit__(self, *exc: object) -> None: ...

    @abstractmethod
    async def commit(self) -> None: ...

    @abstractmethod
    def reading(self) -> "UnitOfWork":
        """The same store for a transaction that only reads (committing it is an error)."""

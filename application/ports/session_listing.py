"""The port behind session lists, and what a list holds: apart from the session store's
(session_store.py), as the start path lists before the rest of the application has loaded
(bootstrap/early.py), and this needs little of the domain."""

from abc import abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from domain.ids import SessionId
from domain.spawn import Spawn
from domain.worktree import Worktree


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    session_id: SessionId
    cwd: str
    title: str | None
    updated_at: datetime
    message_count: int
    additional_directories: tuple[str, ...] = ()
    spawn: Spawn | None = None  # a sub-agent's session: where it came from
    worktree: Worktree | None = None  # its own git worktree (found from cwd, not stored)


class SessionListing(Protocol):
    """The queries behind session lists, over the sessions' own rows only."""

    @abstractmethod
    async def list_page(
        self,
        *,
        cwd: str | None,
        after: tuple[datetime, str] | None,
        limit: int,
        parent: str | None = None,
    ) -> list[SessionSummary]:
        """Sessions (optionally of exactly `cwd`), newest update first, id breaking ties,
        starting after the (updated_at, id) key given. Top-level sessions only, or with
        `parent` the sub-agent sessions that session started."""

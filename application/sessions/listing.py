"""session/list: stored sessions a page at a time. Light on purpose (no other use case):
the start path lists with it before the rest of the agent has loaded."""

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from application.ports.session_listing import SessionListing, SessionSummary
from application.sessions.cursor import decode_cursor, encode_cursor
from domain.worktree import Worktree

if TYPE_CHECKING:  # the start path's reads (read_page) need none of the other ports
    from application.ports.unit_of_work import UnitOfWork
    from application.ports.worktrees import Worktrees

PAGE_SIZE = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPage:
    sessions: list[SessionSummary]
    next_cursor: str | None


async def read_page(
    pages: SessionListing,
    cwd: str | None,
    cursor: str | None,
    page_size: int = PAGE_SIZE,
    parent: str | None = None,
    worktree_of: Callable[[str], Worktree | None] | None = None,
) -> SessionPage:
    """One page, newest update first; raises InvalidCursor for a cursor this server did
    not give for that filter. `parent`: that session's sub-agent sessions instead of the
    top-level ones."""
    # A cursor is bound to its whole filter: the parent as well as the cwd.
    scope = cwd if parent is None else f"{cwd or ''}\0children of {parent}"
    after = decode_cursor(scope, cursor) if cursor else None
    rows = await pages.list_page(cwd=cwd, after=after, limit=page_size + 1, parent=parent)
    page = rows[:page_size]
    if worktree_of is not None:  # found from each cwd: a session in its own worktree says so
        page = [replace(s, worktree=worktree_of(s.cwd)) for s in page]
    more = len(rows) > page_size
    last = page[-1] if page else None
    next_cursor = encode_cursor(scope, last.updated_at, last.session_id) if more and last else None
    return SessionPage(sessions=page, next_cursor=next_cursor)


class ListSessions:
    """Stored sessions, newest update first, 50 a page.

    - `cwd` filters by the exact path before paging; a cursor only works for its filter.
    - Raises InvalidCursor for a cursor this server did not give for that filter.
    - A session working in its own worktree has it in its summary.
    """

    def __init__(
        self,
        *,
        uow: "UnitOfWork",
        worktrees: "Worktrees | None" = None,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self._uow = uow
        self._worktrees = worktrees
        self._page_size = page_size

    async def execute(
        self, cwd: str | None, cursor: str | None, parent: str | None = None
    ) -> SessionPage:
        found = self._worktrees.of if self._worktrees is not None else None
        async with self._uow.reading() as uow:
            return await read_page(uow.listing, cwd, cursor, self._page_size, parent, found)

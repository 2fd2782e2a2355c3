"""A session's line of ancestors: a fork stores only its own messages and reads its
ancestors' below its fork position."""

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables

S, M = tables.sessions, tables.messages

Chain = list[tuple[str, int | None]]


class Lineages:
    """Each session's ancestors as read in this unit of work: a session's parent never
    changes, and an ancestor stays while a fork needs it."""

    def __init__(self, db: AsyncSession) -> None:
        self._db = db
        self._known: dict[str, list[str]] = {}

    async def chain(self, session_id: str, first: Mapping[Any, Any] | None = None) -> Chain:
        """The session and its ancestors, each with the position its messages stop at.
        `first`: the session's own row, when the caller has read it already."""
        chain: Chain = []
        current: str | None = session_id
        bound: int | None = None
        while current is not None:
            chain.append((current, bound))
            row = first or (
                (
                    await self._db.execute(
                        select(S.c.parent_id, S.c.fork_position).where(S.c.id == current)
                    )
                )
                .mappings()
                .one()
            )
            first = None
            if row["fork_position"] is not None:
                position = row["fork_position"]
                bound = position if bound is None else min(bound, position)
            current = row["parent_id"]
        self._known[session_id] = [sid for sid, _ in chain]
        return chain

    async def ids(self, session_id: str) -> list[str]:
        """The session's id and its ancestors' (read once per unit of work)."""
        known = self._known.get(session_id)
        return known if known is not None else [sid for sid, _ in await self.chain(session_id)]


def in_chain(chain: Chain) -> ColumnElement[bool]:
    """The messages a session with this chain sees."""
    return or_(
        *(
            (M.c.session_id == sid)
            if bound is None
            else ((M.c.session_id == sid) & (M.c.position < bound))
            for sid, bound in chain
        )
    )

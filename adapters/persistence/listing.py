from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import same_text
from adapters.persistence.mappers import spawn_from_row
from application.ports.session_listing import SessionListing, SessionSummary
from domain.ids import SessionId

S = tables.sessions


class SqlAlchemySessionListing(SessionListing):
    """Pages of the sessions' own rows, on the (cwd, updated_at, id) indexes."""

    def __init__(self, db: AsyncSession) -> None:
        self._db = db

    async def list_page(
        self,
        *,
        cwd: str | None,
        after: tuple[datetime, str] | None,
        limit: int,
        parent: str | None = None,
    ) -> list[SessionSummary]:
        query = select(
            S.c.id,
            S.c.cwd,
            S.c.title,
            S.c.updated_at,
            S.c.message_count,
            S.c.additional_directories,
            S.c.spawned_by,
            S.c.spawn_call_id,
            S.c.spawn_agent,
        ).where(S.c.deleted_at.is_(None))
        # Sub-agents' sessions only under their parent.
        query = query.where(
            S.c.spawned_by.is_(None) if parent is None else S.c.spawned_by == parent
        )
        if cwd is not None:
            query = query.where(same_text(self._db, S.c.cwd, cwd))
        if after is not None:
            updated, last_id = after
            query = query.where(
                or_(S.c.updated_at < updated, (S.c.updated_at == updated) & (S.c.id < last_id))
            )
        query = query.order_by(S.c.updated_at.desc(), S.c.id.desc()).limit(limit)
        return [
            SessionSummary(
                session_id=SessionId(r.id),
                cwd=r.cwd,
                title=r.title,
                updated_at=r.updated_at,
                message_count=r.message_count,
                additional_directories=tuple(r.additional_directories or ()),
                spawn=spawn_from_row(r._mapping),
            )
            for r in (await self._db.execute(query)).all()
        ]

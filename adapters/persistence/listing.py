from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import same_text
from application.ports.session_store import SessionListing, SessionSummary
from domain.ids import SessionId

S = tables.sessions


class SqlAlchemySessionListing(SessionListing):
    """Pages of the sessions' own rows, on the (cwd, updated_at, id) indexes."""

    def __init__(self, db: AsyncSession) -> None:
        self._db = db

    async def list_page(
        self, *, cwd: str | None, after: tuple[datetime, str] | None, limit: int
    ) -> list[SessionSummary]:
        query = select(
            S.c.id,
            S.c.cwd,
            S.c.title,
            S.c.updated_at,
            S.c.message_count,
            S.c.additional_directories,
        ).where(S.c.deleted_at.is_(None))
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
            )
            for r in (await self._db.execute(query)).all()
        ]

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.mappers import (
    message_from_row,
    message_to_row,
    session_from_row,
    session_to_row,
)
from application.ports.session_repository import SessionRepository
from domain.ids import SessionId
from domain.message import Message
from domain.session import Session
from domain.turn import Turn


class SqlAlchemySessionRepository(SessionRepository):
    def __init__(self, db: AsyncSession) -> None:
        self._db = db

    async def get(self, session_id: SessionId) -> Session | None:
        row = (
            (
                await self._db.execute(
                    select(tables.sessions).where(tables.sessions.c.id == session_id)
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        rows = (
            (
                await self._db.execute(
                    select(tables.messages)
                    .where(tables.messages.c.session_id == session_id)
                    .order_by(tables.messages.c.position)
                )
            )
            .mappings()
            .all()
        )
        return session_from_row(row, [message_from_row(r) for r in rows])

    async def add(self, session: Session) -> None:
        await self._db.execute(insert(tables.sessions).values(session_to_row(session)))
        if session.messages:
            await self._db.execute(
                insert(tables.messages),
                [message_to_row(session.id, i, m) for i, m in enumerate(session.messages)],
            )

    async def append_message(self, session: Session, message: Message) -> None:
        position = session.message_count - 1
        await self._db.execute(
            insert(tables.messages).values(message_to_row(session.id, position, message))
        )
        await self._db.execute(
            update(tables.sessions)
            .where(tables.sessions.c.id == session.id)
            .values(
                updated_at=session.updated_at,
                title=session.title,
                message_count=session.message_count,
            )
        )

    async def save_settings(self, session: Session) -> None:
        await self._db.execute(
            update(tables.sessions)
            .where(tables.sessions.c.id == session.id)
            .values(
                title=session.title,
                mode_id=session.mode_id,
                model=session.model,
                config=dict(session.config),
                updated_at=session.updated_at,
            )
        )

    async def record_turn(self, session_id: SessionId, turn: Turn, error: str | None) -> None:
        await self._db.execute(
            insert(tables.turns).values(
                session_id=session_id,
                started_at=turn.started_at,
                finished_at=turn.finished_at,
                stop_reason=turn.stop_reason.value if turn.stop_reason else None,
                requests=turn.requests,
                input_tokens=turn.usage.input_tokens,
                output_tokens=turn.usage.output_tokens,
                cache_read_tokens=turn.usage.cache_read_tokens,
                cache_write_tokens=turn.usage.cache_write_tokens,
                error=error,
            )
        )

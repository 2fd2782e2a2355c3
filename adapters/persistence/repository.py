from sqlalchemy import insert, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.mappers import (
    decision_to_row,
    message_from_row,
    message_to_row,
    session_from_row,
    session_to_row,
    tool_call_to_row,
)
from application.ports.session_repository import SessionRepository
from domain.ids import SessionId
from domain.message import Message
from domain.permission import PermissionDecision, PermissionOption, PermissionRules
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.turn import Turn

_REMEMBERED = (PermissionOption.ALLOW_ALWAYS.value, PermissionOption.REJECT_ALWAYS.value)


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
        return session_from_row(
            row, [message_from_row(r) for r in rows], await self._rules(session_id)
        )

    async def _rules(self, session_id: SessionId) -> PermissionRules:
        """The session's "always" answers: the latest one per tool wins."""
        d = tables.permission_decisions
        rows = (
            await self._db.execute(
                select(d.c.tool_name, d.c.option)
                .where(d.c.session_id == session_id, d.c.option.in_(_REMEMBERED))
                .order_by(d.c.id)
            )
        ).all()
        return PermissionRules(
            remembered={
                name: option == PermissionOption.ALLOW_ALWAYS.value for name, option in rows
            }
        )

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

    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        row = tool_call_to_row(session_id, record)
        t = tables.tool_calls
        await self._db.execute(
            sqlite_insert(t)
            .values(row)
            .on_conflict_do_update(
                index_elements=[t.c.session_id, t.c.id],
                set_={k: v for k, v in row.items() if k not in ("session_id", "id")},
            )
        )

    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        await self._db.execute(
            insert(tables.permission_decisions).values(decision_to_row(session_id, decision))
        )

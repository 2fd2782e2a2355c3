from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import insert_or_update
from adapters.persistence.lineage import Lineages
from adapters.persistence.mappers import (
    decision_to_row,
    tool_call_from_row,
    tool_call_to_row,
    turn_record_from_row,
)
from application.ports.session_store import ActivityLog, TurnRecord
from domain.ids import SessionId
from domain.permission import PermissionDecision
from domain.tool_call import ToolCallRecord
from domain.turn import Turn


class SqlAlchemyActivityLog(ActivityLog):
    """Turns, tool calls and permission decisions: rows beside the session's own."""

    def __init__(self, db: AsyncSession, lineages: Lineages) -> None:
        self._db = db
        self._lineages = lineages

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
                cost=turn.cost,
            )
        )

    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        row = tool_call_to_row(session_id, record)
        t = tables.tool_calls
        await self._db.execute(insert_or_update(self._db, t, row, keys=("session_id", "id")))

    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        await self._db.execute(
            insert(tables.permission_decisions).values(decision_to_row(session_id, decision))
        )

    async def turn_records(self, session_id: SessionId) -> list[TurnRecord]:
        t = tables.turns
        rows = await self._db.execute(
            select(t).where(t.c.session_id == session_id).order_by(t.c.started_at, t.c.id)
        )
        return [turn_record_from_row(r) for r in rows.mappings()]

    async def tool_calls(self, session_id: SessionId) -> dict[str, ToolCallRecord]:
        ids = await self._lineages.ids(session_id)
        t = tables.tool_calls
        rows = (await self._db.execute(select(t).where(t.c.session_id.in_(ids)))).mappings().all()
        own_last = sorted(rows, key=lambda r: r["session_id"] == session_id)
        return {r["id"]: tool_call_from_row(r) for r in own_last}

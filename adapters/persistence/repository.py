from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, exists, func, insert, literal, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import insert_or_update
from adapters.persistence.mappers import (
    USAGE_COLUMNS,
    decision_to_row,
    message_from_row,
    message_to_row,
    session_from_row,
    session_to_row,
    tool_call_from_row,
    tool_call_to_row,
    turn_record_from_row,
    usage_from_row,
)
from application.ports.session_repository import SessionRepository, SessionSummary, TurnRecord
from domain.ids import SessionId
from domain.message import Message
from domain.permission import PermissionDecision, PermissionOption, PermissionRules
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.turn import Turn
from domain.usage import Usage

_REMEMBERED = (PermissionOption.ALLOW_ALWAYS.value, PermissionOption.REJECT_ALWAYS.value)
S, M = tables.sessions, tables.messages


class SqlAlchemySessionRepository(SessionRepository):
    """Sessions over SQLite. A fork stores only its own messages and reads its ancestors'
    below its fork position, so forking costs one row whatever the history's length."""

    def __init__(self, db: AsyncSession) -> None:
        self._db = db
        # Each session's line of ancestors, as read in this unit of work: a session's
        # parent never changes, and an ancestor stays while a fork needs it.
        self._ancestors: dict[str, list[str]] = {}

    async def get(self, session_id: SessionId) -> Session | None:
        row = (
            (
                await self._db.execute(
                    select(S).where(S.c.id == session_id, S.c.deleted_at.is_(None))
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        lineage = await self._lineage(session_id, row)
        rows = (
            (await self._db.execute(select(M).where(_in_lineage(lineage)).order_by(M.c.position)))
            .mappings()
            .all()
        )
        messages = [message_from_row(r) for r in rows]
        return session_from_row(
            row, messages, await self._rules(session_id), await self._spent(session_id)
        )

    async def _spent(self, session_id: SessionId) -> tuple[Usage, float | None]:
        """What the session's recorded turns used and cost, summed by the database."""
        t = tables.turns
        sums = [func.sum(t.c[name]).label(name) for name in USAGE_COLUMNS]
        row = (
            (
                await self._db.execute(
                    select(*sums, func.sum(t.c.cost).label("cost")).where(
                        t.c.session_id == session_id
                    )
                )
            )
            .mappings()
            .one()
        )
        return usage_from_row(row), None if row["cost"] is None else float(row["cost"])

    async def _lineage(
        self, session_id: str, first: Mapping[Any, Any] | None = None
    ) -> list[tuple[str, int | None]]:
        """The session and its ancestors, each with the position its messages stop at.
        `first`: the session's own row, when the caller has read it already."""
        chain: list[tuple[str, int | None]] = []
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
        self._ancestors[session_id] = [sid for sid, _ in chain]
        return chain

    async def _ancestor_ids(self, session_id: str) -> list[str]:
        """The session's id and its ancestors' (read once per unit of work)."""
        known = self._ancestors.get(session_id)
        return known if known is not None else [sid for sid, _ in await self._lineage(session_id)]

    async def _rules(self, session_id: SessionId) -> PermissionRules:
        """The session's "always reject" answers ("always allow" is kept per project)."""
        d = tables.permission_decisions
        rows = await self._db.execute(
            select(d.c.tool_name).where(
                d.c.session_id == session_id, d.c.option == PermissionOption.REJECT_ALWAYS.value
            )
        )
        return PermissionRules(rejected={name for (name,) in rows})

    async def add(self, session: Session) -> None:
        await self._db.execute(insert(S).values(session_to_row(session)))
        if session.messages:
            await self._db.execute(
                insert(M),
                [message_to_row(session.id, i, m) for i, m in enumerate(session.messages)],
            )

    async def append_message(self, session: Session, message: Message) -> None:
        position = session.message_count - 1
        await self._db.execute(insert(M).values(message_to_row(session.id, position, message)))
        await self._db.execute(
            update(S)
            .where(S.c.id == session.id)
            .values(
                updated_at=session.updated_at,
                title=session.title,
                message_count=session.message_count,
            )
        )

    async def save_settings(self, session: Session) -> None:
        await self._db.execute(
            update(S)
            .where(S.c.id == session.id)
            .values(
                title=session.title,
                mode_id=session.mode_id,
                model=session.model,
                config=dict(session.config),
                updated_at=session.updated_at,
                additional_directories=list(session.additional_directories),
                mcp_servers=[dict(server) for server in session.mcp_servers],
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
        ids = await self._ancestor_ids(session_id)
        t = tables.tool_calls
        rows = (await self._db.execute(select(t).where(t.c.session_id.in_(ids)))).mappings().all()
        own_last = sorted(rows, key=lambda r: r["session_id"] == session_id)
        return {r["id"]: tool_call_from_row(r) for r in own_last}

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
            query = query.where(S.c.cwd == cwd)
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

    async def fork(self, source: Session, fork: Session) -> None:
        row = session_to_row(fork)
        row.update(parent_id=source.id, fork_position=source.message_count)
        await self._db.execute(insert(S).values(row))
        d = tables.permission_decisions
        columns = [c for c in d.c if c.name not in ("id", "session_id")]
        remembered = select(literal(fork.id).label("session_id"), *columns).where(
            d.c.session_id == source.id, d.c.option.in_(_REMEMBERED)
        )
        await self._db.execute(
            insert(d).from_select(["session_id", *[c.name for c in columns]], remembered)
        )

    async def rewrite_history(self, session: Session, start: int) -> None:
        await self._detach_children(session.id, start)
        row = (await self._db.execute(select(S.c.fork_position).where(S.c.id == session.id))).one()
        if row.fork_position is not None and start < row.fork_position:
            # The repair reaches into shared messages: this fork takes its own copy from there.
            await self._db.execute(
                update(S).where(S.c.id == session.id).values(fork_position=start)
            )
        await self._db.execute(delete(M).where(M.c.session_id == session.id, M.c.position >= start))
        rows = [
            message_to_row(session.id, start + i, m) for i, m in enumerate(session.messages[start:])
        ]
        if rows:
            await self._db.execute(insert(M), rows)
        await self._db.execute(
            update(S).where(S.c.id == session.id).values(message_count=session.message_count)
        )

    async def _detach_children(self, session_id: str, start: int) -> None:
        """Forks that read this session's messages from `start` on copy them first."""
        children = (
            await self._db.execute(
                select(S.c.id, S.c.fork_position).where(
                    S.c.parent_id == session_id, S.c.fork_position > start
                )
            )
        ).all()
        lineage = await self._lineage(session_id) if children else []
        for child_id, fork_position in children:
            copied = select(
                literal(child_id).label("session_id"),
                *[c for c in M.c if c.name != "session_id"],
            ).where(_in_lineage(lineage), M.c.position >= start, M.c.position < fork_position)
            names = ["session_id", *[c.name for c in M.c if c.name != "session_id"]]
            await self._db.execute(insert(M).from_select(names, copied))
            await self._db.execute(update(S).where(S.c.id == child_id).values(fork_position=start))

    async def delete(self, session_id: SessionId, at: datetime) -> bool:
        row = (
            await self._db.execute(
                select(S.c.parent_id, S.c.deleted_at).where(S.c.id == session_id)
            )
        ).first()
        if row is None or row.deleted_at is not None:
            return False
        if await self._has_children(session_id):
            await self._db.execute(update(S).where(S.c.id == session_id).values(deleted_at=at))
            return True
        await self._db.execute(delete(S).where(S.c.id == session_id))
        await self._collect(row.parent_id)
        return True

    async def _has_children(self, session_id: str) -> bool:
        return bool(await self._db.scalar(select(exists().where(S.c.parent_id == session_id))))

    async def _collect(self, session_id: str | None) -> None:
        """Remove deleted ancestors that no fork needs any more."""
        while session_id is not None:
            row = (
                await self._db.execute(
                    select(S.c.parent_id, S.c.deleted_at).where(S.c.id == session_id)
                )
            ).first()
            if row is None or row.deleted_at is None or await self._has_children(session_id):
                return
            await self._db.execute(delete(S).where(S.c.id == session_id))
            session_id = row.parent_id


def _in_lineage(lineage: list[tuple[str, int | None]]):  # type: ignore[no-untyped-def]
    return or_(
        *(
            (M.c.session_id == sid)
            if bound is None
            else ((M.c.session_id == sid) & (M.c.position < bound))
            for sid, bound in lineage
        )
    )

from datetime import datetime
from typing import Any

from sqlalchemy import delete, exists, func, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.lineage import Lineages, in_chain
from adapters.persistence.mappers import (
    USAGE_COLUMNS,
    message_from_row,
    message_to_row,
    session_from_row,
    session_to_row,
    usage_from_row,
)
from application.errors import SessionConflict
from application.ports.session_store import SessionStore
from domain.ids import SessionId
from domain.permission import PermissionOption
from domain.session import Session
from domain.session_changes import (
    MessageAdded,
    SessionChange,
    Setting,
    SettingChanged,
    TakenChanges,
    TitleGiven,
)
from domain.totals import Totals

_REMEMBERED = (PermissionOption.ALLOW_ALWAYS.value, PermissionOption.REJECT_ALWAYS.value)
S, M = tables.sessions, tables.messages


class SqlAlchemySessionStore(SessionStore):
    """Sessions as rows. A fork stores only its own messages and reads its ancestors'
    below its fork position, so forking costs one row whatever the history's length."""

    def __init__(self, db: AsyncSession, lineages: Lineages) -> None:
        self._db = db
        self._lineages = lineages
        # What `save` wrote in this unit of work, to record again if it is not committed.
        self.saved: list[tuple[Session, TakenChanges]] = []

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
        lineage = await self._lineages.chain(session_id, row)
        rows = (
            (await self._db.execute(select(M).where(in_chain(lineage)).order_by(M.c.position)))
            .mappings()
            .all()
        )
        messages = [message_from_row(r) for r in rows]
        return session_from_row(
            row, messages, await self._rejected(session_id), await self._totals(session_id)
        )

    async def _totals(self, session_id: SessionId) -> Totals:
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
        cost = None if row["cost"] is None else float(row["cost"])
        return Totals(spent=usage_from_row(row), cost=cost)

    async def _rejected(self, session_id: SessionId) -> set[str]:
        """The tools of the session's "always reject" answers ("always allow" is kept per
        project)."""
        d = tables.permission_decisions
        rows = await self._db.execute(
            select(d.c.tool_name).where(
                d.c.session_id == session_id, d.c.option == PermissionOption.REJECT_ALWAYS.value
            )
        )
        return {name for (name,) in rows}

    async def add(self, session: Session) -> None:
        session.take_changes()  # the row holds them all
        await self._db.execute(insert(S).values(session_to_row(session)))
        if session.messages:
            await self._db.execute(
                insert(M),
                [message_to_row(session.id, i, m) for i, m in enumerate(session.messages)],
            )

    async def save(self, session: Session) -> None:
        taken = session.take_changes()
        if not taken.changes:
            return
        try:
            await self._write(session, taken.changes)
        except BaseException:
            session.restore_changes(taken)
            raise
        self.saved.append((session, taken))

    async def _write(self, session: Session, changes: tuple[SessionChange, ...]) -> None:
        added = [c for c in changes if isinstance(c, MessageAdded)]
        settings = {c.setting for c in changes if isinstance(c, SettingChanged)}
        given = [c.title for c in changes if isinstance(c, TitleGiven)]
        values: dict[str, Any] = {
            "updated_at": session.updated_at,
            "message_count": session.message_count,
            "version": S.c.version + 1,
        }
        if settings:
            row = session_to_row(session)
            values.update({name: row[name] for s in settings for name in s.fields})
        if given and Setting.TITLE not in settings:
            values["title"] = func.coalesce(S.c.title, given[-1])
        # An overwritten setting is checked against the version this copy knew; appends
        # only against the history's length (a rename elsewhere does not stop a turn).
        check = (
            S.c.version == _known_version(session)
            if settings or not added
            else S.c.message_count == added[0].position
        )
        # PostgreSQL judges the check below on the last committed row without waiting for
        # a write still open on it (this process's own append, say): wait for that first.
        # NO KEY: the lock the UPDATE takes anyway, so inserts referring to the row still
        # go on. (SQLite's BEGIN IMMEDIATE has waited already; it ignores FOR UPDATE.)
        await self._db.execute(
            select(S.c.id).where(S.c.id == session.id).with_for_update(key_share=True)
        )
        stored = (
            await self._db.execute(
                update(S)
                .where(S.c.id == session.id, S.c.deleted_at.is_(None), check)
                .values(values)
                .returning(S.c.version, S.c.title)
            )
        ).first()
        if stored is None:
            raise _conflict(session)
        if added:
            await self._db.execute(
                insert(M), [message_to_row(session.id, c.position, c.message) for c in added]
            )
        session.stored_as(stored.version, stored.title)

    async def fork(self, source: Session, fork: Session) -> None:
        fork.take_changes()  # the row holds them all
        # A copy read at another version than stored (or repaired in memory only: no
        # version), or with appends not stored yet, holds another history than the stored
        # rows: the fork then stores its own, as a repair does.
        shared = await self._db.scalar(select(S.c.version).where(S.c.id == source.id))
        own = shared != source.version or any(isinstance(c, MessageAdded) for c in source.changes)
        row = session_to_row(fork)
        # A fork at an earlier message (its history a prefix of the source's) shares that much.
        row.update(parent_id=source.id, fork_position=0 if own else fork.message_count)
        await self._db.execute(insert(S).values(row))
        if own and fork.messages:
            await self._db.execute(
                insert(M), [message_to_row(fork.id, i, m) for i, m in enumerate(fork.messages)]
            )
        d = tables.permission_decisions
        columns = [c for c in d.c if c.name not in ("id", "session_id")]
        remembered = select(literal(fork.id).label("session_id"), *columns).where(
            d.c.session_id == source.id, d.c.option.in_(_REMEMBERED)
        )
        await self._db.execute(
            insert(d).from_select(["session_id", *[c.name for c in columns]], remembered)
        )

    async def rewrite_history(self, session: Session, start: int) -> None:
        # First, checked: a copy read before another writer's change must not undo it.
        version = await self._db.scalar(
            update(S)
            .where(
                S.c.id == session.id,
                S.c.deleted_at.is_(None),
                S.c.version == _known_version(session),
            )
            .values(message_count=session.message_count, version=S.c.version + 1)
            .returning(S.c.version)
        )
        if version is None:
            raise _conflict(session)
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
        session.stored_as(version, session.title)

    async def _detach_children(self, session_id: str, start: int) -> None:
        """Forks that read this session's messages from `start` on copy them first."""
        children = (
            await self._db.execute(
                select(S.c.id, S.c.fork_position).where(
                    S.c.parent_id == session_id, S.c.fork_position > start
                )
            )
        ).all()
        lineage = await self._lineages.chain(session_id) if children else []
        for child_id, fork_position in children:
            copied = select(
                literal(child_id).label("session_id"),
                *[c for c in M.c if c.name != "session_id"],
            ).where(in_chain(lineage), M.c.position >= start, M.c.position < fork_position)
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
        # Its sub-agents' sessions go with it (each as any session goes: a fork of one
        # keeps what it shares).
        spawned = await self._db.scalars(select(S.c.id).where(S.c.spawned_by == session_id))
        for child_id in spawned.all():
            await self.delete(SessionId(child_id), at)
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


def _known_version(session: Session) -> int:
    """The version a checked write of `session` expects: a copy repaired in memory only
    matches none, so its write is a conflict, as one read before another writer's."""
    if session.version is None:
        raise _conflict(session)
    return session.version


def _conflict(session: Session) -> SessionConflict:
    return SessionConflict(
        "The session was changed elsewhere (another process or replica) since it was "
        "read here; load it again and retry.",
        sessionId=session.id,
        reason="conflict",
    )

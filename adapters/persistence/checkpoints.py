"""File checkpoints in the session store (tables file_checkpoints and checkpoint_blobs)."""

from typing import Any

from sqlalchemy import RowMapping, and_, delete, exists, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import insert_or_ignore
from application.ports.checkpoints import CheckpointStore
from domain.checkpoints import FileCheckpoint, Unrestorable

C = tables.file_checkpoints
B = tables.checkpoint_blobs


def _checkpoint(row: RowMapping) -> FileCheckpoint:
    unrestorable = row["unrestorable"]
    return FileCheckpoint(
        seq=row["seq"],
        message_id=row["message_id"],
        path=row["path"],
        prior=row["prior"],
        after=row["after"],
        unrestorable=None if unrestorable is None else Unrestorable(unrestorable),
    )


class SqlAlchemyCheckpointStore(CheckpointStore):
    def __init__(self, db: AsyncSession) -> None:
        self._db = db

    async def checkpoints(self, session_id: str) -> list[FileCheckpoint]:
        rows = await self._db.execute(
            select(C).where(C.c.session_id == session_id).order_by(C.c.seq)
        )
        return [_checkpoint(row) for row in rows.mappings()]

    async def has(self, session_id: str, message_id: str, path: str) -> bool:
        found = await self._db.scalar(
            select(exists().where(self._one(session_id, message_id, path)))
        )
        return bool(found)

    async def add(self, session_id: str, checkpoint: FileCheckpoint, content: bytes | None) -> None:
        if content is not None:
            blob = {
                "session_id": session_id,
                "state": checkpoint.prior,
                "size": len(content),
                "content": content,
            }  # deduplicated: a state already kept is not stored twice
            await self._db.execute(insert_or_ignore(self._db, B, blob))
        unrestorable = checkpoint.unrestorable
        await self._db.execute(
            C.insert().values(
                session_id=session_id,
                message_id=checkpoint.message_id,
                path=checkpoint.path,
                prior=checkpoint.prior,
                after=checkpoint.after,
                unrestorable=None if unrestorable is None else unrestorable.value,
            )
        )

    async def written(self, session_id: str, message_id: str, path: str, after: str) -> None:
        await self._db.execute(
            update(C).where(self._one(session_id, message_id, path)).values(after=after)
        )

    async def content(self, session_id: str, state: str) -> bytes | None:
        found = await self._db.scalar(
            select(B.c.content).where(B.c.session_id == session_id, B.c.state == state)
        )
        return None if found is None else bytes(found)

    async def stored_bytes(self, session_id: str) -> int:
        total = await self._db.scalar(
            select(func.coalesce(func.sum(B.c.size), 0)).where(B.c.session_id == session_id)
        )
        return int(total or 0)

    async def drop(self, session_id: str, seq: int) -> None:
        state = await self._db.scalar(select(C.c.prior).where(C.c.seq == seq))
        await self._db.execute(
            update(C).where(C.c.seq == seq).values(unrestorable=Unrestorable.DROPPED.value)
        )
        still_kept = exists().where(
            C.c.session_id == session_id, C.c.prior == state, C.c.unrestorable.is_(None)
        )
        await self._db.execute(
            delete(B).where(B.c.session_id == session_id, B.c.state == state, ~still_kept)
        )

    @staticmethod
    def _one(session_id: str, message_id: str, path: str) -> Any:
        return and_(C.c.session_id == session_id, C.c.message_id == message_id, C.c.path == path)

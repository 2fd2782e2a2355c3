"""File checkpoints in the session store (tables file_checkpoints and checkpoint_blobs), and
the last rewind's undo (rewind_undos: its files are JSON `[path, base64 or null, state the
restore left]`, so no migration was needed to add the third)."""

import base64
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, and_, delete, exists, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import insert_or_ignore
from adapters.persistence.mappers import message_from_row, message_to_row
from application.ports.checkpoints import CheckpointStore, StoredUndo
from domain.checkpoints import FileCheckpoint, Unrestorable
from domain.message import Message
from domain.restore import UndoFile

C = tables.file_checkpoints
B = tables.checkpoint_blobs
U = tables.rewind_undos


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

    async def keep_undo(self, session_id: str, undo: StoredUndo) -> None:
        await self.drop_undo(session_id)
        await self._db.execute(
            U.insert().values(
                session_id=session_id,
                token=undo.token,
                position=undo.position,
                to_message_id=undo.to_message_id,
                messages=[_message_json(session_id, m) for m in undo.messages],
                files=[[f.path, _b64(f.content), f.left] for f in undo.files],
            )
        )

    async def undo(self, session_id: str) -> StoredUndo | None:
        row = (await self._db.execute(select(U).where(U.c.session_id == session_id))).first()
        if row is None:
            return None
        return StoredUndo(
            token=row.token,
            position=row.position,
            to_message_id=row.to_message_id,
            messages=tuple(_message_from_json(m) for m in row.messages),
            files=tuple(_undo_file(*kept) for kept in row.files),
        )

    async def drop_undo(self, session_id: str) -> None:
        await self._db.execute(delete(U).where(U.c.session_id == session_id))

    @staticmethod
    def _one(session_id: str, message_id: str, path: str) -> Any:
        return and_(C.c.session_id == session_id, C.c.message_id == message_id, C.c.path == path)


def _message_json(session_id: str, message: Message) -> dict[str, Any]:
    """A message row as JSON (its time as ISO 8601 text)."""
    row = message_to_row(session_id, 0, message)
    row["created_at"] = row["created_at"].isoformat()
    return row


def _message_from_json(data: dict[str, Any]) -> Message:
    return message_from_row({**data, "created_at": datetime.fromisoformat(data["created_at"])})


def _undo_file(path: str, content: str | None, left: str | None = None) -> UndoFile:
    """A file of the undo: `[path, base64 or null, left]`; an undo stored before the state
    the restore left was kept has no `left` (any change since is then a conflict)."""
    return UndoFile(path=path, content=_unb64(content), left=left)


def _b64(content: bytes | None) -> str | None:
    return None if content is None else base64.b64encode(content).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)

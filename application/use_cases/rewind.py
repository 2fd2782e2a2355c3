"""Rewind: take a session's history back to just before one of the user's prompts, and
undo the last rewind while nothing new was prompted.

The cut is stored as a new version of the session (`rewrite_history`), so a load, on any
process, shows it. What was cut is stored beside it in the same transaction (`keep_undo`,
with the restored files' earlier bytes once they are written), so the undo survives a
restart: it is offered until the session is prompted again (its history then no longer ends
where the cut did) or rewound again (which replaces it).

With `files` (RestoreFiles), the files the cut turns changed are put back from their
checkpoints (FileCheckpoints) after the cut; the undo writes them back as they were."""

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

from application.errors import RestoreRefused, RewindConflict, RewindNotUndoable
from application.ports.checkpoints import StoredUndo
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry, TurnControl
from application.use_cases.file_checkpoints import FileCheckpoints, FilesRestored, RestorePlan
from application.use_cases.load_session import replay_events
from application.use_cases.restore_permission import RestorePermission
from application.use_cases.saving import save
from domain.events import SessionRewound
from domain.ids import MessageId
from domain.message import Message
from domain.modes import ModeId
from domain.session import Session


class OnConflict(StrEnum):
    """What a restoring rewind does with files the user changed since the agent did."""

    REFUSE = "refuse"  # nothing is done; the conflicts are answered (RewindConflict)
    FORCE = "force"  # restored all the same
    SKIP = "skip"  # left as they are; the rest is restored


@dataclass(frozen=True, slots=True)
class RestoreFiles:
    """A rewind that puts back the files the cut turns changed."""

    on_conflict: OnConflict = OnConflict.REFUSE


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewound:
    """The history's length after the rewind, and the token that undoes it."""

    message_count: int
    undo_token: str
    files: FilesRestored | None = None  # None: files were kept as they are


class RewindSession:
    """Cut an open, idle session's history back to just before the prompt `to_message_id`.
    Every attached client is told (`SessionRewound`); the undo token is in the answer."""

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        sink: EventSink,
        checkpoints: FileCheckpoints | None = None,  # None: files are only ever kept
        permission: RestorePermission | None = None,  # None: a restore asks nobody
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._sink = sink
        self._checkpoints = checkpoints
        self._permission = permission

    async def execute(
        self,
        session_id: str,
        to_message_id: str,
        *,
        hold: TurnControl | None = None,
        files: RestoreFiles | None = None,
    ) -> Rewound:
        """`hold`: the turn that follows at once (an edited prompt's); the session stays
        busy for it, its caller ends it. `files`: put the files back too (None: keep)."""
        active = self._registry.require(session_id)
        session = active.session
        position = session.prompt_position(to_message_id)
        if files is not None and session.mode_id == ModeId.PLAN:
            raise RestoreRefused(
                "Files cannot be restored in plan mode: it allows no writes. Rewind with "
                'files "keep", or leave plan mode first.',
                sessionId=session.id,
                modeId=session.mode_id,
            )
        control = active.begin_turn(hold)  # busy while a turn runs; no prompt starts meanwhile
        restored: FilesRestored | None = None
        token = secrets.token_urlsafe(12)
        try:
            plan = await self._plan(session, position, files)
            if plan is not None and files is not None:
                await self._permit(session, token, plan, files)
            await save(self._uow, session)  # what was recorded lands before the cut
            cut = session.cut_at(position)
            undo = StoredUndo(token, position, to_message_id, cut)
            await self._rewrite(session, position, undo=lambda: session.put_back(cut), keep=undo)
            if plan is not None and self._checkpoints is not None and files is not None:
                skip = files.on_conflict is OnConflict.SKIP
                restored = await self._checkpoints.restore(session.id, plan, skip=skip)
                await self._keep_files(session.id, undo, restored.previous)
        finally:
            if hold is None:
                active.end_turn(control)
        await self._sink.emit(
            session.id,
            SessionRewound(to_message_id=MessageId(to_message_id), message_count=position),
        )
        return Rewound(message_count=position, undo_token=token, files=restored)

    async def _keep_files(
        self, session_id: str, undo: StoredUndo, previous: tuple[tuple[str, bytes | None], ...]
    ) -> None:
        """The restored files as they were before: the undo writes them back."""
        if not previous:
            return
        async with self._uow as uow:
            await uow.checkpoints.keep_undo(session_id, replace(undo, files=previous))
            await uow.commit()

    async def _permit(
        self, session: Session, token: str, plan: RestorePlan, files: RestoreFiles
    ) -> None:
        """Ask the user (per the session's mode) before the files are written."""
        if self._permission is None or self._checkpoints is None:
            return
        skip = files.on_conflict is OnConflict.SKIP
        changes = await self._checkpoints.changes(session.id, plan, skip=skip)
        await self._permission.check(session, token, changes)

    async def _plan(
        self, session: Session, position: int, files: RestoreFiles | None
    ) -> RestorePlan | None:
        """What restoring the files would do; refused while the user changed some of them
        since the agent did, unless the client said what to do with those."""
        if files is None or self._checkpoints is None:
            return None
        cut = frozenset(message.id for message in session.messages[position:])
        plan = await self._checkpoints.plan(session.id, cut)
        if plan.conflicts and files.on_conflict is OnConflict.REFUSE:
            raise RewindConflict(
                f"{len(plan.conflicts)} file(s) changed since the agent changed them; nothing "
                "was done. Rewind again with force (overwrite them) or skip (leave them).",
                sessionId=session.id,
                conflicts=list(plan.conflicts),
                resolve=["force", "skip"],
            )
        return plan

    async def undo_token(self, session_id: str) -> str | None:
        """The token of the session's last rewind while one is stored (/rewind undo)."""
        async with self._uow.reading() as uow:
            undo = await uow.checkpoints.undo(session_id)
        return None if undo is None else undo.token

    async def undo(self, session_id: str, token: str, *, hold: TurnControl | None = None) -> int:
        """Bring back what the last rewind cut (its history's length after). Refused once
        anything was prompted since, or for another token. `hold`: the turn it runs in (a
        slash command's), which its caller ends."""
        active = self._registry.require(session_id)
        session = active.session
        control = active.begin_turn(hold)
        try:
            undo = await self._undoable(session, token)
            session.put_back(undo.messages)
            await self._rewrite(
                session, undo.position, undo=lambda: session.cut_at(undo.position), keep=None
            )
        finally:
            if hold is None:
                active.end_turn(control)
        if undo.files and self._checkpoints is not None:
            await self._checkpoints.put_back(undo.files)
        await self._sink.emit(
            session.id,
            SessionRewound(
                to_message_id=MessageId(undo.to_message_id),
                message_count=session.message_count,
                undone=True,
            ),
        )
        await self._replay(session, undo.messages)
        return session.message_count

    async def _undoable(self, session: Session, token: str) -> StoredUndo:
        """The stored undo `token` names, while the history still ends where it cut."""
        async with self._uow.reading() as uow:
            undo = await uow.checkpoints.undo(session.id)
        if undo is None or undo.token != token:
            raise RewindNotUndoable(
                f"Session {session.id!r} has no rewind to undo with this token.",
                sessionId=session.id,
                undoToken=token,
            )
        if session.message_count != undo.position:
            async with self._uow as uow:
                await uow.checkpoints.drop_undo(session.id)
                await uow.commit()
            raise RewindNotUndoable(
                f"Session {session.id!r} was prompted since the rewind: it can no longer be "
                "undone.",
                sessionId=session.id,
                undoToken=token,
            )
        return undo

    async def _rewrite(
        self,
        session: Session,
        start: int,
        *,
        undo: Callable[[], object],
        keep: StoredUndo | None,
    ) -> None:
        """Store the history from `start` on, and with it the rewind's undo (`keep`; None:
        the undo is spent and forgotten); on failure the copy in memory is put back."""
        try:
            async with self._uow as uow:
                await uow.sessions.rewrite_history(session, start)
                if keep is None:
                    await uow.checkpoints.drop_undo(session.id)
                else:
                    await uow.checkpoints.keep_undo(session.id, keep)
                await uow.commit()
        except BaseException:
            undo()
            raise

    async def _replay(self, session: Session, messages: tuple[Message, ...]) -> None:
        """The messages that came back, shown as a load shows them."""
        async with self._uow.reading() as uow:
            records = await uow.activity.tool_calls(session.id)
        for event in replay_events(messages, records):
            await self._sink.emit(session.id, event)

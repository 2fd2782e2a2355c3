"""Rewind: take a session's history back to just before one of the user's prompts, and
undo the last rewind while nothing new was prompted.

The cut is stored as a new version of the session (`rewrite_history`), so a load, on any
process, shows it. What was cut is stored beside it in the same transaction (`keep_undo`,
with the files the restore wrote, as they were before and as it left them, once they are
written), so the undo survives a restart: it is offered until the session is prompted again
(its history then no longer ends where the cut did) or rewound again (which replaces it).

With `files` (RestoreFiles), the files the cut turns changed are put back from their
checkpoints after the cut; the undo puts back what that overwrote. Both follow one rule
(domain.restore): files changed since are conflicts (refused, or forced, or skipped), and
nothing is written outside the session's directories or through a symlink; both ask first
where the mode says so (RestorePermission)."""

import secrets
from dataclasses import dataclass, replace

from application.checkpoints.restoring import (
    FileRestorer,
    FilesRestored,
    PlannedRestore,
    RestorePlan,
)
from application.errors import RewindConflict
from application.history.saving import save
from application.ports.checkpoints import StoredUndo
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.rewind.history_cut import HistoryCut
from application.rewind.restore_permission import RestoreCall, RestorePermission
from application.runtime.registry import SessionRegistry
from application.runtime.turn_control import TurnControl
from domain.events import SessionRewound
from domain.ids import MessageId, ToolCallId
from domain.restore import OnConflict as OnConflict  # the protocol's params import it here
from domain.restore import UndoFile
from domain.session import Session


@dataclass(frozen=True, slots=True)
class RestoreFiles:
    """A rewind (or undo) that puts back the files."""

    on_conflict: OnConflict = OnConflict.REFUSE


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewound:
    """The history's length after the rewind, and the token that undoes it."""

    message_count: int
    undo_token: str
    files: FilesRestored | None = None  # None: files were kept as they are


@dataclass(frozen=True, slots=True, kw_only=True)
class Undone:
    """The history's length after the undo, and the files it put back (None: the rewind
    restored none)."""

    message_count: int
    files: FilesRestored | None = None


class RewindSession:
    """Cut an open, idle session's history back to just before the prompt `to_message_id`.
    Every attached client is told (`SessionRewound`); the undo token is in the answer."""

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        sink: EventSink,
        restorer: FileRestorer,
        permission: RestorePermission,
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._sink = sink
        self._restorer = restorer
        self._permission = permission
        self._history = HistoryCut(uow=uow, sink=sink)

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
        token = secrets.token_urlsafe(12)
        call = RestoreCall(
            id=ToolCallId(f"rewind_restore_{token}"),
            title="Restore {count} file(s) as they were before the prompt",
        )
        if files is not None:
            await self._permission.check(session, call)  # plan mode refuses before planning
        control = active.begin_turn(hold)  # busy while a turn runs; no prompt starts meanwhile
        restored: FilesRestored | None = None
        try:
            planned = await self._permitted(session, call, files, cut_from=position)
            await save(self._uow, session)  # what was recorded lands before the cut
            cut = session.cut_at(position)
            undo = StoredUndo(token, position, to_message_id, cut)
            await self._history.store(
                session, position, undo=lambda: session.put_back(cut), keep=undo
            )
            if planned is not None:
                restored = await self._restorer.apply(session, planned)
                await self._keep_files(session.id, undo, restored.undo)
        finally:
            if hold is None:
                active.end_turn(control)
        await self._sink.emit(
            session.id,
            SessionRewound(to_message_id=MessageId(to_message_id), message_count=position),
        )
        return Rewound(message_count=position, undo_token=token, files=restored)

    async def undo_token(self, session_id: str) -> str | None:
        """The token of the session's last rewind while one is stored (/rewind undo)."""
        async with self._uow.reading() as uow:
            undo = await uow.checkpoints.undo(session_id)
        return None if undo is None else undo.token

    async def undo(self, session_id: str, token: str, *, hold: TurnControl | None = None) -> int:
        """`undo_rewind` refusing conflicts; the history's length after (what the protocol
        answers today)."""
        return (await self.undo_rewind(session_id, token, hold=hold)).message_count

    async def undo_rewind(
        self,
        session_id: str,
        token: str,
        *,
        hold: TurnControl | None = None,
        files: RestoreFiles = RestoreFiles(),
    ) -> Undone:
        """Bring back what the last rewind cut, and the files its restore overwrote (those
        changed since are conflicts, as for a rewind: `files` says what to do with them).
        Refused once anything was prompted since, or for another token. `hold`: the turn it
        runs in (a slash command's), which its caller ends."""
        active = self._registry.require(session_id)
        session = active.session
        control = active.begin_turn(hold)
        restored: FilesRestored | None = None
        try:
            undo = await self._history.undoable(session, token)
            call = RestoreCall(
                id=ToolCallId(f"rewind_undo_{token}"),
                title="Put back {count} file(s) as they were before the rewind",
            )
            planned = await self._undo_planned(session, call, undo.files, files)
            session.put_back(undo.messages)
            await self._history.store(
                session, undo.position, undo=lambda: session.cut_at(undo.position), keep=None
            )
            if planned is not None:
                restored = await self._restorer.apply(session, planned)
        finally:
            if hold is None:
                active.end_turn(control)
        await self._history.told_undone(session, undo)
        return Undone(message_count=session.message_count, files=restored)

    async def _permitted(
        self, session: Session, call: RestoreCall, files: RestoreFiles | None, *, cut_from: int
    ) -> PlannedRestore | None:
        """What restoring the cut turns' files does, once allowed; None: files kept."""
        if files is None:
            return None
        cut = frozenset(message.id for message in session.messages[cut_from:])
        plan = await self._restorer.plan(session, cut)
        return await self._allowed(session, call, plan, files)

    async def _undo_planned(
        self,
        session: Session,
        call: RestoreCall,
        undone: tuple[UndoFile, ...],
        files: RestoreFiles,
    ) -> PlannedRestore | None:
        """What putting back the restore's files does, once allowed; None: it wrote none."""
        if not undone:
            return None
        await self._permission.check(session, call)  # plan mode refuses before planning
        plan = await self._restorer.plan_undo(session, undone)
        return await self._allowed(session, call, plan, files)

    async def _allowed(
        self, session: Session, call: RestoreCall, plan: RestorePlan, files: RestoreFiles
    ) -> PlannedRestore:
        """The restore's steps; refused while the user changed files since the agent (or
        the restore) did, unless the client said what to do with those; asked about (per
        the mode) with every path it will write or remove."""
        if plan.conflicts and files.on_conflict is OnConflict.REFUSE:
            raise RewindConflict(
                f"{len(plan.conflicts)} file(s) changed since the agent changed them; nothing "
                "was done. Ask again with force (overwrite them) or skip (leave them).",
                sessionId=session.id,
                conflicts=list(plan.conflicts),
                resolve=["force", "skip"],
            )
        planned = plan.decided(files.on_conflict)
        changes = await self._restorer.changes(session.id, planned)
        await self._permission.check(session, call, changes)
        return planned

    async def _keep_files(
        self, session_id: str, undo: StoredUndo, files: tuple[UndoFile, ...]
    ) -> None:
        """The files the restore wrote, as they were before and as it left them: the undo
        puts them back."""
        if not files:
            return
        async with self._uow as uow:
            await uow.checkpoints.keep_undo(session_id, replace(undo, files=files))
            await uow.commit()
